"""Coercions for the values real station responses carry (see shared/spec/field-notes.md).

Each function takes any JSON value and returns a typed value or ``None``; none of them raises.
Hostile numbers (thousands of digits, past float range, NaN) are unknowns: integers beyond
:data:`MAX_INT` and durations beyond :data:`MAX_DURATION` read as ``None``, and numeric strings
longer than :data:`MAX_NUMBER_CHARS` are not converted at all (``int()`` of a long string is
quadratic and raises past Python's digit limit).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Any

MAX_INT = 2**53  # exact in a float, far above any count a station reports
MAX_NUMBER_CHARS = 64
MAX_DURATION = timedelta(days=366)
_MISSING = frozenset({"", "n/a", "na", "none", "null", "-"})
_MMSS = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d{1,2})(?:\.\d+)?\s*$")
_CLOCK12 = re.compile(r"^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*([AaPp])\.?[Mm]\.?\s*$")
_CLOCK24 = re.compile(r"^\s*(\d{1,2}):(\d{2})(?::(\d{2}))?\s*$")


def text(value: Any) -> str | None:
    """A trimmed string, or None for missing markers (``""``, ``"n/a"``, ``{}``, ``[]``, null)."""
    if type(value) is str:  # the common case first: every poll parses a few hundred of these
        stripped = value.strip()
        if len(stripped) <= 4 and stripped.lower() in _MISSING:
            return None
        return stripped
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value) if abs(value) <= MAX_INT else None
    if isinstance(value, float):
        if not math.isfinite(value) or abs(value) > MAX_INT:
            return None
        return str(int(value)) if value.is_integer() else str(value)
    if not isinstance(value, str):
        return None
    stripped = value.strip()
    if stripped.lower() in _MISSING:
        return None
    return stripped


def _bounded(value: int) -> int | None:
    return value if -MAX_INT <= value <= MAX_INT else None


def integer(value: Any) -> int | None:
    """An int from a number or numeric string (``"12"``, ``"12.0"``, ``12``); None past
    :data:`MAX_INT`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return _bounded(value)
    if isinstance(value, float):
        return _bounded(int(value)) if math.isfinite(value) and abs(value) <= MAX_INT else None
    raw = text(value)
    if raw is None or len(raw) > MAX_NUMBER_CHARS:
        return None
    try:
        return _bounded(int(raw))
    except ValueError:
        try:
            number = float(raw)
        except ValueError:
            return None
        return _bounded(int(number)) if math.isfinite(number) and abs(number) <= MAX_INT else None


def number(value: Any) -> float | None:
    """A finite float from a number or numeric string; None past :data:`MAX_INT`."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return float(value) if abs(value) <= MAX_INT else None
    if isinstance(value, float):
        return value if math.isfinite(value) and abs(value) <= MAX_INT else None
    raw = text(value)
    if raw is None or len(raw) > MAX_NUMBER_CHARS:
        return None
    try:
        result = float(raw.replace(",", "."))
    except ValueError:
        return None
    return result if math.isfinite(result) and abs(result) <= MAX_INT else None


def boolean(value: Any) -> bool | None:
    """A bool from JSON booleans, 0/1 and the usual strings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return bool(value)
    raw = text(value)
    if raw is None:
        return None
    lowered = raw.lower()
    if lowered in {"true", "yes", "on", "1"}:
        return True
    if lowered in {"false", "no", "off", "0"}:
        return False
    return None


def duration(value: Any) -> timedelta | None:
    """``MM:SS`` (minutes may exceed 59), ``H:MM:SS``, or plain seconds; None past
    :data:`MAX_DURATION` or below zero."""
    raw = text(value)
    if raw is None or len(raw) > MAX_NUMBER_CHARS:
        return None
    match = _MMSS.match(raw)
    if match:
        hours = int(match.group(1)) if match.group(1) else 0
        minutes, seconds = int(match.group(2)), int(match.group(3))
        total = hours * 3600 + minutes * 60 + seconds
        if seconds >= 60 or total > MAX_DURATION.total_seconds():
            return None
        return timedelta(seconds=total)
    seconds_value = number(raw)
    if seconds_value is None or not 0 <= seconds_value <= MAX_DURATION.total_seconds():
        return None
    return timedelta(seconds=seconds_value)


def milliseconds(value: Any) -> timedelta | None:
    """``playback.pos``/``playback.len`` are milliseconds; negative values mean unknown."""
    amount = number(value)
    if amount is None or not 0 <= amount <= MAX_DURATION.total_seconds() * 1000:
        return None
    return timedelta(milliseconds=amount)


def local_datetime(value: Any, zone: tzinfo) -> datetime | None:
    """``YYYY-MM-DD HH:MM:SS`` with no zone, read in the station's zone; returned zone-aware."""
    raw = text(value)
    if raw is None:
        return None
    try:
        parsed = datetime.fromisoformat(raw.replace("/", "-"))
    except ValueError:
        return None
    if parsed.year < 1971:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    return parsed


def iso_date(value: Any) -> date | None:
    """``YYYY-MM-DD``."""
    raw = text(value)
    if raw is None:
        return None
    try:
        return date.fromisoformat(raw[:10])
    except ValueError:
        return None


def clock_time(value: Any) -> time | None:
    """``H:MM:SS AM|PM`` (12-hour clock); a 24-hour ``HH:MM:SS`` is accepted too."""
    raw = text(value)
    if raw is None:
        return None
    match = _CLOCK12.match(raw)
    if match:
        hour, minute = int(match.group(1)), int(match.group(2))
        second = int(match.group(3) or 0)
        if not 1 <= hour <= 12 or minute > 59 or second > 59:
            return None
        hour %= 12
        if match.group(4).lower() == "p":
            hour += 12
        return time(hour, minute, second)
    match = _CLOCK24.match(raw)
    if match:
        hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
        if hour > 23 or minute > 59 or second > 59:
            return None
        return time(hour, minute, second)
    return None


def as_list(value: Any) -> list[Any]:
    """XML-to-JSON collapses one-element lists into a bare object, empty ones into ``{}``/``""``."""
    if isinstance(value, list):
        return value
    if isinstance(value, Mapping):
        return [value] if value else []
    return []


def mapping(value: Any) -> Mapping[str, Any]:
    """A JSON object, or an empty mapping for anything else (``[]`` is how empty objects come)."""
    if isinstance(value, Mapping):
        return value
    return {}


def attributes(value: Any) -> Mapping[str, Any]:
    """The ``@attributes`` member of a track-info object; ``{}``/``[]`` mean no track."""
    outer = mapping(value)
    inner = outer.get("@attributes", outer)
    return mapping(inner)


def file_base_name(path: str | None) -> str | None:
    """Display name of a station file: backslash or slash separated, maybe ``~files`` prefixed."""
    if not path:
        return None
    parts = [part for part in re.split(r"[\\/]+", path) if part and part != "~files"]
    if not parts:
        return None
    return parts[-1]
