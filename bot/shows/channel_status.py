"""A voice channel's status (or a stage's topic) showing what OnAir plays there.

OnAir writes "🎵 Artist - Title" (or "🔴 LIVE: <show>") into the status of the voice channel it
plays in, once per station change for every guild playing that station, and clears it when it
leaves. It only ever replaces or clears its own text: what it last wrote is remembered per
channel (in storage, so a restart still knows it), and a status someone else set (seen on the
gateway) is left alone until they clear it. A write is skipped when OnAir lacks the permission
(checked first: a 403 counts toward Discord's invalid-request limit) or the guild turned the
status off. On a stage, the stage's topic plays the same part, when OnAir is a stage moderator:
it opens the stage with its topic when nobody has, and closes only a stage it opened.

discord.py 2.7 neither keeps a voice channel's status nor parses VOICE_CHANNEL_STATUS_UPDATE;
``follow_status_events`` adds that event (and reads the status of voice channels in
GUILD_CREATE) on the client's own gateway parsers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

import discord

from ..station import Play
from ..storage import Storage
from ..util.i18n import guild_lang
from .text import stage_topic, voice_status

_LOGGER = logging.getLogger("onair.shows")
WRITE_TIMEOUT = 5.0  # seconds one status request may take
Pace = Callable[[], Awaitable[None]]


class Players(Protocol):
    """What the keeper needs of the voice service: where each guild's player is."""

    def channels_playing(self, station: str) -> list[tuple[int, int]]: ...

    def status_enabled(self, guild_id: int) -> bool: ...


def may_replace(current: str | None, *mine: str | None) -> bool:
    """Whether OnAir may write over ``current`` (what Discord shows now; None: empty or not
    known): only an empty status or its own text (what it wrote last, or the text before that
    while a write's outcome is unknown)."""
    return not current or current in mine


