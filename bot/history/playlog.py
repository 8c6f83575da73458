"""The play history, written whenever a station is polled for any reason.

`/history` must work for every station a guild can use, not only for stations some channel
announces. So every fresh ``info`` a station client fetches (a command's, or a watch's poll) is
offered here, and each new play is stored once: a play equal to one of the last few seen is
skipped in memory (no database call per poll), and storage skips it again when one of the
station's newest stored plays is the same play (another writer or an earlier run stored it).
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict, deque

from ..station import Play, StationInfo
from ..storage import Storage

_LOGGER = logging.getLogger("onair.playlog")
REMEMBERED = 4  # plays kept per station: a station flapping between two titles adds no rows


class PlayRecorder:
    """Records each station's new plays into storage (called after each successful ``info``)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self._seen: dict[str, StationInfo] = {}  # the last info looked at, per station
        self._recent: defaultdict[str, deque[Play]] = defaultdict(lambda: deque(maxlen=REMEMBERED))
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.recorded = 0

    async def observe(self, slug: str, info: StationInfo) -> None:
        """Store the play on air in ``info`` unless it is known; never raises."""
        if self._seen.get(slug) is info:
            return  # a cached answer handed to another caller: nothing new
        async with self._locks[slug]:
            if self._seen.get(slug) is info:
                return
            self._seen[slug] = info
            play = info.current_play()
            if play is None or any(play.same_as(known) for known in self._recent[slug]):
                return
            try:
                added = await self.storage.record_play(
                    slug, play, info.listener_count, info.fetched_at
                )
            except Exception:
                _LOGGER.exception("could not record a play of %s in the history", slug)
                return
            self._recent[slug].append(play)
            self.recorded += int(added)

    def forget(self, slug: str) -> None:
        """The station was removed: drop what is remembered of it."""
        self._seen.pop(slug, None)
        self._recent.pop(slug, None)
        self._locks.pop(slug, None)
