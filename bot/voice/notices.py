"""Telling the player listener (the channel status of ``bot.shows``) where players start and
stop: in the background, except before OnAir leaves a channel, when the status is cleared
while OnAir is still there (bounded: a slow Discord does not hold the leave)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from .players import PlayerListener

_LOGGER = logging.getLogger("onair.voice")

LEAVE_NOTICE_TIMEOUT = 5.0  # seconds a leave waits for the channel status to be cleared


class PlayerNotices:
    """``listener`` reads the service's listener (None: nobody to tell); ``spawn`` runs the
    background notices among the service's tasks."""

    def __init__(
        self,
        listener: Callable[[], PlayerListener | None],
        spawn: Callable[[Awaitable[Any]], None],
    ) -> None:
        self._listener = listener
        self._spawn = spawn

    def started(self, guild_id: int, channel_id: int, station: str) -> None:
        listener = self._listener()
        if listener is not None:
            self._spawn(listener.player_started(guild_id, channel_id, station))

    def stopped(self, guild_id: int, channel_id: int) -> None:
        """A player stopped without OnAir leaving first (a moderator, a failure)."""
        if self._listener() is not None:
            self._spawn(self._leaving_then_changed(guild_id, channel_id))

    def changed(self) -> None:
        """Players came or went (after a leave)."""
        listener = self._listener()
        if listener is not None:
            self._spawn(listener.players_changed())

    async def _leaving_then_changed(self, guild_id: int, channel_id: int) -> None:
        listener = self._listener()
        if listener is not None:
            await listener.player_leaving(guild_id, channel_id)
            await listener.players_changed()

    async def leaving(self, guild_id: int, channel_id: int) -> None:
        """Before OnAir leaves a channel: its status is cleared while OnAir is still there
        (bounded: a slow Discord does not hold the leave)."""
        listener = self._listener()
        if listener is None:
            return
        try:
            await asyncio.wait_for(
                listener.player_leaving(guild_id, channel_id), LEAVE_NOTICE_TIMEOUT
            )
        except Exception as error:
            _LOGGER.info("channel %s status not cleared: %s", channel_id, type(error).__name__)
