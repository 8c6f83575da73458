"""The bot's status line: "Listening to <artist - title>" of the station it plays in the most
guilds (or the default station). Presence is one status per shard; it is sent when the text
changes and at most once per ``PRESENCE_INTERVAL`` per shard (Discord rate-limits it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import discord

from ..catalog.registry import StationRegistry
from ..config import Settings
from ..station import StationInfo
from ..util.text import one_line
from .players import Player
from .timers import Timers

_LOGGER = logging.getLogger("onair.voice")

PRESENCE_INTERVAL = 15.0
MAX_ACTIVITY = 128  # Discord's limit for an activity name


def presence_station(playing: Iterable[str], default: str) -> str:
    """The station played in the most guilds (ties: the default station, then by name), else
    the default station ("" for none)."""
    counts = Counter(playing)
    if not counts:
        return default
    return max(counts, key=lambda slug: (counts[slug], slug == default, slug))


def presence_text(info: StationInfo | None) -> str | None:
    """``artist - title`` on air as one plain line cut to Discord's limit (station text is
    untrusted: a longer name or a lone surrogate would make Discord or the JSON encoder refuse
    the whole presence); None for none."""
    play = info.current_play() if info is not None else None
    if play is None:
        return None
    return activity_name(play.display)


def activity_name(value: str) -> str | None:
    """One plain line of at most ``MAX_ACTIVITY`` characters, None when nothing is left."""
    return one_line(value, MAX_ACTIVITY) or None


class PresenceGate:
    """Per shard: the text last sent and when. ``due`` says whether to send ``text`` now."""

    def __init__(self, timers: Timers, interval: float = PRESENCE_INTERVAL) -> None:
        self.timers = timers
        self.interval = interval
        self._last: dict[int, tuple[str | None, float]] = {}

    def due(self, shard_id: int, text: str | None) -> bool:
        last = self._last.get(shard_id)
        if last is None:
            return text is not None
        sent_text, sent_at = last
        return text != sent_text and self.timers.now() - sent_at >= self.interval

    def sent(self, shard_id: int, text: str | None) -> None:
        self._last[shard_id] = (text, self.timers.now())

    def current(self, shard_id: int) -> str | None:
        last = self._last.get(shard_id)
        return last[0] if last else None


class PresenceUpdater:
    """Keeps each shard's status line on what the bot plays: a loop, and updates when players
    start or stop. ``players`` is the voice service's own mapping (read, never changed)."""

    def __init__(
        self,
        client: discord.Client,
        settings: Settings,
        registry: StationRegistry,
        players: Mapping[int, Player],
        timers: Timers,
        spawn: Callable[[Awaitable[Any]], None],
    ) -> None:
        self.client = client
        self.settings = settings
        self.registry = registry
        self.players = players
        self.gate = PresenceGate(timers)
        self._spawn = spawn
        self._presence_task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start the loop (idempotent)."""
        if self._presence_task is None or self._presence_task.done():
            self._presence_task = asyncio.create_task(self._loop(), name="presence")

    def refresh(self) -> None:
        """Update soon (a player started or stopped), when the loop runs."""
        if self._presence_task is not None and not self._presence_task.done():
            self._spawn(self.update())

    async def _loop(self) -> None:
        while True:
            try:
                await self.update()
            except Exception as error:  # a station down: the next round tries again
                _LOGGER.debug("presence update failed: %s", type(error).__name__)
            await asyncio.sleep(self.gate.interval)

    async def update(self) -> None:
        """Per shard: the station played in most of its guilds (else the default station); its
        track as "Listening to ..." when it changed, at most once per interval."""
        by_shard: dict[int, list[str]] = defaultdict(list)
        for guild_id, player in self.players.items():
            guild = self.client.get_guild(guild_id)
            if guild is not None:
                by_shard[guild.shard_id].append(player.station)
        shards = list(getattr(self.client, "shards", {}) or {0: None})
        for shard_id in shards:
            playing = by_shard.get(shard_id, [])
            slug = presence_station(playing, self.settings.default_station)
            station = self.registry.station(slug) if slug else None
            text = None
            if station is not None and slug in playing:
                # A station OnAir plays is asked (its info is cached and shared with commands).
                with contextlib.suppress(Exception):
                    text = presence_text((await self.registry.snapshot(station)).info)
            elif station is not None:
                # The default station while nothing plays: what is known, without a request.
                text = presence_text(self.registry.client(station).last_info)
            if not self.gate.due(shard_id, text):
                continue
            activity = (
                discord.Activity(type=discord.ActivityType.listening, name=text) if text else None
            )
            self.gate.sent(shard_id, text)
            await _change_presence(self.client, activity, shard_id)

    def stop(self) -> None:
        if self._presence_task is not None:
            self._presence_task.cancel()


async def _change_presence(
    client: discord.Client, activity: discord.Activity | None, shard_id: int
) -> None:
    if isinstance(client, discord.AutoShardedClient):
        await client.change_presence(activity=activity, shard_id=shard_id)
    else:
        await client.change_presence(activity=activity)
