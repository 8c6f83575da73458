"""Connecting a guild's voice client to a channel and starting a station's audio on it.

A move is a leave and a new connection (see the note below); a stage is spoken on as a
moderator or by requesting to speak; the station's audio comes from the engine (``AudioHub``),
one decoder per station shared by every guild that plays it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import discord

from .. import errors
from ..config import StationConfig
from ..errors import Note, VoiceRefused
from ..storage import VoiceSession
from .client import OnAirVoiceClient
from .players import AudioHub, Player, VoiceChannel, station_name
from .sender import Lane, VoiceSender
from .stream import OpenedStream
from .streams import StationStreams

_LOGGER = logging.getLogger("onair.voice")


class PlayerConnector:
    """Makes ``players[guild]`` play a station in a channel. ``leaving`` is told before OnAir
    leaves a channel for another, ``move_failed`` when the new one could not be reached (the
    old one was left), ``retire`` of a player replaced by a new one."""

    def __init__(
        self,
        players: dict[int, Player],
        hub: AudioHub | None,
        streams: StationStreams,
        client_class: type[OnAirVoiceClient],
        *,
        leaving: Callable[[int, int], Awaitable[None]],
        move_failed: Callable[[VoiceSession], None],
        retire: Callable[[Player | None], object],
        sender: VoiceSender | None = None,
    ) -> None:
        self.players = players
        self.hub = hub
        self.sender = sender  # the process's one audio clock; None: a player thread per guild
        self.streams = streams
        self._client_class = client_class
        self._leaving = leaving
        self._move_failed = move_failed
        self._retire = retire

    async def connect_and_play(
        self,
        channel: VoiceChannel,
        station: StationConfig,
        stream_url: str,
        opened: OpenedStream | None = None,
        *,
        connect_timeout: float,
    ) -> Note | None:
        """Connect (or move, within ``connect_timeout``) and play; ``opened`` (the probe's
        stream) goes to the decoder, or is closed when this fails, is cancelled or needs no new
        decoder."""
        try:
            return await self._connect_and_play_on(
                channel, station, stream_url, opened, connect_timeout
            )
        finally:
            if opened is not None:
                opened.close()  # (a no-op once handed over: the decoder owns it then)

    async def _connect_and_play_on(
        self,
        channel: VoiceChannel,
        station: StationConfig,
        stream_url: str,
        opened: OpenedStream | None,
        connect_timeout: float,
    ) -> Note | None:
        guild = channel.guild
        found = guild.voice_client
        voice_client = found if isinstance(found, OnAirVoiceClient) else None
        if found is not None and voice_client is None:
            await found.disconnect(force=True)  # not ours (cannot happen in OnAir): replace it
        previous = self.players.get(guild.id)
        moving_from = (
            VoiceSession(guild.id, previous.channel_id, previous.station)
            if previous is not None and previous.channel_id != channel.id
            else None
        )
        try:
            if voice_client is not None and (
                not voice_client.is_connected()
                or getattr(voice_client.channel, "id", None) != channel.id
            ):
                # A move is a leave and a new connection, not discord.py 2.7.1's move_to: that
                # makes a new UDP socket while the socket reader thread may still sit in
                # select() on the old one (after each IP discovery, until a packet comes back on
                # it or for 30 s), so the new IP discovery goes unread and move_to times out
                # without raising (a /join elsewhere right after joining the home channel). A
                # new connection has a reader of its own.
                if moving_from is not None:
                    await self._leaving(guild.id, moving_from.channel_id)
                voice_client.leaving = True
                await voice_client.disconnect(force=True)
                voice_client = None
            if voice_client is None:
                voice_client = await channel.connect(
                    cls=self._client_class,
                    timeout=connect_timeout,
                    reconnect=True,
                    self_deaf=True,
                )
        except (TimeoutError, discord.ClientException) as error:
            _LOGGER.warning(
                "could not connect to voice in guild %s: %s", guild.id, type(error).__name__
            )
            if moving_from is not None:
                # The old channel was left for this one: go back there rather than fall silent.
                self._move_failed(moving_from)
            raise VoiceRefused(errors.VOICE_CONNECT_FAILED, channel=channel.mention) from None
        note = (
            await self._take_the_stage(channel)
            if isinstance(channel, discord.StageChannel)
            else None
        )
        player = self.players.get(guild.id)
        if player is None or player.client is not voice_client or player.station != station.slug:
            if voice_client.is_playing():
                voice_client.stop()  # the old source's cleanup releases its broadcast
            assert self.hub is not None
            try:
                first = opened.hand_over() if opened is not None else None
                audio = self.hub.audio_for(
                    station.slug, stream_url, first, guard=self.streams.guard_for(station)
                )
            except Exception as error:  # the engine refuses a URL it must not hand FFmpeg
                _LOGGER.warning("no audio for %s: %s", station.slug, type(error).__name__)
                raise VoiceRefused(errors.NO_STREAM, station=station_name(station)) from None
            playing: discord.AudioSource | Lane = audio
            if self.sender is not None:
                playing = voice_client.play_on(
                    self.sender, station.slug, audio, after=self._after_play(guild.id)
                )
            else:
                voice_client.play(audio, after=self._after_play(guild.id))
            self._retire(player)
            self.streams.started(station.slug, stream_url)
            player = Player(guild.id, channel.id, station.slug, voice_client, playing)
            self.players[guild.id] = player
        player.channel_id = channel.id
        return note

    async def _take_the_stage(self, channel: discord.StageChannel) -> Note | None:
        """Speak on a stage: unsuppress itself as a stage moderator, else request to speak."""
        me = channel.guild.me
        allowed = channel.permissions_for(me)
        try:
            if allowed.mute_members:
                await me.edit(suppress=False)
                return None
            if allowed.request_to_speak:
                await me.request_to_speak()
                return Note(errors.STAGE_ASKED, channel=channel.mention)
        except discord.HTTPException as error:
            _LOGGER.warning("stage %s refused OnAir as a speaker (%s)", channel.id, error.status)
        return Note(errors.STAGE_CANNOT_SPEAK, channel=channel.mention)

    def _after_play(self, guild_id: int) -> Callable[[Exception | None], None]:
        """discord.py's player thread ends: log an error (a station's audio never ends by
        itself while its player plays)."""
        loop = asyncio.get_running_loop()

        def after(error: Exception | None) -> None:
            if error is not None:
                loop.call_soon_threadsafe(
                    _LOGGER.warning, "voice player of guild %s stopped: %r", guild_id, error
                )

        return after
