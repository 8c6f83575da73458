"""Secrets from a ``.env`` file in the working directory, as compose and systemd read it.

``onair run`` and the other commands that read secrets from the environment take what ``.env``
adds; a variable already in the environment always wins (the file never overrides it). The
format is the common subset of compose's and systemd's: ``NAME=value`` lines, optionally after
``export``; ``#`` starts a comment line (and, after a space, a comment at the end of an unquoted
value); values may be quoted with ``'`` (taken as is) or ``"`` (``\\"``, ``\\\\`` and ``\\n``
unescaped). No ``${VAR}`` expansion and no multi-line values. Values are never printed: a line
that cannot be read is named by its number only.
"""

from __future__ import annotations

import os
import re
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from pathlib import Path

ENV_FILE_ENV = "ONAIR_ENV_FILE"  # another file to read; "" reads none
DEFAULT_ENV_FILE = ".env"
PLACEHOLDER = "replace-with-"  # how every value of .env.example begins
_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n"}


def is_placeholder(value: str) -> bool:
    """A value copied from .env.example and never filled in."""
    return value.strip().lower().startswith(PLACEHOLDER)


def placeholder_line(name: str, what: str) -> str:
    """The one line for a variable still holding .env.example's placeholder (not its value)."""
    return f"{name} is still the placeholder from .env.example: put {what} there"


class _BadValue(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class EnvFile:
    """What a file holds: its variables in order, and the numbers of lines that are not
    ``NAME=value`` (ignored)."""

    values: dict[str, str] = field(default_factory=dict)
    bad_lines: tuple[int, ...] = ()


def _unquote(raw: str) -> str:
    if raw[:1] not in ("'", '"'):
        comment = re.search(r"\s#", raw)
        return (raw[: comment.start()] if comment else raw).strip()
    quote, index = raw[0], 1
    out: list[str] = []
    while index < len(raw):
        char = raw[index]
        if char == quote:
            rest = raw[index + 1 :].strip()
            if rest and not rest.startswith("#"):
                raise _BadValue("text after the closing quote")
            return "".join(out)
        if quote == '"' and char == "\\" and raw[index + 1 : index + 2] in _ESCAPES:
            out.append(_ESCAPES[raw[index + 1]])
            index += 2
            continue
        out.append(char)
        index += 1
    raise _BadValue("no closing quote")


def parse_env_file(text: str) -> EnvFile:
    """The variables of ``.env`` text; a later line of the same name wins, as in a shell."""
    values: dict[str, str] = {}
    bad: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = _LINE.match(stripped)
        if match is None:
            bad.append(number)
            continue
        try:
            value = _unquote(match.group(2))
        except _BadValue:
            bad.append(number)
            continue
        if "\x00" in value:  # no environment variable can hold it
            bad.append(number)
            continue
        values[match.group(1)] = value
    return EnvFile(values, tuple(bad))


@dataclass(frozen=True, slots=True)
class Loaded:
    """What loading did: the file read ("" for none), the names it set, the lines it ignored,
    and why it could not be read (None when it could, or when there was no file)."""

    path: str = ""
    names: tuple[str, ...] = ()
    bad_lines: tuple[int, ...] = ()
    problem: str | None = None
    missing: bool = False  # ONAIR_ENV_FILE named a file that does not exist

    def error(self) -> str | None:
        """The line that stops the command: a file the owner named on purpose is not there
        (its secrets would silently be missing, or be taken from elsewhere)."""
        if not self.missing:
            return None
        return (
            f"{ENV_FILE_ENV} names {self.path}, which does not exist (fix the path; unset "
            f'{ENV_FILE_ENV} to read .env in the working directory, or set it to "" to read none)'
        )

    def warnings(self) -> list[str]:
        """One line per problem, for stderr; never a value."""
        if self.missing:
            return []
        if self.problem is not None:
            return [f"cannot read {self.path}: {self.problem}; its variables are not used"]
        return [f"{self.path} line {n}: expected NAME=value; ignored" for n in self.bad_lines]


def load_env_file(environ: MutableMapping[str, str] | None = None) -> Loaded:
    """Add the variables of ``$ONAIR_ENV_FILE`` (default ``.env`` in the working directory) that
    ``environ`` does not have yet. A missing ``.env`` is no problem: it is optional; a missing
    file that ``ONAIR_ENV_FILE`` names is (``Loaded.error``)."""
    environ = os.environ if environ is None else environ
    name = environ.get(ENV_FILE_ENV, DEFAULT_ENV_FILE)
    if not name:
        return Loaded()
    path = Path(name)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark (Notepad) is not a name
    except FileNotFoundError:
        # .env is optional; a file ONAIR_ENV_FILE names is not
        return Loaded(name, missing=True) if ENV_FILE_ENV in environ else Loaded()
    except UnicodeDecodeError:
        return Loaded(name, problem="not UTF-8 text")
    except OSError as error:
        return Loaded(name, problem=error.strerror or type(error).__name__)
    parsed = parse_env_file(text)
    added = tuple(key for key in parsed.values if key not in environ)
    for key in added:
        environ[key] = parsed.values[key]
    return Loaded(name, added, parsed.bad_lines)
