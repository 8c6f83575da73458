"""Likes: one per Discord user and play, toggled, counted across every guild that posted it.

A like attaches to the play's row in the history (``plays``), so every post of one play (each
guild's announcement, /nowplaying) counts the same likes, and ``/top`` reads them with the
history. Storage decides each click on its own rows (the primary key refuses a second like), so
clicks handled by several processes never count a user twice. The per-user limit is kept in
each process: a click is a cheap write, and the limit only stops a held-down mouse.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from .. import errors
from ..errors import BadInput
from ..station import Play
from ..storage import Storage


class LikeLimiter:
    """At most ``clicks`` per user in any ``window`` seconds (on an injected clock)."""

    def __init__(
        self,
        clicks: int = 6,
        window: float = 10.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        users: int = 50_000,
    ) -> None:
        self.clicks = clicks
        self.window = window
        self.clock = clock
        self.users = users  # memory bound: the least recently seen users are forgotten
        self._seen: OrderedDict[int, deque[float]] = OrderedDict()

    def allow(self, user_id: int) -> bool:
        now = self.clock()
        times = self._seen.pop(user_id, None) or deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        allowed = len(times) < self.clicks
        if allowed:
            times.append(now)
        self._seen[user_id] = times
        while len(self._seen) > self.users:
            self._seen.popitem(last=False)
        return allowed


@dataclass(frozen=True, slots=True)
class Top:
    """``/top``: (title, artist, count) rows, most liked and most played."""

    liked: list[tuple[str, str | None, int]]
    played: list[tuple[str, str | None, int]]


class LikeService:
    def __init__(
        self,
        storage: Storage,
        *,
        limiter: LikeLimiter | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.limiter = limiter or LikeLimiter()
        self.wall = wall
        self._ids: OrderedDict[tuple[str, str], int] = OrderedDict()
        self._turns: dict[tuple[int, int], asyncio.Lock] = {}

    async def play_id(
        self, station: str, play: Play, *, listeners: int | None = None, record: bool = False
    ) -> int | None:
        """The history row likes of ``play`` attach to. ``record``: add the play to the history
        when it is not there (``/nowplaying`` of a station nobody announces)."""
        key = (station, play.claim_key)
        found = self._ids.get(key)
        if found is not None:
            return found
        found = await self.storage.play_id(station, play)
        if found is None and record:
            moment = datetime.fromtimestamp(self.wall()).astimezone()
            await self.storage.record_play(station, play, listeners, moment)
            found = await self.storage.play_id(station, play)
        if found is not None:
            self._ids[key] = found
            if len(self._ids) > 1024:
                self._ids.popitem(last=False)
        return found

    async def count(self, play_id: int) -> int:
        return await self.storage.like_count(play_id)

    async def title(self, play_id: int) -> str | None:
        return await self.storage.play_title(play_id)

    async def toggle(self, play_id: int, user_id: int) -> tuple[bool, int]:
        """(liked now, count); BadInput when the user clicks faster than the limit."""
        if not self.limiter.allow(user_id):
            raise BadInput(errors.LIKE_TOO_FAST)
        # One user's clicks on one play take turns in this process, so quick clicks toggle in
        # the order they came (on PostgreSQL they would otherwise run on parallel connections
        # and two toggles could both end "liked"; never two likes: the key sees to that).
        key = (play_id, user_id)
        lock = self._turns.setdefault(key, asyncio.Lock())
        try:
            async with lock:
                return await self.storage.toggle_like(play_id, user_id, now=self.wall())
        finally:
            if not lock.locked() and self._turns.get(key) is lock:
                del self._turns[key]

    async def top(self, station: str, since: float, count: int = 10) -> Top:
        return Top(
            await self.storage.top_liked(station, since, count),
            await self.storage.top_played(station, since, count),
        )
