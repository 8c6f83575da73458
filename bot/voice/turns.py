"""Turns at Discord's per-shard gateway limit for voice rejoins.

Discord allows 120 gateway sends per 60 s on each shard's connection (and closes it with 4008
past that); discord.py paces itself at 110, leaving room for heartbeats. Joining a voice channel
is one send (op 4). After a restart every stored session wants its op 4 at once: 1,000 guilds on
one shard queue behind discord.py's limiter for nine minutes while each connect's own timeout
runs, so most time out and retry, and the retries take turns too. Here each shard grants
``budget`` rejoins per ``window`` seconds (100 a minute: the rest of discord.py's 110 stays for
presence and the voice leaves), first come first served, so every rejoin that starts is sent at
once and connects within its timeout; a guild waiting for its turn shows as "rejoining".
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable

REJOIN_BUDGET = 100  # voice joins per shard per window (discord.py sends at most 110 a minute)
REJOIN_WINDOW = 60.0


class GatewayTurns:
    """Per shard: at most ``budget`` grants in any ``window`` seconds, in the order asked."""

    def __init__(
        self,
        budget: int = REJOIN_BUDGET,
        window: float = REJOIN_WINDOW,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.budget = max(1, budget)
        self.window = window
        self._clock = clock
        self._sleep = sleep
        self._granted: dict[int, deque[float]] = defaultdict(deque)
        self._locks: dict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._waiting: dict[int, int] = defaultdict(int)

    def waiting(self, shard: int) -> int:
        """Rejoins of ``shard`` waiting for their turn now."""
        return self._waiting[shard]

    async def turn(self, shard: int) -> None:
        """Return when ``shard`` may send one more voice join."""
        self._waiting[shard] += 1
        try:
            async with self._locks[shard]:  # (asyncio's lock is fair: first come, first served)
                granted = self._granted[shard]
                while True:
                    now = self._clock()
                    while granted and granted[0] <= now - self.window:
                        granted.popleft()
                    if len(granted) < self.budget:
                        granted.append(now)
                        return
                    await self._sleep(granted[0] + self.window - now)
        finally:
            self._waiting[shard] -= 1
