"""Which items are jingles: left out of "Next" lines and, unless asked for, the playlist.

A jingle is an item shorter than :data:`JINGLE_SECONDS` (station IDs, sweepers, short ads), or
one the guild's announcement settings skip (their item types and skip patterns): what a server
does not want announced it does not want listed as "Next" either. Live items (length 0) never
are. Pure logic on plain values: no clock, no Discord.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from ..guard.patterns import matches
from ..storage import Subscription

JINGLE_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class SkipRules:
    """The skip settings that apply: item types (upper case) and skip patterns."""

    item_types: frozenset[str] = frozenset()
    patterns: tuple[str, ...] = ()

    @classmethod
    def of(cls, subs: Iterable[Subscription]) -> SkipRules:
        """The settings of one subscription, or of all a guild has for a station together."""
        subs = list(subs)
        return cls(
            frozenset(t.upper() for s in subs for t in s.skip_item_types),
            tuple(sorted({s.skip_pattern for s in subs if s.skip_pattern})),
        )


NO_RULES = SkipRules()


def is_jingle(
    duration: timedelta | None,
    texts: Iterable[str | None],
    item_type: str | None = None,
    rules: SkipRules = NO_RULES,
) -> bool:
    """Whether an item is a jingle: shorter than 30 s (but not 0: a live item), or of a skipped
    item type, or with a title or file name that a skip pattern matches."""
    if duration is not None and 0 < duration.total_seconds() < JINGLE_SECONDS:
        return True
    if item_type and item_type.upper() in rules.item_types:
        return True
    return any(matches(p, text) for p in rules.patterns for text in texts if text)