class ChannelStatusKeeper:
    """Writes and clears voice channel statuses and stage topics for the voice service's
    players; built by the composition root, fed by the announcer's station changes."""

    def __init__(
        self,
        client: discord.Client,
        storage: Storage,
        players: Players,
        *,
        pace: Pace | None = None,
    ) -> None:
        self.client = client
        self.storage = storage
        self.players = players
        # Awaited before each request: the announcer's gate under Discord's global limit, so a
        # station change in a thousand guilds paces itself instead of meeting 429s.
        self.pace = pace
        self._written: dict[int, str] = {}  # channel → what OnAir last wrote there
        self._previous: dict[int, str] = {}  # channel → what it wrote before that (this run)
        self._current: dict[int, str | None] = {}  # channel → the status Discord last sent
        self._locks: dict[int, asyncio.Lock] = {}
        self.writes = 0  # statuses and topics written (tests, logs)
        self.skipped_permission = 0

    async def load(self) -> None:
        self._written = await self.storage.written_statuses()

    # Gateway ------------------------------------------------------------------------------

    def seen(self, channel_id: int, status: str | None) -> None:
        """Discord says the channel's status is now ``status`` (an update, or GUILD_CREATE)."""
        self._current[channel_id] = status or None

    def written(self, channel_id: int) -> str | None:
        return self._written.get(channel_id)

    def current(self, channel_id: int) -> str | None:
        """The channel's status as Discord last sent it (None: empty or not seen)."""
        return self._current.get(channel_id)

    # Writing ------------------------------------------------------------------------------

    async def station_changed(self, station: str, play: Play | None) -> None:
        """A new play on ``station``: every channel this process plays it in shows it."""
        targets = self.players.channels_playing(station)
        results = await asyncio.gather(
            *(self.show(guild_id, channel_id, play) for guild_id, channel_id in targets),
            return_exceptions=True,
        )
        for (guild_id, _), result in zip(targets, results, strict=True):
            if isinstance(result, Exception):  # one guild's trouble is not the others'
                _LOGGER.warning("status in guild %s not set: %r", guild_id, result)

    async def station_down(self, station: str) -> None:
        """The station is down (longer than ``offline_after``): OnAir's own status goes from
        the voice channels that play it (the player plays silence meanwhile; the status comes
        back with the station). A stage keeps its topic: closing it would end the stage."""
        targets = [
            (guild_id, channel_id)
            for guild_id, channel_id in self.players.channels_playing(station)
            if not isinstance(self._channel(guild_id, channel_id), discord.StageChannel)
        ]
        results = await asyncio.gather(
            *(self.clear(guild_id, channel_id) for guild_id, channel_id in targets),
            return_exceptions=True,
        )
        for (guild_id, _), result in zip(targets, results, strict=True):
            if isinstance(result, Exception):
                _LOGGER.warning("status in guild %s not cleared: %r", guild_id, result)

    async def show(self, guild_id: int, channel_id: int, play: Play | None) -> bool:
        """Show ``play`` in the channel (clear OnAir's text when the guild turned the status
        off); True when something was written. Discord's refusals and timeouts are logged,
        not raised (a storage failure is: the caller logs it per guild)."""
        channel = self._channel(guild_id, channel_id)
        if channel is None:
            return False
        if not self.players.status_enabled(guild_id):
            return await self.clear(guild_id, channel_id)
        try:
            async with self._lock(channel_id):
                return await self._show(channel, play)
        except (discord.HTTPException, TimeoutError) as error:
            _LOGGER.warning("status of channel %s not set: %s", channel_id, _why(error))
            return False

    async def clear(self, guild_id: int, channel_id: int) -> bool:
        """OnAir leaves: its own text goes (a person's stays); True when it cleared one."""
        channel = self._channel(guild_id, channel_id)
        if channel is None or channel_id not in self._written:
            return False
        try:
            async with self._lock(channel_id):
                return await self._clear(channel)
        except (discord.HTTPException, TimeoutError) as error:
            _LOGGER.warning("status of channel %s not cleared: %s", channel_id, _why(error))
            return False

    async def _show(
        self, channel: discord.VoiceChannel | discord.StageChannel, play: Play | None
    ) -> bool:
        lang = await guild_lang(self.client, channel.guild.id)  # public: the guild's language
        if isinstance(channel, discord.StageChannel):
            return await self._show_topic(channel, stage_topic(play, lang))
        text = voice_status(play, lang)
        written = self._written.get(channel.id)
        current = self._current.get(channel.id, written)
        if text is None or (text == written and current == written):
            return False  # nothing on air, or shown already
        if not may_replace(current, written, self._previous.get(channel.id)):
            return False  # someone else's status: theirs until they clear it
        if not _may_set_status(channel):
            self.skipped_permission += 1
            return False
        await self._remember(channel, text)
        try:
            await self._send(lambda: channel.edit(status=text))
        except discord.HTTPException:
            await self._restore(channel, written)  # refused: Discord shows what it did
            raise
        self._current[channel.id] = text
        self.writes += 1
        return True

    async def _clear(self, channel: discord.VoiceChannel | discord.StageChannel) -> bool:
        written = self._written.get(channel.id)
        if isinstance(channel, discord.StageChannel):
            instance = channel.instance
            if instance is None or instance.topic != written or not _stage_moderator(channel):
                await self._forget(channel.id)
                return False
            await self._send(instance.delete)  # a stage OnAir opened with its own topic
            await self._forget(channel.id)
            return True
        current = self._current.get(channel.id, written)
        mine = current == written or (current and current == self._previous.get(channel.id))
        if not mine:
            await self._forget(channel.id)
            return False
        if not _may_set_status(channel):
            self.skipped_permission += 1  # e.g. disconnected by a moderator: Discord would refuse
            await self._forget(channel.id)
            return False
        await self._send(lambda: channel.edit(status=None))
        self._current[channel.id] = None
        await self._forget(channel.id)
        return True

    async def _show_topic(self, channel: discord.StageChannel, topic: str | None) -> bool:
        """A stage: open it with OnAir's topic when nobody has, else retopic only a stage whose
        topic is OnAir's; a stage moderator only (Manage Channels, Mute and Move Members)."""
        if topic is None:
            return False
        if not _stage_moderator(channel):
            self.skipped_permission += 1
            return False
        written = self._written.get(channel.id)
        instance = channel.instance
        if instance is not None and (instance.topic == topic or instance.topic != written):
            return False  # shown already, or a stage someone else opened
        await self._remember(channel, topic)
        if instance is None:
            await self._send(lambda: channel.create_instance(topic=topic))
        else:
            await self._send(lambda: instance.edit(topic=topic))
        self.writes += 1
        return True

    async def _send(self, request: Callable[[], Awaitable[Any]]) -> None:
        """One request to Discord: paced, then bounded in time."""
        if self.pace is not None:
            await self.pace()
        await asyncio.wait_for(request(), WRITE_TIMEOUT)

    async def _remember(
        self, channel: discord.VoiceChannel | discord.StageChannel, text: str
    ) -> None:
        """Stored before it is written: after a crash in between OnAir still knows the text."""
        before = self._written.get(channel.id)
        if before is not None:
            self._previous[channel.id] = before
        self._written[channel.id] = text
        await self.storage.save_written_status(channel.guild.id, channel.id, text)

    async def _restore(
        self, channel: discord.VoiceChannel | discord.StageChannel, text: str | None
    ) -> None:
        """Discord refused a write: what OnAir wrote there is what it was before."""
        if text is None:
            await self._forget(channel.id)
        else:
            self._written[channel.id] = text
            await self.storage.save_written_status(channel.guild.id, channel.id, text)

    async def _forget(self, channel_id: int) -> None:
        self._previous.pop(channel_id, None)
        if self._written.pop(channel_id, None) is not None:
            await self.storage.forget_written_status(channel_id)

    def _channel(
        self, guild_id: int, channel_id: int
    ) -> discord.VoiceChannel | discord.StageChannel | None:
        guild = self.client.get_guild(guild_id)
        channel = guild.get_channel(channel_id) if guild is not None else None
        return channel if isinstance(channel, discord.VoiceChannel | discord.StageChannel) else None

    def _lock(self, channel_id: int) -> asyncio.Lock:
        return self._locks.setdefault(channel_id, asyncio.Lock())


