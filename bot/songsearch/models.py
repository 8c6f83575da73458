"""One search result, as far as OnAir uses it: checked, bounded, frozen."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SongHit:
    """A song the search found: its id on the service (a positive whole number), artist,
    title, album and artwork (an https URL at 600x600, or None)."""

    track_id: int
    artist: str
    title: str
    album: str = ""
    artwork: str | None = None
