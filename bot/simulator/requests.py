"""A simulated station's song requests: search, request and queue in the field notes' shapes.

An accepted request plays soon: it takes the next free slot of the programme after what is on
air (and after the requests before it), so the whole path from ``/request`` to the credited
announcement runs against the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .library import TRACKS, LibraryItem
from .programme import Programme

# The answer shapes a station may use (field notes): ids as numbers or strings, a bare list
# of tracks for a search, ``success`` instead of ``error`` for a request.
REQUEST_SHAPES = frozenset({"numbers", "strings", "bare_list", "success_key"})
FIRST_ID = 1001


@dataclass
class RequestDesk:
    """The request rules of one simulated station, switchable at run time."""

    programme: Programme
    library: tuple[LibraryItem, ...] = TRACKS
    off: bool = False  # requests turned off: ``error: true`` to everything
    shape: str = "numbers"
    refusal: str | None = None  # every request refused with this reason ...
    refusal_key: str = "message"  # ... under this member ("message" or "errdetail")
    recent: int = 3  # a track aired within the last this many plays is refused
    limit: int = 50  # search results at most
    # A track already waiting is accepted again (queued once): some stations let every
    # listener ask for the same song.
    duplicates: bool = False
    # (airing number, item) of every accepted request, oldest first.
    accepted: list[tuple[int, LibraryItem]] = field(default_factory=list)

    def track_id(self, index: int) -> int | str:
        ident = FIRST_ID + index
        return str(ident) if self.shape == "strings" else ident

    def _off(self) -> dict[str, Any]:
        return {"error": True, "errdetail": "Song requests are disabled on this station"}

    def search(self, query: str) -> Any:
        if self.off:
            return self._off()
        words = query.casefold().split()
        if len(query.strip()) < 3 or not words:
            return {"error": True, "message": "Type at least 3 characters"}
        tracks = [
            {"id": self.track_id(index), "title": item.cast_title}
            for index, item in enumerate(self.library)
            if all(word in item.cast_title.casefold() for word in words)
        ][: self.limit]
        if self.shape == "bare_list":
            return tracks
        if not tracks:
            return {"error": True, "message": "Nothing found"}
        return {"error": False, "tracks": tracks}

    def _item(self, raw: str) -> LibraryItem | None:
        try:
            index = int(raw.strip()) - FIRST_ID
        except ValueError:
            return None
        return self.library[index] if 0 <= index < len(self.library) else None

    def make(self, raw_id: str, now: int) -> dict[str, Any]:
        """Ask for the track ``raw_id`` while airing ``now`` is on air."""
        if self.off:
            return self._off()
        item = self._item(raw_id)
        if item is None:
            return {"error": True, "errdetail": "Track not found"}
        if self.refusal is not None:
            return {"error": True, self.refusal_key: self.refusal}
        if any(number > now and queued == item for number, queued in self.accepted):
            if self.duplicates:
                return {"success": True} if self.shape == "success_key" else {"error": False}
            return {"error": True, "message": "This song has already been requested"}
        aired = (self.programme.airing(now - back).item for back in range(self.recent))
        if item in aired:
            return {"error": True, "message": "This song was played recently"}
        after = max([now, *(number for number, _ in self.accepted if number > now)])
        self.accepted.append((self.programme.insert(item, after), item))
        return {"success": True} if self.shape == "success_key" else {"error": False}

    def listing(self, count: int, now: int) -> Any:
        if self.off:
            return self._off()
        newest = list(reversed(self.accepted))[: max(0, count)]
        return [{"title": item.cast_title, "played": number <= now} for number, item in newest]
