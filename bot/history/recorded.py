"""The plays OnAir recorded, as the recent plays of a host that keeps no history of its own."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ..station import RecentItem, StationInfo
from ..storage.models import HistoryEntry


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
