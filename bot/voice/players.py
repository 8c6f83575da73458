"""What the voice service works with: a guild's player, the engine and listener interfaces it
is given, and the channel facts it checks (permissions to be heard, listeners present)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import discord

from .. import errors
from ..catalog.registry import short_slug
from ..config import StationConfig
from ..errors import Note, VoiceRefused
from ..util.text import safe
from .client import OnAirVoiceClient
from .sender import Lane
from .stream import OpenedStream, StreamGuard

VoiceChannel = discord.VoiceChannel | discord.StageChannel


class AudioHub(Protocol):
    """What the service needs of the engine's ``Broadcasts`` (one decoder per station)."""

    def audio_for(
        self,
        key: str,
        stream_url: str,
        first: OpenedStream | None = None,
        *,
        guard: StreamGuard | None = None,
    ) -> discord.AudioSource: ...

    def is_running(self, key: str) -> bool: ...

    def retarget(self, key: str, stream_url: str, *, guard: StreamGuard | None = None) -> bool: ...

    def stats(self) -> Mapping[str, Any]: ...

    async def close(self) -> None: ...


class PlayerListener(Protocol):
    """Told where players start and stop (the channel status of ``bot.shows``)."""

    async def player_started(self, guild_id: int, channel_id: int, station: str) -> None: ...

    async def player_leaving(self, guild_id: int, channel_id: int) -> None: ...

    async def players_changed(self) -> None: ...


class StreamDown(Exception):
    """The probe could not open the stream (the composition root maps the engine's error).
    ``said``: the same words, said in a reader's language."""

    def __init__(self, message: str = "", said: Note | None = None) -> None:
        super().__init__(message)
        self.said = said


# Opens the stream (each URL and redirect hop through the guard) and checks it plays; the open
# stream becomes the decoder's first connection.
Probe = Callable[[str, StreamGuard], Awaitable[OpenedStream]]


@dataclass(slots=True)
class Player:
    """One guild's player: where it is, what it plays."""

    guild_id: int
    channel_id: int
    station: str
    client: OnAirVoiceClient | None = None
    audio: discord.AudioSource | Lane | None = None  # a Lane on the process's sender


@dataclass(frozen=True, slots=True)
class VoiceStatus:
    """Where voice is in a guild, for ``/onair status``: ``playing``, or ``rejoining`` (a
    restart's or a failure's rejoin waiting for its turn at the shard's gateway limit, or
    connecting); ``ahead`` rejoins of its shard wait for a turn too."""

    state: str
    channel_id: int
    station: str
    ahead: int = 0


@dataclass(frozen=True, slots=True)
class Joined:
    """What /join did, for the reply."""

    channel: VoiceChannel
    station: StationConfig
    note: Note | None = None  # said after the answer, in the reader's language


def missing_permissions(channel: VoiceChannel, me: discord.Member) -> list[str]:
    """The permissions OnAir lacks to be heard in ``channel`` (names as Discord shows them)."""
    allowed = channel.permissions_for(me)
    missing = []
    if not allowed.view_channel:
        missing.append(errors.VIEW_CHANNEL)
    if not allowed.connect:
        return [*missing, errors.CONNECT]  # (Discord then denies Speak too: Connect comes first)
    if isinstance(channel, discord.StageChannel):
        return missing  # speaking on a stage is checked after joining (unsuppress or request)
    if not allowed.speak:
        missing.append(errors.SPEAK)
    return missing


def check_channel(channel: VoiceChannel) -> None:
    """VoiceRefused naming the permissions OnAir lacks in ``channel``."""
    me = channel.guild.me
    missing = missing_permissions(channel, me)
    if missing:
        names = errors.PermissionNames(missing)
        raise VoiceRefused(errors.JOIN_NO_PERMISSION, channel=channel.mention, missing=names)
    if isinstance(channel, discord.StageChannel):
        allowed = channel.permissions_for(me)
        if not (allowed.mute_members or allowed.request_to_speak):
            raise VoiceRefused(errors.STAGE_CANNOT_SPEAK, channel=channel.mention)


def listeners_in(channel: discord.abc.GuildChannel | None, me_id: int) -> int:
    """Members in a voice channel who are not bots (members not cached count as listeners)."""
    if not isinstance(channel, discord.VoiceChannel | discord.StageChannel):
        return 0
    count = 0
    for user_id in channel.voice_states:
        if user_id == me_id:
            continue
        member = channel.guild.get_member(user_id)
        if member is None or not member.bot:
            count += 1
    return count


def station_name(station: StationConfig) -> str:
    """The station's name as voice replies show it (station text made safe)."""
    return safe(station.name, limit=80) or short_slug(station)