def _may_set_status(channel: discord.VoiceChannel) -> bool:
    """Whether Discord lets OnAir set the channel's status: Set Voice Channel Status with
    Connect, and being in the channel (from outside it takes Manage Channels)."""
    me = channel.guild.me
    allowed = channel.permissions_for(me)
    if not (allowed.set_voice_channel_status and allowed.connect and allowed.view_channel):
        return False
    inside = me.voice is not None and me.voice.channel is not None and me.voice.channel == channel
    return inside or allowed.manage_channels


def _stage_moderator(channel: discord.StageChannel) -> bool:
    allowed = channel.permissions_for(channel.guild.me)
    return allowed.manage_channels and allowed.mute_members and allowed.move_members


def _why(error: BaseException) -> str:
    if isinstance(error, discord.HTTPException):
        return f"Discord answered {error.status} ({error.code})"
    return "Discord did not answer in time"


def follow_status_events(client: discord.Client, seen: Callable[[int, str | None], None]) -> None:
    """Call ``seen(channel id, status)`` for every voice channel status Discord sends: the
    VOICE_CHANNEL_STATUS_UPDATE event and the voice channels of GUILD_CREATE (discord.py 2.7
    ignores both). Added to the client's own gateway parsers, before it connects."""
    parsers: dict[str, Callable[[Any], None]] = client._connection.parsers

    def status_update(data: Mapping[str, Any]) -> None:
        if str(data.get("id", "")).isdigit():
            seen(int(data["id"]), _text(data.get("status")))

    original = parsers.get("GUILD_CREATE")

    def guild_create(data: Any) -> None:
        if isinstance(data, dict):
            for channel in data.get("channels") or []:
                if isinstance(channel, dict) and channel.get("type") == 2 and "status" in channel:
                    seen(int(channel["id"]), _text(channel.get("status")))
        if original is not None:
            original(data)

    parsers["VOICE_CHANNEL_STATUS_UPDATE"] = status_update
    parsers["GUILD_CREATE"] = guild_create


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
