"""A station's decoded packets, let out to its guilds at the pace they are played: 20 ms each.

FFmpeg turns what arrives into packets at once, and what arrives comes in bursts: Icecast's
burst on connect (64 KiB: 1.6 s of a 320 kbit/s MP3, 4-6 s of a 128 kbit/s one or of Ogg) and
Ogg pages of 0.5-1 s of sound each. Put straight into each guild's small queue (0.5 s), a burst
would overflow it and drop half of an Ogg stream. The pacer keeps one backlog per
station instead (bounded in time: ``max_seconds``) and lets one packet out every 20 ms on a
drift-free schedule, so the guild queues only absorb the event loop's jitter. The backlog the
burst leaves (the burst's length) also covers a reconnect: a listener hears no silence while
the decoder restarts.

A new decoder run (a reconnect) starts with Icecast's burst again, which repeats the last
``burst`` bytes the old connection had sent: the same sound as the backlog still holds, since
both are one burst long. So the new run's first packets replace what is left of the old run's
(``replaced`` counts them) instead of queueing behind it: the listener goes on where the old
run stopped, neither hearing it twice nor falling further behind the station at each drop.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

FRAME_SECONDS = 0.02
# Each guild's queue is kept this far ahead of its player (4 frames), so the jitter between the
# event loop and a player thread does not run it dry; after a late wake-up at most CATCH_UP more
# go at once (the rest stay in the backlog, on schedule from then on). A guild queue holds 0.5 s:
# the lead and a catch-up together (23 frames) fit in it, so a guild whose player stalled with
# the loop drops nothing.
LEAD_SECONDS = 0.08
CATCH_UP_SECONDS = 0.3


class Pacer:
    """One station's backlog; ``emit`` gets each packet when it is due (on the event loop)."""

    def __init__(
        self,
        emit: Callable[[bytes], None],
        *,
        max_seconds: float = 10.0,
        frame_seconds: float = FRAME_SECONDS,
    ) -> None:
        self._emit = emit
        self.frame_seconds = frame_seconds
        self.max_packets = max(1, round(max_seconds / frame_seconds))
        self._backlog: deque[bytes] = deque()
        self._ready = asyncio.Event()
        self._new_run = False
        self.dropped = 0  # the oldest packets of a backlog over its bound
        self.replaced = 0  # an old run's packets a new run's burst replaced

    def __len__(self) -> int:
        return len(self._backlog)

    def new_run(self) -> None:
        """A new decoder run starts: its first packets replace the backlog's rest."""
        self._new_run = True

    def put(self, packets: list[bytes]) -> None:
        if not packets:
            return
        if self._new_run:
            self._new_run = False
            self.replaced += len(self._backlog)
            self._backlog.clear()
        self._backlog.extend(packets)
        over = len(self._backlog) - self.max_packets
        for _ in range(over):
            self._backlog.popleft()
        self.dropped += max(0, over)
        self._ready.set()

    def clear(self) -> None:
        self._backlog.clear()

    async def run(self) -> None:
        """Let packets out one per ``frame_seconds``, ``LEAD_SECONDS`` ahead, until cancelled.
        After running dry the next packets go at once (its guilds were already sending
        silence); after a late wake-up the due packets go together (each guild's queue absorbs
        them)."""
        loop = asyncio.get_running_loop()
        due = loop.time()
        while True:
            if not self._backlog:
                self._ready.clear()
                await self._ready.wait()
                due = max(due, loop.time())
            wait = due - LEAD_SECONDS - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            now = loop.time()
            due = max(due, now - CATCH_UP_SECONDS)
            while self._backlog and due <= now + LEAD_SECONDS:
                self._emit(self._backlog.popleft())
                due += self.frame_seconds
