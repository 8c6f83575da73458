"""Rejoining voice after a failure discord.py gave up on, a restart or a gateway reconnect: one
task per guild, retried on a backoff until it plays again, has nothing left to rejoin, gives up
(the next READY tries again) or is cancelled by an explicit join or leave."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ..storage import VoiceSession
from .turns import GatewayTurns

_LOGGER = logging.getLogger("onair.voice")

# Seconds between rejoin attempts after a voice connection failed for good (then stays at the
# last): discord.py's own reconnects come first, this is what follows when it gives up.
REJOIN_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
REJOIN_ATTEMPTS = 20  # then the stored session waits for the next READY


class Rejoins:
    """The rejoin under way per guild; ``attempt`` tries once (True: playing again; False:
    nothing to rejoin; None: try again later)."""

    def __init__(
        self,
        attempt: Callable[[VoiceSession], Awaitable[bool | None]],
        delays: tuple[float, ...] = REJOIN_DELAYS,
        *,
        shard_of: Callable[[int], int] = lambda guild_id: 0,
        turns: GatewayTurns | None = None,
    ) -> None:
        self.attempt = attempt
        self.delays = delays
        self.shard_of = shard_of
        self.turns = turns or GatewayTurns()  # each attempt's op 4 waits for the shard's turn
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self._sessions: dict[int, VoiceSession] = {}
        self.rejoined = 0  # sessions rejoined after a restart, reconnect or failure (tests, logs)

    def __contains__(self, guild_id: object) -> bool:
        """Whether a rejoin of the guild is under way."""
        return guild_id in self._tasks

    def session(self, guild_id: int) -> VoiceSession | None:
        """What the guild's rejoin under way goes back to."""
        return self._sessions.get(guild_id) if guild_id in self._tasks else None

    def cancel(self, guild_id: int) -> None:
        """Stop the guild's rejoin, if any (an explicit join or leave wins)."""
        task = self._tasks.pop(guild_id, None)
        if task is not None:
            task.cancel()

    def cancel_all(self) -> None:
        for task in self._tasks.values():
            task.cancel()

    def schedule(self, session: VoiceSession, *, first_delay: float | None = None) -> None:
        """Rejoin ``session`` (replacing the guild's rejoin under way), the first try after
        ``first_delay`` (None: the first of the delays)."""
        self.cancel(session.guild_id)
        self._sessions[session.guild_id] = session
        task = asyncio.create_task(
            self._rejoin(session, first_delay), name=f"voice rejoin {session.guild_id}"
        )
        self._tasks[session.guild_id] = task

    async def _rejoin(self, session: VoiceSession, first_delay: float | None) -> None:
        try:
            for attempt in range(REJOIN_ATTEMPTS):
                delay = self.delays[min(attempt, len(self.delays) - 1)]
                if attempt == 0 and first_delay is not None:
                    delay = first_delay
                await asyncio.sleep(delay)
                await self.turns.turn(self.shard_of(session.guild_id))
                outcome = await self.attempt(session)
                if outcome is not None:
                    if outcome:
                        self.rejoined += 1
                    return
            _LOGGER.warning(
                "gave up rejoining voice in guild %s; next try at the next READY", session.guild_id
            )
        finally:
            if self._tasks.get(session.guild_id) is asyncio.current_task():
                self._tasks.pop(session.guild_id, None)
                self._sessions.pop(session.guild_id, None)
