"""Voice: play a station in guilds' voice and stage channels, one decode per station.

The service owns every guild's player (one voice connection per guild), decides what may play
where, keeps (guild, channel, station) in storage so the bot rejoins after a restart or a
gateway reconnect, leaves channels nobody listens in, rejoins after voice failures discord.py
gives up on (see ``bot.voice.client``), and tells the shows (channel status) when players start
and stop. Its helpers: ``streams.py`` (which stream, probed and guarded), ``connect.py``
(connecting, moving and starting the audio), ``rejoins.py`` (the retried rejoin per guild) and
``presence.py`` (the bot's status line). The audio comes from the engine
(``bot.voice.broadcast``: one FFmpeg per station fanned out to every guild), reached through
the small :class:`AudioHub` interface; the composition root passes both in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import discord

from .. import errors
from ..catalog.registry import StationRegistry
from ..config import Settings, StationConfig
from ..errors import VoiceRefused
from ..runtime.tasks import BackgroundTasks
from ..storage import GuildVoice, Storage, VoiceSession
from .client import OnAirVoiceClient, voice_client_class
from .connect import PlayerConnector
from .idle import EmptyChannelWatch
from .players import (
    AudioHub,
    Joined,
    Player,
    PlayerListener,
    Probe,
    VoiceChannel,
    listeners_in,
    missing_permissions,
    station_name,
)
from .presence import PresenceGate, PresenceUpdater
from .rejoins import REJOIN_DELAYS, Rejoins
from .stream import StreamGuard
from .streams import StationStreams
from .timers import LoopTimers, Timers

if TYPE_CHECKING:
    from ..runtime.metrics import Metrics

_LOGGER = logging.getLogger("onair.voice")

LEAVE_NOTICE_TIMEOUT = 5.0  # seconds a leave waits for the channel status to be cleared


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
    ) -> None:
        self.client = client
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.hub = hub
        self.probe = probe
        self.timers: Timers = timers or LoopTimers()
        self.connect_timeout = connect_timeout
        self.players: dict[int, Player] = {}
        self.idle = EmptyChannelWatch(self.timers, self._channel_empty)
        self._voice: dict[int, GuildVoice] = {}
        # Guilds where someone stopped voice in this run (/leave, a moderator's disconnect): no
        # home channel rejoin until a /join, /onair voice or the next start.
        self._held: set[int] = set()
        self.rejoins = Rejoins(self._rejoin_once, rejoin_delays)
        self._locks: dict[int, asyncio.Lock] = {}
        self.streams = StationStreams(settings, registry, hub=hub, probe=probe)
        self._tasks = BackgroundTasks(lambda error: _LOGGER.warning("voice task failed: %r", error))
        self.presence_updater = PresenceUpdater(
            client, settings, registry, self.players, self.timers, self._spawn
        )
        self._client_class = voice_client_class(self._closed, self._moved)
        self._closing = False
        self.connector = PlayerConnector(
            self.players,
            hub,
            self.streams,
            self._client_class,
            leaving=self._leaving,
            move_failed=self._move_failed,
            retire=self._retire,
        )
        self.listener: PlayerListener | None = None
        self._frames_retired = 0  # frames sent by players that have stopped

    @property
    def rejoined(self) -> int:
        """Sessions rejoined after a restart, reconnect or failure (tests, logs)."""
        return self.rejoins.rejoined

    @property
    def rejoin_delays(self) -> tuple[float, ...]:
        return self.rejoins.delays

    @rejoin_delays.setter
    def rejoin_delays(self, delays: tuple[float, ...]) -> None:
        self.rejoins.delays = delays

    @property
    def presence(self) -> PresenceGate:
        """When each shard's status line was sent, and what it says."""
        return self.presence_updater.gate

    @presence.setter
    def presence(self, gate: PresenceGate) -> None:
        self.presence_updater.gate = gate

    @property
    def available(self) -> bool:
        return self.hub is not None and self.probe is not None

    # Settings -----------------------------------------------------------------------------

    async def load(self) -> None:
        """Read every guild's voice settings (at start-up, after storage opened)."""
        self._voice = {v.guild_id: v for v in await self.storage.all_guild_voice()}

    def guild_voice(self, guild_id: int) -> GuildVoice:
        return self._voice.get(guild_id) or GuildVoice(guild_id)

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
            raise VoiceRefused(text.format(station=station_name(station)))

    def check_channel(self, channel: VoiceChannel) -> None:
        """VoiceRefused naming the permissions OnAir lacks in ``channel``."""
        me = channel.guild.me
        missing = missing_permissions(channel, me)
        if missing:
            names = f"**{_and(missing)}** permission" + ("s" if len(missing) > 1 else "")
            raise VoiceRefused(
                errors.JOIN_NO_PERMISSION.format(channel=channel.mention, missing=names)
            )
        if isinstance(channel, discord.StageChannel):
            allowed = channel.permissions_for(me)
            if not (allowed.mute_members or allowed.request_to_speak):
                raise VoiceRefused(errors.STAGE_CANNOT_SPEAK.format(channel=channel.mention))

    # Join and leave -----------------------------------------------------------------------

    async def join(self, channel: VoiceChannel, station: StationConfig) -> Joined:
        """Play ``station`` in ``channel`` (moving the guild's player there if it is elsewhere).
        Raises VoiceRefused with the reason when it cannot."""
        self.check_can_play(station)
        self.check_channel(channel)
        guild_id = channel.guild.id
        self._held.discard(guild_id)
        self.rejoins.cancel(guild_id)  # asked for explicitly: this join wins
        async with self._lock(guild_id):
            stream_url, opened = await self.streams.open_for(station)
            note = await self.connector.connect_and_play(
                channel, station, stream_url, opened, connect_timeout=self.connect_timeout
            )
        await self.storage.save_voice_session(
            VoiceSession(channel.guild.id, channel.id, station.slug), now=self.timers.now()
        )
        self._update_idle(channel.guild.id)
        self.refresh_presence()
        self._started(guild_id, channel.id, station.slug)
        return Joined(channel, station, note)

    # Where players start and stop (for the channel status) --------------------------------

    def channels_playing(self, station: str) -> list[tuple[int, int]]:
        """(guild, channel) of every player of ``station`` in this process."""
        return [(p.guild_id, p.channel_id) for p in self.players.values() if p.station == station]

    def status_enabled(self, guild_id: int) -> bool:
        return self.guild_voice(guild_id).channel_status

    def _started(self, guild_id: int, channel_id: int, station: str) -> None:
        if self.listener is not None:
            self._spawn(self.listener.player_started(guild_id, channel_id, station))

    def _stopped(self, guild_id: int, channel_id: int) -> None:
        """A player stopped without OnAir leaving first (a moderator, a failure)."""
        if self.listener is not None:
            self._spawn(self._leaving_then_changed(guild_id, channel_id))

    async def _leaving_then_changed(self, guild_id: int, channel_id: int) -> None:
        if self.listener is not None:
            await self.listener.player_leaving(guild_id, channel_id)
            await self.listener.players_changed()

    async def _leaving(self, guild_id: int, channel_id: int) -> None:
        """Before OnAir leaves a channel: its status is cleared while OnAir is still there
        (bounded: a slow Discord does not hold the leave)."""
        if self.listener is None:
            return
        try:
            await asyncio.wait_for(
                self.listener.player_leaving(guild_id, channel_id), LEAVE_NOTICE_TIMEOUT
            )
        except Exception as error:
            _LOGGER.info("channel %s status not cleared: %s", channel_id, type(error).__name__)

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
            self._held.add(guild_id)
        self.rejoins.cancel(guild_id)
        self.idle.cancel(guild_id)
        leaving = self.players.get(guild_id)
        if leaving is not None:
            await self._leaving(guild_id, leaving.channel_id)
        player = self._retire(self.players.pop(guild_id, None))
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
        if self.listener is not None and player is not None:
            self._spawn(self.listener.players_changed())
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
        self._retire(self.players.pop(guild_id, None))
        self.idle.cancel(guild_id)
        if voice_client.leaving or self._closing:
            return
        self._stopped(guild_id, player.channel_id)
        if voice_client.kicked:
            _LOGGER.info(
                "removed from voice in guild %s (by a moderator, or the channel is gone): "
                "staying out until someone runs /join",
                guild_id,
            )
            self._held.add(guild_id)
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
            self._stopped(guild_id, player.channel_id)
            self._started(guild_id, channel.id, player.station)
            player.channel_id = channel.id
            session = VoiceSession(guild_id, channel.id, player.station)
            self._spawn(self.storage.save_voice_session(session, now=self.timers.now()))
            self._update_idle(guild_id)

    async def rejoin_stored(self) -> None:
        """On READY (start-up and every gateway re-identify): rejoin each stored session of this
        process's guilds that has no live connection, then each home channel an admin has
        configured (``/onair voice channel``) in a guild with no session, unless someone
        stopped voice there in this run (:meth:`leave`): a /leave holds until the next start."""
        if not self.available or self._closing:
            return
        try:
            sessions = await self.storage.voice_sessions()
            # Read again, not the cached settings: another process may have changed them.
            homes = await self.storage.all_guild_voice()
        except Exception as error:
            if not self._closing:  # (closing: the bot stopped right after READY)
                _LOGGER.warning(
                    "could not read the stored voice sessions: %s", type(error).__name__
                )
            return
        for session in sessions:
            if self.client.get_guild(session.guild_id) is None:
                continue  # another shard's or process's guild, or the bot left it
            player = self.players.get(session.guild_id)
            if player is not None and player.client is not None and player.client.is_connected():
                continue
            if session.guild_id not in self.rejoins:
                self.rejoins.schedule(session, first_delay=0.0)
        stored = {session.guild_id for session in sessions}
        for voice in homes:
            self._voice[voice.guild_id] = voice
            guild_id = voice.guild_id
            if not voice.home_channel or guild_id in stored or guild_id in self._held:
                continue
            if self.client.get_guild(guild_id) is None or self.present(guild_id):
                continue
            station = self._home_station(voice)
            if station is not None:
                self.rejoins.schedule(
                    VoiceSession(guild_id, voice.home_channel, station.slug), first_delay=0.0
                )

    def _home_station(self, voice: GuildVoice) -> StationConfig | None:
        """The station the home channel plays: the one set with it, else the guild's default."""
        try:
            return self.registry.resolve(voice.guild_id, voice.station or None)
        except errors.OnAirError as error:
            _LOGGER.info(
                "not rejoining the home channel of guild %s: %s", voice.guild_id, error.message
            )
            return None

    async def _rejoin_once(self, session: VoiceSession) -> bool | None:
        """True: playing again; False: nothing to rejoin (session dropped); None: try again."""
        guild = self.client.get_guild(session.guild_id)
        channel = guild.get_channel(session.channel_id) if guild is not None else None
        station = self.registry.station(session.station)
        if guild is None or station is None or not isinstance(channel, VoiceChannel):
            _LOGGER.info("voice session of guild %s has nothing left to rejoin", session.guild_id)
            await self.storage.remove_voice_session(session.guild_id)
            return False
        try:
            self.check_can_play(station)
            self.check_channel(channel)
        except VoiceRefused as refused:
            _LOGGER.info("not rejoining voice in guild %s: %s", guild.id, refused.message)
            await self.storage.remove_voice_session(session.guild_id)
            return False
        try:
            async with self._lock(guild.id):
                stream_url, opened = await self.streams.open_for(station)
                await self.connector.connect_and_play(
                    channel, station, stream_url, opened, connect_timeout=self.connect_timeout
                )
        except VoiceRefused as refused:
            _LOGGER.info("rejoining voice in guild %s failed: %s", guild.id, refused.message)
            return None
        except Exception as error:  # a station error, Discord 5xx: try again later
            _LOGGER.warning(
                "rejoining voice in guild %s failed: %s", guild.id, type(error).__name__
            )
            return None
        self._update_idle(guild.id)
        self.refresh_presence()
        self._started(guild.id, channel.id, station.slug)
        return True

    # Listeners ----------------------------------------------------------------------------

    def voice_state_changed(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        """Any member's voice state changed: recount the listeners of an affected player."""
        guild_id = member.guild.id
        player = self.players.get(guild_id)
        if player is None:
            return
        touched = {getattr(before.channel, "id", None), getattr(after.channel, "id", None)}
        if player.channel_id in touched or self._is_me(member):
            self._update_idle(guild_id)

    def _is_me(self, member: discord.abc.User) -> bool:
        user = self.client.user
        return user is not None and member.id == user.id

    def _player_channel(self, player: Player) -> discord.abc.GuildChannel | None:
        guild = self.client.get_guild(player.guild_id)
        return guild.get_channel(player.channel_id) if guild is not None else None

    def listeners(self, guild_id: int) -> int:
        player = self.players.get(guild_id)
        if player is None:
            return 0
        me = self.client.user
        return listeners_in(self._player_channel(player), me.id if me else 0)

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
        self._go_home(guild_id, left)

    def _go_home(self, guild_id: int, left: int) -> bool:
        voice = self.guild_voice(guild_id)
        home = voice.home_channel
        if not home or home == left or guild_id in self._held or self._closing:
            return False
        if guild_id in self.players or guild_id in self.rejoins:
            return False  # someone's /join got there first
        station = self._home_station(voice)
        if station is None:
            return False
        _LOGGER.info("voice in guild %s: back to the home channel", guild_id)
        self.rejoins.schedule(VoiceSession(guild_id, home, station.slug), first_delay=0.0)
        return True

    # Figures ------------------------------------------------------------------------------

    def playing(self, station: str) -> bool:
        return any(p.station == station for p in self.players.values())

    def listeners_by_station(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for guild_id, player in self.players.items():
            counts[player.station] += self.listeners(guild_id)
        return dict(counts)

    def frames_sent(self) -> int:
        """Frames every player sent since start-up (the engine's sources count them)."""
        playing = sum(_frames(p) for p in self.players.values())
        return self._frames_retired + playing

    def _retire(self, player: Player | None) -> Player | None:
        if player is not None:
            self._frames_retired += _frames(player)
        return player

    def decoder_restarts(self) -> dict[str, int]:
        if self.hub is None:
            return {}
        return {key: int(getattr(s, "restarts", 0)) for key, s in self.hub.stats().items()}

    def register_metrics(self, metrics: Metrics) -> None:
        metrics.gauges["voice_guilds"] = lambda: len(self.players)
        metrics.gauges["voice_frames_sent"] = self.frames_sent
        metrics.labelled["voice_listeners"] = ("station", self.listeners_by_station)
        metrics.labelled["voice_decoder_restarts"] = ("station", self.decoder_restarts)

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

    async def close(self) -> None:
        """Stop every player (sessions stay stored: the next start rejoins them)."""
        self._closing = True
        self.idle.close()
        self.rejoins.cancel_all()
        for task in self._tasks:
            task.cancel()
        self.presence_updater.stop()
        if self.listener is not None and self.players:
            # Shutting down: OnAir's statuses go while it can still clear them.
            await asyncio.gather(
                *(self._leaving(p.guild_id, p.channel_id) for p in self.players.values())
            )
        for player in list(self.players.values()):
            if player.client is not None:
                player.client.leaving = True
                with contextlib.suppress(Exception):
                    await player.client.disconnect(force=True)
        self.players.clear()
        if self.hub is not None:
            await self.hub.close()


def _frames(player: Player) -> int:
    return int(getattr(player.audio, "frames_sent", 0))


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
