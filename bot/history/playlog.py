"""The play history, written whenever a station is polled for any reason.

`/history` must work for every station a guild can use, not only for stations some channel
announces. So every fresh ``info`` a station client fetches (a command's, or a watch's poll) is
offered here, and each new play is stored once: a play equal to one of the last few seen is
skipped in memory (no database call per poll), and storage skips it again when one of the
station's newest stored plays is the same play (another writer or an earlier run stored it).

A play storage fails to write is kept, not lost and not retried on every poll: the newest
``MAX_PENDING`` wait in memory (older ones are dropped, with one warning) and are written,
oldest first, once storage works again: a batch after each play written, and all of them when
the announcer's sweep (or a fan-out, after its sends) asks. The failure is logged through the
storage's health: one warning line per outage, not a traceback per poll.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict, deque
from dataclasses import dataclass
from datetime import datetime

from ..station import Play, StationInfo
from ..storage import Storage
from ..util.text import describe

_LOGGER = logging.getLogger("onair.playlog")
REMEMBERED = 4  # plays kept per station: a station flapping between two titles adds no rows
MAX_PENDING = 1000  # plays kept while storage fails (a few hundred bytes each)
BATCH = 20  # pending plays written after each new one (a poll is not held up by a backlog)


@dataclass(frozen=True)
class PendingPlay:
    slug: str
    play: Play
    listeners: int | None
    detected: datetime


class PlayRecorder:
    """Records each station's new plays into storage (called after each successful ``info``)."""

    def __init__(self, storage: Storage, *, limit: int = MAX_PENDING) -> None:
        self.storage = storage
        self.limit = limit
        self._seen: dict[str, StationInfo] = {}  # the last info looked at, per station
        self._recent: defaultdict[str, deque[Play]] = defaultdict(lambda: deque(maxlen=REMEMBERED))
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._pending: deque[PendingPlay] = deque()
        self._flushing = asyncio.Lock()  # one catch-up at a time keeps the pending in order
        self._lost_warned = False  # one warning per outage about plays the history lost
        self.recorded = 0
        self.lost = 0  # plays dropped because too many were waiting for storage

    @property
    def pending(self) -> int:
        """Plays waiting for storage."""
        return len(self._pending)

    async def observe(self, slug: str, info: StationInfo) -> None:
        """Store the play on air in ``info`` unless it is known; never raises."""
        if self._seen.get(slug) is info:
            return  # a cached answer handed to another caller: nothing new
        async with self._locks[slug]:
            if self._seen.get(slug) is info:
                return
            self._seen[slug] = info
            play = info.current_play()
            written = play is not None and await self._offer(
                PendingPlay(slug, play, info.listener_count, info.fetched_at)
            )
        # Only a play just written says storage works: a poll whose play is known makes no
        # storage call, however many plays wait (a locked or hanging database would otherwise
        # hold up every poll and command, all stations in turn; the sweep catches up then).
        if written and self._pending:
            await self.catch_up(BATCH)

    async def record(
        self, slug: str, play: Play, listeners: int | None, detected: datetime
    ) -> None:
        """Store a play announced from a poll (the fan-out's), unless it is known; never raises."""
        async with self._locks[slug]:
            await self._offer(PendingPlay(slug, play, listeners, detected))

    async def catch_up(self, limit: int | None = None) -> int:
        """Write the pending plays (up to ``limit``), oldest first, until storage fails; how
        many were written."""
        written = 0
        async with self._flushing:
            while self._pending and (limit is None or written < limit):
                item = self._pending[0]
                try:
                    added = await self._write(item)
                except Exception:
                    self._pending.popleft()  # a bug in this play: it never blocks the others
                    _LOGGER.exception("could not record a play of %s in the history", item.slug)
                    continue
                if added is None:
                    break
                self._pending.popleft()
                self.recorded += int(added)
                written += 1
            if not self._pending:
                self._lost_warned = False
        if written:
            _LOGGER.info(
                "wrote %d play(s) that storage had failed into the history (%d still waiting)",
                written,
                len(self._pending),
            )
        return written

    def forget(self, slug: str) -> None:
        """The station was removed: drop what is remembered of it."""
        self._seen.pop(slug, None)
        self._recent.pop(slug, None)
        self._locks.pop(slug, None)

    async def _offer(self, item: PendingPlay) -> bool:
        """Write a play unless it is among the station's last few; keep it when storage fails.
        True when storage took it (written, or stored already)."""
        if any(item.play.same_as(known) for known in self._recent[item.slug]):
            return False
        try:
            added = await self._write(item)
        except Exception:
            _LOGGER.exception("could not record a play of %s in the history", item.slug)
            return False
        self._recent[item.slug].append(item.play)
        if added is None:
            self._keep(item)
            return False
        self.recorded += int(added)
        return True

    async def _write(self, item: PendingPlay) -> bool | None:
        """Whether the play was added (False: stored already); None when storage failed it."""
        try:
            return await self.storage.record_play(
                item.slug, item.play, item.listeners, item.detected
            )
        except Exception as error:
            self.storage.log_fault_or_raise(
                error,
                _LOGGER,
                "could not record %r in the history of %s (%s); kept to be written when storage "
                "works again",
                item.play.display,
                item.slug,
                describe(error),
            )
            return None

    def _keep(self, item: PendingPlay) -> None:
        self._pending.append(item)
        if len(self._pending) <= self.limit:
            return
        lost = self._pending.popleft()
        self.lost += 1
        _LOGGER.log(
            logging.DEBUG if self._lost_warned else logging.WARNING,
            "the history lost %r of %s: more than %d plays were waiting for storage",
            lost.play.display,
            lost.slug,
            self.limit,
        )
        self._lost_warned = True
