"""A station's schedule of shows, as its host publishes it (hosts with ``Feature.SCHEDULE``).

A show's ``slot`` names one airing of one schedule entry and stays the same when the entry's
time moves within its day: a host runs an entry at most once a day (AzuraCast's rules are per
day of the week), so the entry and the day of its start in the station's zone are the airing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from . import coerce as c

STREAMER, PLAYLIST = "streamer", "playlist"
MAX_SHOWS = 500  # entries kept of one answer (a week of hourly playlists and then some)
_TEXT = 300


@dataclass(frozen=True, slots=True)
class ScheduledShow:
    """One entry of a station's schedule: a playlist's or a streamer's (a live DJ's) slot,
    ongoing (``is_now``) or upcoming."""

    id: int | None
    type: str  # STREAMER or PLAYLIST
    name: str
    title: str
    description: str | None
    start: datetime
    end: datetime | None
    is_now: bool
    day: str = ""  # the start's date in the station's zone (YYYY-MM-DD)

    @property
    def is_live_show(self) -> bool:
        """A streamer's slot: a DJ broadcasts live (a playlist's slot is the AutoDJ)."""
        return self.type == STREAMER

    @property
    def slot(self) -> str:
        """This airing of its entry, unchanged when its time moves within the day."""
        day = self.day or self.start.astimezone(UTC).date().isoformat()
        entry = str(self.id) if self.id is not None else self.title.casefold()[:100]
        return f"{self.type}:{entry}:{day}"


def to_json(shows: Iterable[ScheduledShow]) -> str:
    """Shows as JSON text (how a fleet shares one fetch through storage)."""
    return json.dumps(
        [
            {
                "id": s.id,
                "type": s.type,
                "name": s.name,
                "title": s.title,
                "description": s.description,
                "start": s.start.timestamp(),
                "end": s.end.timestamp() if s.end is not None else None,
                "is_now": s.is_now,
                "day": s.day,
            }
            for s in shows
        ],
        separators=(",", ":"),
    )


def from_json(text: str) -> tuple[ScheduledShow, ...]:
    """What :func:`to_json` wrote; anything unreadable is left out."""
    try:
        items = json.loads(text)
    except (ValueError, RecursionError):
        return ()
    shows = []
    for raw in c.as_list(items)[:MAX_SHOWS]:
        show = _read(c.mapping(raw))
        if show is not None:
            shows.append(show)
    return tuple(shows)


def _read(raw: Any) -> ScheduledShow | None:
    start = _moment(raw.get("start"))
    title = _text(raw.get("title"))
    if start is None or not title:
        return None
    end = _moment(raw.get("end"))
    return ScheduledShow(
        id=c.integer(raw.get("id")),
        type=(_text(raw.get("type")) or PLAYLIST)[:20],
        name=_text(raw.get("name")) or title,
        title=title,
        description=_text(raw.get("description")),
        start=start,
        end=end if end is not None and end >= start else None,
        is_now=raw.get("is_now") is True,
        day=(_text(raw.get("day")) or "")[:10],
    )


def _text(value: Any) -> str | None:
    found = c.text(value) if isinstance(value, str) else None
    return found[:_TEXT] if found else None


def _moment(value: Any) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        return None
