"""The plays OnAir recorded, as the recent plays of a host that keeps no history of its own."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime

from ..station import RecentItem, StationInfo
from ..storage import Storage
from ..storage.models import HistoryEntry

HEARD = 20  # plays read back: /recent shows at most this many


def with_recorded_plays(info: StationInfo, entries: Sequence[HistoryEntry]) -> StationInfo:
    """``info`` whose ``recent`` lists ``entries`` (newest first, as OnAir heard them: the one
    on air is recorded at each poll, so it comes first). A host's own ``recent`` is kept."""
    if info.recent:
        return info
    items = tuple(
        RecentItem(
            title=f"{e.artist} - {e.title}" if e.artist else e.title,
            track_title=e.title,
            track_artist=e.artist,
            started=e.started,
        )
        for e in entries
    )
    return dataclasses.replace(info, recent=items)


async def with_plays_heard(storage: Storage, slug: str, info: StationInfo) -> StationInfo:
    """``info`` with the plays OnAir recorded of station ``slug`` as its ``recent``, the one
    on air first (for a host that keeps no history: its own ``recent`` would be kept)."""
    until = max(datetime.now(UTC), info.fetched_at)
    return with_recorded_plays(info, await storage.play_at(slug, until, HEARD))
