"""The playlist answer: entries in play order, their date-less clock times placed on a day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo
from typing import Any

from . import coerce as c
from .info import TrackTags
from .parsing import require_object, track_fields


@dataclass(frozen=True, slots=True)
class PlaylistItem(TrackTags):
    """One playlist entry. Every member arrives as a string."""

    index: int | None = None
    playlist_index: int | None = None
    start_time: time | None = None
    starts_at: datetime | None = None
    ft_idx: int | None = None
    item_type: str | None = None
    pqueue: int | None = None

    @property
    def played(self) -> bool:
        return (self.item_type or "").upper() == "TRACK_PLAYED"

    @property
    def display(self) -> str:
        if self.title:
            return f"{self.artist} - {self.title}" if self.artist else self.title
        return self.cast_title or self.file_name or "(untitled)"

    @classmethod
    def parse(cls, value: Any, zone: tzinfo, now: datetime) -> PlaylistItem | None:
        raw = c.mapping(value)
        if not raw:
            return None
        start = c.clock_time(raw.get("STARTTIME"))
        return cls(
            index=c.integer(raw.get("INDEX")),
            playlist_index=c.integer(raw.get("PLAYLISTINDEX")),
            start_time=start,
            starts_at=anchor_clock_time(start, zone, now) if start else None,
            **track_fields(raw, zone),
            ft_idx=c.integer(raw.get("FT_IDX")),
            item_type=c.text(raw.get("ITEMTYPE")),
            pqueue=c.integer(raw.get("PQUEUE")),
        )


def anchor_clock_time(value: time, zone: tzinfo, now: datetime) -> datetime:
    """A date-less station clock time, placed on the day that puts it nearest to ``now``."""
    local_now = now.astimezone(zone)
    candidates = [
        datetime.combine(local_now.date() + timedelta(days=shift), value, tzinfo=zone)
        for shift in (-1, 0, 1)
    ]
    return min(candidates, key=lambda moment: abs(moment - local_now))


@dataclass(frozen=True, slots=True)
class Playlist:
    items: tuple[PlaylistItem, ...] = ()
    fetched_at: datetime | None = None

    @classmethod
    def parse(cls, payload: Any, zone: tzinfo, fetched_at: datetime) -> Playlist:
        raw = require_object(payload, "a playlist")
        items = tuple(
            item
            for item in (
                PlaylistItem.parse(v, zone, fetched_at) for v in c.as_list(raw.get("TRACK"))
            )
            if item
        )
        return cls(items=items, fetched_at=fetched_at)
