"""What every station model's parser shares: the parse memo, the top-level object check and the
members a track-info object and a playlist entry have in common (``info.TrackTags``). Parsers
never raise anything but ``StationResponseError``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import tzinfo
from typing import Any, TypeVar

from . import coerce as c
from .errors import Problem, StationResponseError

T = TypeVar("T")

ParseMemo = dict[str, tuple[str, Any]]


def memoised(memo: ParseMemo | None, name: str, raw: Any, build: Callable[[], T]) -> T:
    """``build()``, or the value built last time when the raw input reads the same as last time.

    The memo keeps ``repr(raw)``, a string, not the raw JSON: strings are invisible to the
    garbage collector, so 500 stations' memos do not lengthen full collections.
    """
    if memo is None:
        return build()
    fingerprint = repr(raw)
    hit = memo.get(name)
    if hit is not None and hit[0] == fingerprint:
        cached: T = hit[1]
        return cached
    value = build()
    memo[name] = (fingerprint, value)
    return value


def require_object(payload: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(payload, Mapping):
        raise StationResponseError(Problem.WRONG_SHAPE, what=what)
    return payload


def track_fields(raw: Mapping[str, Any], zone: tzinfo) -> dict[str, Any]:
    """The members a track-info object and a playlist entry share, parsed one way for both."""
    return {
        "artist": c.text(raw.get("ARTIST")),
        "title": c.text(raw.get("TITLE")),
        "album": c.text(raw.get("ALBUM")),
        "year": c.text(raw.get("YEAR")),
        "genre": c.text(raw.get("GENRE")),
        "comment": c.text(raw.get("COMMENT")),
        "filename": c.text(raw.get("FILENAME")),
        "duration": c.duration(raw.get("DURATION")),
        "play_count": c.integer(raw.get("PLAYCOUNT")),
        "last_played": c.local_datetime(raw.get("LASTPLAYED"), zone),
        # Seconds as a decimal in track info, MM:SS in the playlist: one type in both.
        "intro": c.duration(raw.get("INTRO")),
        "outro": c.duration(raw.get("OUTRO")),
        "language": c.text(raw.get("LANGUAGE")),
        "rating": c.integer(raw.get("RATING")),
        "bpm": c.text(raw.get("BPM")),
        "custom": tuple(c.text(raw.get(f"F{i}")) for i in range(1, 6)),
        "cast_title": c.text(raw.get("CASTTITLE")),
    }
