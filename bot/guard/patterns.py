"""Skip patterns that guild admins and the owner write: compiled and run with RE2.

RE2 matches in time linear in the input and refuses the features that need backtracking
(backreferences, lookaround), so no pattern can stall the event loop. Patterns are bounded in
length and RE2 in memory; titles are clipped before matching.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any

import re2

from ..errors import BadInput

MAX_PATTERN_CHARS = 200
MAX_SUBJECT_CHARS = 1024
_MAX_MEM = 1 << 20  # RE2's program and DFA budget per pattern (bytes)
_LOGGER = logging.getLogger("onair.patterns")


class UnsafePattern(BadInput):
    """A skip pattern OnAir refuses to run."""


def _options() -> Any:
    options = re2.Options()
    options.case_sensitive = False
    options.max_mem = _MAX_MEM
    options.log_errors = False  # a refused pattern is the user's error, not a log line
    return options


def compile_pattern(pattern: str) -> Any:
    """The compiled pattern, or :class:`UnsafePattern` with a message fit for the user."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UnsafePattern(
            f"That pattern is too long; keep it to {MAX_PATTERN_CHARS} characters or fewer."
        )
    try:
        return re2.compile(pattern, _options())
    except re2.error:
        raise UnsafePattern(
            "That pattern uses a feature OnAir can't run safely (backreferences/lookaround) "
            "or is not a valid regular expression; use plain alternatives like `^(Jingle|Ad) `."
        ) from None


@lru_cache(maxsize=512)
def _cached(pattern: str) -> Any | None:
    try:
        return compile_pattern(pattern)
    except UnsafePattern:
        # A pattern stored before these rules: ignored rather than crashing, said once (the
        # cache) so the owner knows why that channel's skips stopped working.
        _LOGGER.warning(
            "skip pattern %r is ignored: OnAir cannot run it safely (set it again with "
            "/onair announce)",
            pattern[:80],
        )
        return None


def matches(pattern: str, text: str) -> bool:
    """Whether ``pattern`` occurs in the first :data:`MAX_SUBJECT_CHARS` of ``text``."""
    regex = _cached(pattern)
    return regex is not None and regex.search(text[:MAX_SUBJECT_CHARS]) is not None
