"""Voice: play a station in guilds' voice and stage channels, one decode per station.

The service owns every guild's player (one voice connection per guild), decides what may play
where, keeps (guild, channel, station) in storage so the bot rejoins after a restart or a
gateway reconnect, leaves channels nobody listens in, rejoins after voice failures discord.py
gives up on (see ``bot.voice.client``), and tells the shows (channel status) when players start
and stop. Its helpers: ``streams.py`` (which stream, probed and guarded), ``connect.py``
(connecting, moving and starting the audio), ``homes.py`` (what to rejoin: stored sessions,
home channels) with ``rejoins.py`` (the retried rejoin per guild), ``figures.py`` (what plays,
who listens, frames sent), ``notices.py`` (telling the shows) and ``presence.py`` (the bot's
status line). The audio comes from the engine (``bot.voice.broadcast``: one FFmpeg per station
fanned out to every guild), reached through the small :class:`AudioHub` interface; the
composition root passes both in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import discord

from .. import errors
from ..catalog.registry import StationRegistry
from ..config import Settings, StationConfig
from ..errors import Note, VoiceRefused
from ..storage import GuildVoice, Storage, VoiceSession
from ..util.hooks import Hook
from ..util.tasks import BackgroundTasks, settle
from .client import OnAirVoiceClient, voice_client_class
from .connect import PlayerConnector
from .figures import VoiceFigures
from .homes import HomeChannels
from .idle import EmptyChannelWatch
from .notices import PlayerNotices
from .players import (
    AudioHub,
    Joined,
    Player,
    PlayerListener,
    Probe,
    VoiceChannel,
    VoiceStatus,
    check_channel,
    station_name,
)
from .presence import PresenceGate, PresenceUpdater
from .rejoins import REJOIN_DELAYS
from .sender import VoiceSender
from .stream import StreamGuard
from .streams import StationStreams
from .timers import LoopTimers, Timers

if TYPE_CHECKING:
    from ..util.metrics import Metrics

_LOGGER = logging.getLogger("onair.voice")
GOODBYE = 2.0  # seconds every guild's voice goodbye may take, together, at a stop


class VoiceService:
    """Every guild's player; built by ``create_bot`` (``hub`` None: no FFmpeg, voice is off)."""

    def __init__(
        self,
        client: discord.Client,
        settings: Settings,
        registry: StationRegistry,
        storage: Storage,
        *,
        hub: AudioHub | None,
        probe: Probe | None,
        timers: Timers | None = None,
        connect_timeout: float = 10.0,
        rejoin_delays: tuple[float, ...] = REJOIN_DELAYS,
        sender: VoiceSender | None = None,
        listener: Hook[PlayerListener] | None = None,
    ) -> None:
        """``listener``: told where players start and stop (the shows, built after the voice
        service, bind it); None or unbound, nobody is told."""
        self.client = client
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.hub = hub
        self.probe = probe
        self.sender = sender  # one audio clock for every guild (None: a player thread each)
        self.timers: Timers = timers or LoopTimers()
        self.connect_timeout = connect_timeout
        self.players: dict[int, Player] = {}
        self.idle = EmptyChannelWatch(self.timers, self._channel_empty)
        self._voice: dict[int, GuildVoice] = {}
        self._closing = False
        self.homes = HomeChannels(
            client,
            registry,
            storage,
            self.players,
            guild_voice=self.guild_voice,
            remember=self._remember,
            present=self.present,
            closing=lambda: self._closing,
            check_can_play=self.check_can_play,
            check_channel=self.check_channel,
            play=self._play,
            played=self._now_playing,
            delays=rejoin_delays,
        )
        self.rejoins = self.homes.rejoins
        self.figures = VoiceFigures(client, self.players, hub)
        self._locks: dict[int, asyncio.Lock] = {}
        self.streams = StationStreams(settings, registry, hub=hub, probe=probe)
        self._tasks = BackgroundTasks(lambda error: _LOGGER.warning("voice task failed: %r", error))
        self.listener = listener if listener is not None else Hook[PlayerListener]("players")
        self.notices = PlayerNotices(lambda: self.listener.target, self._spawn)
        self.presence_updater = PresenceUpdater(
            client, settings, registry, self.players, self.timers, self._spawn
        )
        self._client_class = voice_client_class(self._closed, self._moved)
        self.connector = PlayerConnector(
            self.players,
            hub,
            self.streams,
            self._client_class,
            leaving=self.notices.leaving,
            move_failed=self._move_failed,
            retire=self.figures.retire,
            sender=sender,
        )

    @property
    def rejoined(self) -> int:
        """Sessions rejoined after a restart, reconnect or failure (tests, logs)."""
        return self.rejoins.rejoined

    @property
    def presence(self) -> PresenceGate:
        """When each shard's status line was sent, and what it says."""
        return self.presence_updater.gate

    @property
    def available(self) -> bool:
        return self.hub is not None and self.probe is not None

    # Settings -----------------------------------------------------------------------------

    async def load(self) -> None:
        """Read every guild's voice settings (at start-up, after storage opened)."""
        self._voice = {v.guild_id: v for v in await self.storage.all_guild_voice()}

    def guild_voice(self, guild_id: int) -> GuildVoice:
        return self._voice.get(guild_id) or GuildVoice(guild_id)

    def _remember(self, voice: GuildVoice) -> None:
        self._voice[voice.guild_id] = voice

    async def save_guild_voice(self, voice: GuildVoice) -> None:
        await self.storage.save_guild_voice(voice)
        self._voice[voice.guild_id] = voice
        player = self.players.get(voice.guild_id)
        if player is not None:
            self._update_idle(voice.guild_id)

    # Checks -------------------------------------------------------------------------------

    def check_can_play(self, station: StationConfig) -> None:
        """VoiceRefused when voice is off on this bot or for the station."""
        if not self.available:
            raise VoiceRefused(errors.VOICE_UNAVAILABLE)
        if not station.voice:
            text = errors.GUILD_STATION_NO_VOICE if station.owner_guild else errors.STATION_NO_VOICE
            raise VoiceRefused(text, station=station_name(station))

    def check_channel(self, channel: VoiceChannel) -> None:
        """VoiceRefused naming the permissions OnAir lacks in ``channel``."""
        check_channel(channel)

    # Join and leave -----------------------------------------------------------------------

    async def join(self, channel: VoiceChannel, station: StationConfig) -> Joined:
        """Play ``station`` in ``channel`` (moving the guild's player there if it is elsewhere).
        Raises VoiceRefused with the reason when it cannot."""
        self.check_can_play(station)
        self.check_channel(channel)
        guild_id = channel.guild.id
        self.homes.held.discard(guild_id)
        self.rejoins.cancel(guild_id)  # asked for explicitly: this join wins
        note = await self._play(channel, station)
        await self.storage.save_voice_session(
            VoiceSession(channel.guild.id, channel.id, station.slug), now=self.timers.now()
        )
        self._now_playing(guild_id, channel.id, station.slug)
        return Joined(channel, station, note)

    async def _play(self, channel: VoiceChannel, station: StationConfig) -> Note | None:
        """Connect (or move) and play, one connect at a time per guild; the join's note."""
        async with self._lock(channel.guild.id):
            stream_url, opened = await self.streams.open_for(station)
            return await self.connector.connect_and_play(
                channel, station, stream_url, opened, connect_timeout=self.connect_timeout
            )

    def _now_playing(self, guild_id: int, channel_id: int, station: str) -> None:
        """After a join or rejoin played: the empty-channel watch, presence and status."""
        self._update_idle(guild_id)
        self.refresh_presence()
        self.notices.started(guild_id, channel_id, station)

    # Where players start and stop (for the channel status) --------------------------------

    def channels_playing(self, station: str) -> list[tuple[int, int]]:
        """(guild, channel) of every player of ``station`` in this process."""
        return [(p.guild_id, p.channel_id) for p in self.players.values() if p.station == station]

    def status_enabled(self, guild_id: int) -> bool:
        return self.guild_voice(guild_id).channel_status

    def status(self, guild_id: int) -> VoiceStatus | None:
        """Playing, or rejoining (waiting for its shard's turn, or connecting), or None."""
        player = self.players.get(guild_id)
        if player is not None:
            return VoiceStatus("playing", player.channel_id, player.station)
        session = self.rejoins.session(guild_id)
        if session is None:
            return None
        waiting = self.rejoins.turns.waiting(self.rejoins.shard_of(guild_id))
        return VoiceStatus("rejoining", session.channel_id, session.station, waiting)

    def present(self, guild_id: int) -> bool:
        """Whether the guild has a player, a rejoin under way or a voice connection of OnAir's."""
        guild = self.client.get_guild(guild_id)
        connected = guild is not None and guild.voice_client is not None
        return guild_id in self.players or guild_id in self.rejoins or connected

    async def leave(self, guild_id: int, *, hold: bool = True) -> bool:
        """Stop and leave; the stored session goes (no rejoin). ``hold`` (someone asked): the
        home channel too stays unplayed until a /join or the next start (see
        :meth:`rejoin_stored`). False when not playing here."""
        if hold:
            self.homes.held.add(guild_id)
        self.rejoins.cancel(guild_id)
        self.idle.cancel(guild_id)
        leaving = self.players.get(guild_id)
        if leaving is not None:
            await self.notices.leaving(guild_id, leaving.channel_id)
        player = self.figures.retire(self.players.pop(guild_id, None))
        removed = await self.storage.remove_voice_session(guild_id)
        voice_client = player.client if player else None
        guild = self.client.get_guild(guild_id)
        if voice_client is None and guild is not None:
            found = guild.voice_client
            voice_client = found if isinstance(found, OnAirVoiceClient) else None
        if voice_client is not None:
            voice_client.leaving = True
            await voice_client.disconnect(force=True)
        self.refresh_presence()
        if player is not None:
            self.notices.changed()
        return player is not None or removed or voice_client is not None

    async def try_stream(self, station: StationConfig, stream_url: str) -> str:
        """Open ``stream_url`` once as ``station``'s stream and close it again; where its
        redirects end. VoiceRefused saying why when it does not play (``StationStreams``)."""
        return await self.streams.try_stream(station, stream_url)

    async def stream_changed(self, station: StationConfig, played: str | None = None) -> bool:
        """``station``'s stream setting changed: its running decoder switches now; True when
        one switched (``StationStreams.changed``)."""
        return await self.streams.changed(station, played)

    def guard_for(self, station: StationConfig) -> StreamGuard:
        return self.streams.guard_for(station)

    def _lock(self, guild_id: int) -> asyncio.Lock:
        """One connect at a time per guild (two /join at once would race for the connection)."""
        return self._locks.setdefault(guild_id, asyncio.Lock())

    # Closes, moves and rejoins ------------------------------------------------------------

    def _move_failed(self, left: VoiceSession) -> None:
        """A move's new channel could not be reached: back to the channel it left."""
        if not self._closing:
            self.rejoins.schedule(left, first_delay=0.0)

    def _closed(self, voice_client: OnAirVoiceClient) -> None:
        """A voice connection ended for good (called by the client's cleanup)."""
        guild_id = voice_client.guild.id
        player = self.players.get(guild_id)
        if player is None or player.client is not voice_client:
            return  # replaced, or left by OnAir
        self.figures.retire(self.players.pop(guild_id, None))
        self.idle.cancel(guild_id)
        if voice_client.leaving or self._closing:
            return
        self.notices.stopped(guild_id, player.channel_id)
        if voice_client.kicked:
            _LOGGER.info(
                "removed from voice in guild %s (by a moderator, or the channel is gone): "
                "staying out until someone runs /join",
                guild_id,
            )
            self.homes.held.add(guild_id)
            self._spawn(self.storage.remove_voice_session(guild_id))
            self.refresh_presence()
            return
        _LOGGER.warning("voice connection in guild %s failed for good: rejoining", guild_id)
        self.rejoins.schedule(VoiceSession(guild_id, player.channel_id, player.station))

    def _moved(self, voice_client: OnAirVoiceClient) -> None:
        """Moved to another channel (by a moderator): discord.py follows; so does the session."""
        guild_id = voice_client.guild.id
        player = self.players.get(guild_id)
        channel = voice_client.channel
        if player is None or player.client is not voice_client or channel is None:
            return
        if player.channel_id != channel.id:
            self.notices.stopped(guild_id, player.channel_id)
            self.notices.started(guild_id, channel.id, player.station)
            player.channel_id = channel.id
            session = VoiceSession(guild_id, channel.id, player.station)
            self._spawn(self.storage.save_voice_session(session, now=self.timers.now()))
            self._update_idle(guild_id)

    async def rejoin_stored(self) -> None:
        """On READY (start-up and every gateway re-identify): rejoin each stored session of this
        process's guilds that has no live connection, then each home channel an admin has
        configured (``/onair voice channel``) in a guild with no session, unless someone
        stopped voice there in this run (:meth:`leave`): a /leave holds until the next start
        (``HomeChannels.rejoin_stored``)."""
        if not self.available or self._closing:
            return
        await self.homes.rejoin_stored()

    # Listeners ----------------------------------------------------------------------------

    def voice_state_changed(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        """Any member's voice state changed: recount the listeners of an affected player, and
        hand someone who came into the bot's channel to its DAVE proposals kept for them."""
        guild_id = member.guild.id
        arrived = getattr(after.channel, "id", None)
        voice_client = member.guild.voice_client
        if (
            arrived is not None
            and arrived != getattr(before.channel, "id", None)
            and isinstance(voice_client, OnAirVoiceClient)
            and arrived == getattr(voice_client.channel, "id", None)
            and not self._is_me(member)
        ):
            self._spawn(voice_client.member_arrived(member.id))
        player = self.players.get(guild_id)
        if player is None:
            return
        touched = {getattr(before.channel, "id", None), getattr(after.channel, "id", None)}
        if player.channel_id in touched or self._is_me(member):
            self._update_idle(guild_id)

    def _is_me(self, member: discord.abc.User) -> bool:
        user = self.client.user
        return user is not None and member.id == user.id

    def listeners(self, guild_id: int) -> int:
        """Members who are not bots in the guild's player's channel (``VoiceFigures``)."""
        return self.figures.listeners(guild_id)

    def _update_idle(self, guild_id: int) -> None:
        player = self.players.get(guild_id)
        if player is None:
            self.idle.cancel(guild_id)
            return
        voice = self.guild_voice(guild_id)
        self.idle.update(
            guild_id,
            self.listeners(guild_id),
            home=voice.home_channel == player.channel_id,
            leave_after=voice.leave_when_empty,
        )

    def _channel_empty(self, guild_id: int) -> None:
        _LOGGER.info("voice channel of guild %s has been empty: leaving", guild_id)
        self._spawn(self._leave_empty(guild_id))

    async def _leave_empty(self, guild_id: int) -> None:
        """Leave a channel nobody listens in; then back to the 24/7 home channel at once (not
        at the next READY), as at a start: unless /leave or a moderator holds the guild, or
        the home station no longer plays (the rejoin checks, and drops it with a log line)."""
        player = self.players.get(guild_id)
        left = player.channel_id if player is not None else 0
        await self.leave(guild_id, hold=False)
        self.homes.go_home(guild_id, left)

    # Figures (``VoiceFigures``) -------------------------------------------------------------

    def playing(self, station: str) -> bool:
        return self.figures.playing(station)

    def listeners_by_station(self) -> dict[str, int]:
        return self.figures.listeners_by_station()

    def frames_sent(self) -> int:
        """Frames every player sent since start-up (the engine's sources count them)."""
        return self.figures.frames_sent()

    def decoder_restarts(self) -> dict[str, int]:
        return self.figures.decoder_restarts()

    def register_metrics(self, metrics: Metrics) -> None:
        self.figures.register_metrics(metrics)
        sender = self.sender
        if sender is not None:  # (stalled sends set aside: a machine too busy for its guilds)
            metrics.gauges["voice_sender_rescues"] = lambda: sender.rescues

    # Presence -----------------------------------------------------------------------------

    def start(self) -> None:
        """Start the presence loop (idempotent; the voice cog calls it on READY)."""
        if self._closing:
            return
        self.presence_updater.start()

    def refresh_presence(self) -> None:
        self.presence_updater.refresh()

    async def update_presence(self) -> None:
        """Per shard: the station played in most of its guilds (else the default station); its
        track as "Listening to ..." when it changed, at most once per interval."""
        await self.presence_updater.update()

    # Life ---------------------------------------------------------------------------------

    def _spawn(self, work: Awaitable[Any]) -> None:
        self._tasks.spawn(work)

    async def close(self, within: float = GOODBYE) -> None:
        """Stop every player (sessions stay stored: the next start rejoins them). The goodbyes
        to Discord (statuses cleared, then every guild's disconnect at once) share ``within``
        seconds; a connection Discord did not let go of by then is dropped here, so a Discord
        that does not answer cannot hold the stop, however many guilds play."""
        self._closing = True
        deadline = self.timers.now() + within
        self.idle.close()
        self.rejoins.cancel_all()
        for task in self._tasks:
            task.cancel()
        self.presence_updater.stop()
        players = list(self.players.values())
        if self.listener.target is not None and players:
            # Shutting down: OnAir's statuses go while it can still clear them.
            leaving = (self.notices.leaving(p.guild_id, p.channel_id) for p in players)
            await settle(leaving, deadline - self.timers.now())
        clients = [p.client for p in players if p.client is not None]
        for client in clients:
            client.leaving = True
        left = (client.disconnect(force=True) for client in clients)
        unfinished = await settle(left, deadline - self.timers.now())
        for client in clients:
            client.drop()
        if unfinished:
            _LOGGER.warning("voice: Discord did not answer %d disconnect(s) in time", unfinished)
        self.players.clear()
        if self.sender is not None:
            self.sender.close()
        if self.hub is not None:
            await self.hub.close()
