"""Voice: play a station in guilds' voice and stage channels, one decode per station.

The service owns every guild's player (one voice connection per guild), decides what may play
where, keeps (guild, channel, station) in storage so the bot rejoins after a restart or a
gateway reconnect, leaves channels nobody listens in, rejoins after voice failures discord.py
gives up on (see ``bot.voice.client``), and sets the bot's presence. The audio comes from the
engine (``bot.voice.broadcast``: one FFmpeg per station fanned out to every guild), reached
through the small :class:`AudioHub` interface; the composition root passes both in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import discord

from .. import errors
from ..config import Settings, StationConfig
from ..errors import VoiceRefused
from ..netguard import trusted_hosts
from ..registry import StationRegistry, short_slug
from ..render.text import safe
from ..storage import GuildVoice, Storage, VoiceSession
from ..tasks import BackgroundTasks
from .client import OnAirVoiceClient, voice_client_class
from .idle import EmptyChannelWatch
from .presence import PresenceGate, presence_station, presence_text
from .stream import OpenedStream, StreamGuard, host_of
from .streams import choose_stream, stream_guard
from .timers import LoopTimers, Timers

if TYPE_CHECKING:
    from ..metrics import Metrics

_LOGGER = logging.getLogger("onair.voice")

VoiceChannel = discord.VoiceChannel | discord.StageChannel
# Seconds between rejoin attempts after a voice connection failed for good (then stays at the
# last): discord.py's own reconnects come first, this is what follows when it gives up.
REJOIN_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
REJOIN_ATTEMPTS = 20  # then the stored session waits for the next READY


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


LEAVE_NOTICE_TIMEOUT = 5.0  # seconds a leave waits for the channel status to be cleared


class StreamDown(Exception):
    """The probe could not open the stream (the composition root maps the engine's error)."""


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
    audio: discord.AudioSource | None = None


@dataclass(frozen=True, slots=True)
class Joined:
    """What /join did, for the reply."""

    channel: VoiceChannel
    station: StationConfig
    note: str = ""


def missing_permissions(channel: VoiceChannel, me: discord.Member) -> list[str]:
    """The permissions OnAir lacks to be heard in ``channel`` (names as Discord shows them)."""
    allowed = channel.permissions_for(me)
    missing = []
    if not allowed.view_channel:
        missing.append("View Channel")
    if not allowed.connect:
        return [*missing, "Connect"]  # (Discord then denies Speak too: Connect comes first)
    if isinstance(channel, discord.StageChannel):
        return missing  # speaking on a stage is checked after joining (unsuppress or request)
    if not allowed.speak:
        missing.append("Speak")
    return missing


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
        self.rejoin_delays = rejoin_delays
        self.players: dict[int, Player] = {}
        self.idle = EmptyChannelWatch(self.timers, self._channel_empty)
        self.presence = PresenceGate(self.timers)
        self._voice: dict[int, GuildVoice] = {}
        # Guilds where someone stopped voice in this run (/leave, a moderator's disconnect): no
        # home channel rejoin until a /join, /onair voice or the next start.
        self._held: set[int] = set()
        self._rejoins: dict[int, asyncio.Task[None]] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self._streams: dict[str, str] = {}  # station → the stream its decoder was started on
        # The owner's config hosts, stream_url hosts included (as the session's resolver trusts
        # them): a config station's stream and its redirects to these are played as configured.
        self._owner_hosts = registry.trusted_hosts | trusted_hosts(
            [s.stream_url for s in settings.stations if s.stream_url]
        )
        self._tasks = BackgroundTasks(lambda error: _LOGGER.warning("voice task failed: %r", error))
        self._presence_task: asyncio.Task[None] | None = None
        self._client_class = voice_client_class(self._closed, self._moved)
        self._closing = False
        self.rejoined = 0  # sessions rejoined after a restart, reconnect or failure (tests, logs)
        self.listener: PlayerListener | None = None
        self._frames_retired = 0  # frames sent by players that have stopped

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
            raise VoiceRefused(text.format(station=_name(station)))

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
        rejoin = self._rejoins.pop(guild_id, None)
        if rejoin is not None:
            rejoin.cancel()  # asked for explicitly: this join wins
        async with self._lock(guild_id):
            stream_url, opened = await self._stream_for(station)
            note = await self._connect_and_play(channel, station, stream_url, opened)
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
        return guild_id in self.players or guild_id in self._rejoins or connected

    async def leave(self, guild_id: int, *, hold: bool = True) -> bool:
        """Stop and leave; the stored session goes (no rejoin). ``hold`` (someone asked): the
        home channel too stays unplayed until a /join or the next start (see
        :meth:`rejoin_stored`). False when not playing here."""
        if hold:
            self._held.add(guild_id)
        rejoin = self._rejoins.pop(guild_id, None)
        if rejoin is not None:
            rejoin.cancel()
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

    async def _stream_for(self, station: StationConfig) -> tuple[str, OpenedStream | None]:
        """The stream to play, and the probe's open connection to it (the caller owns it:
        :meth:`_connect_and_play` hands it to the decoder or closes it). A station already
        playing in another guild shares its decoder: no station request and no probe, so a
        second guild opens no new connection."""
        running = self._running_stream(station.slug)
        if running is not None:
            return running, None
        assert self.probe is not None
        info = None
        if not station.stream_url:  # a set stream_url (the owner's, or a guild's) is played
            info = (await self.registry.snapshot(station)).info
        url = choose_stream(station, info, self.registry.policy, self.registry.trusted_hosts)
        if url is None:
            raise VoiceRefused(errors.NO_STREAM.format(station=_name(station)))
        try:
            # Every hop passes the station's guard before it is contacted, so where the
            # redirects ended (what the decoder reopens) passed it too.
            opened = await self.probe(url, self.guard_for(station))
        except StreamDown:
            raise VoiceRefused(errors.STREAM_UNREACHABLE.format(station=_name(station))) from None
        return opened.url, opened

    async def try_stream(self, station: StationConfig, stream_url: str) -> str:
        """Open ``stream_url`` once as ``station``'s stream (its guard on every hop, the status,
        audio arriving) and close it again; where its redirects end. VoiceRefused saying why
        (the host only, never a path or token) when it does not play."""
        if self.probe is None:
            raise VoiceRefused(errors.VOICE_UNAVAILABLE)
        try:
            opened = await self.probe(stream_url, self.guard_for(station))
        except StreamDown as down:
            reason = str(down) or "it does not play."
            raise VoiceRefused(errors.STREAM_URL_UNPLAYABLE.format(reason=reason)) from None
        opened.close()
        return opened.url

    async def stream_changed(self, station: StationConfig, played: str | None = None) -> bool:
        """``station``'s stream setting changed: its decoder, if it runs, switches to the new
        stream now (its players hear a moment of silence, not the old stream for hours); True
        when one switched. ``played``: where the new URL's redirects ended (just probed);
        None: the station's stream is chosen again (its best listen link after a clear)."""
        slug = station.slug
        if self.hub is None or not self.hub.is_running(slug):
            return False
        url = played
        if url is None:
            try:
                info = None if station.stream_url else (await self.registry.snapshot(station)).info
            except Exception as error:  # the station is down: its next start chooses again
                _LOGGER.info("stream of %s not switched now: %s", slug, type(error).__name__)
                return False
            url = choose_stream(station, info, self.registry.policy, self.registry.trusted_hosts)
        if url is None or not self.hub.retarget(slug, url, guard=self.guard_for(station)):
            return False
        self._streams[slug] = url
        _LOGGER.info("voice %s: the decoder switched to %s", slug, host_of(url))
        return True

    def guard_for(self, station: StationConfig) -> StreamGuard:
        """The URL policy for every connection and redirect hop of the station's stream: a
        guild's station is checked like every URL a guild gives; a config station's own hosts
        are the owner's (trusted as configured), its redirects elsewhere are checked."""
        trusted = frozenset() if station.owner_guild else self._owner_hosts
        return stream_guard(lambda: self.registry.policy, trusted)

    def _lock(self, guild_id: int) -> asyncio.Lock:
        """One connect at a time per guild (two /join at once would race for the connection)."""
        return self._locks.setdefault(guild_id, asyncio.Lock())

    def _running_stream(self, slug: str) -> str | None:
        """The stream of a decoder that runs (for another guild, or lingering after the last
        one left): joining it opens nothing new."""
        if self.hub is None or not self.hub.is_running(slug):
            return None
        return self._streams.get(slug)

    async def _connect_and_play(
        self,
        channel: VoiceChannel,
        station: StationConfig,
        stream_url: str,
        opened: OpenedStream | None = None,
    ) -> str:
        """Connect (or move) and play; ``opened`` (the probe's stream) goes to the decoder, or
        is closed when this fails, is cancelled or needs no new decoder."""
        try:
            return await self._connect_and_play_on(channel, station, stream_url, opened)
        finally:
            if opened is not None:
                opened.close()  # (a no-op once handed over: the decoder owns it then)

    async def _connect_and_play_on(
        self,
        channel: VoiceChannel,
        station: StationConfig,
        stream_url: str,
        opened: OpenedStream | None,
    ) -> str:
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
                    timeout=self.connect_timeout,
                    reconnect=True,
                    self_deaf=True,
                )
        except (TimeoutError, discord.ClientException) as error:
            _LOGGER.warning(
                "could not connect to voice in guild %s: %s", guild.id, type(error).__name__
            )
            if moving_from is not None and not self._closing:
                # The old channel was left for this one: go back there rather than fall silent.
                self._schedule_rejoin(moving_from, first_delay=0.0)
            raise VoiceRefused(
                errors.VOICE_CONNECT_FAILED.format(channel=channel.mention)
            ) from None
        note = (
            await self._take_the_stage(channel) if isinstance(channel, discord.StageChannel) else ""
        )
        player = self.players.get(guild.id)
        if player is None or player.client is not voice_client or player.station != station.slug:
            if voice_client.is_playing():
                voice_client.stop()  # the old source's cleanup releases its broadcast
            assert self.hub is not None
            try:
                first = opened.hand_over() if opened is not None else None
                audio = self.hub.audio_for(
                    station.slug, stream_url, first, guard=self.guard_for(station)
                )
            except Exception as error:  # the engine refuses a URL it must not hand FFmpeg
                _LOGGER.warning("no audio for %s: %s", station.slug, type(error).__name__)
                raise VoiceRefused(errors.NO_STREAM.format(station=_name(station))) from None
            voice_client.play(audio, after=self._after_play(guild.id))
            self._retire(player)
            self._streams[station.slug] = stream_url
            player = Player(guild.id, channel.id, station.slug, voice_client, audio)
            self.players[guild.id] = player
        player.channel_id = channel.id
        return note

    async def _take_the_stage(self, channel: discord.StageChannel) -> str:
        """Speak on a stage: unsuppress itself as a stage moderator, else request to speak."""
        me = channel.guild.me
        allowed = channel.permissions_for(me)
        try:
            if allowed.mute_members:
                await me.edit(suppress=False)
                return ""
            if allowed.request_to_speak:
                await me.request_to_speak()
                return (
                    f"I asked to speak on {channel.mention}: a stage moderator can invite me "
                    "up to be heard."
                )
        except discord.HTTPException as error:
            _LOGGER.warning("stage %s refused OnAir as a speaker (%s)", channel.id, error.status)
        return errors.STAGE_CANNOT_SPEAK.format(channel=channel.mention)

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

    # Closes, moves and rejoins ------------------------------------------------------------

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
        self._schedule_rejoin(VoiceSession(guild_id, player.channel_id, player.station))

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
            if session.guild_id not in self._rejoins:
                self._schedule_rejoin(session, first_delay=0.0)
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
                self._schedule_rejoin(
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

    def _schedule_rejoin(self, session: VoiceSession, *, first_delay: float | None = None) -> None:
        previous = self._rejoins.pop(session.guild_id, None)
        if previous is not None:
            previous.cancel()
        task = asyncio.create_task(
            self._rejoin(session, first_delay), name=f"voice rejoin {session.guild_id}"
        )
        self._rejoins[session.guild_id] = task

    async def _rejoin(self, session: VoiceSession, first_delay: float | None) -> None:
        try:
            for attempt in range(REJOIN_ATTEMPTS):
                delay = self.rejoin_delays[min(attempt, len(self.rejoin_delays) - 1)]
                if attempt == 0 and first_delay is not None:
                    delay = first_delay
                await asyncio.sleep(delay)
                outcome = await self._rejoin_once(session)
                if outcome is not None:
                    if outcome:
                        self.rejoined += 1
                    return
            _LOGGER.warning(
                "gave up rejoining voice in guild %s; next try at the next READY", session.guild_id
            )
        finally:
            if self._rejoins.get(session.guild_id) is asyncio.current_task():
                self._rejoins.pop(session.guild_id, None)

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
                stream_url, opened = await self._stream_for(station)
                await self._connect_and_play(channel, station, stream_url, opened)
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
        if guild_id in self.players or guild_id in self._rejoins:
            return False  # someone's /join got there first
        station = self._home_station(voice)
        if station is None:
            return False
        _LOGGER.info("voice in guild %s: back to the home channel", guild_id)
        self._schedule_rejoin(VoiceSession(guild_id, home, station.slug), first_delay=0.0)
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
        if self._presence_task is None or self._presence_task.done():
            self._presence_task = asyncio.create_task(self._presence_loop(), name="presence")

    def refresh_presence(self) -> None:
        if self._presence_task is not None and not self._presence_task.done():
            self._spawn(self.update_presence())

    async def _presence_loop(self) -> None:
        while True:
            try:
                await self.update_presence()
            except Exception as error:  # a station down: the next round tries again
                _LOGGER.debug("presence update failed: %s", type(error).__name__)
            await asyncio.sleep(self.presence.interval)

    async def update_presence(self) -> None:
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
            if not self.presence.due(shard_id, text):
                continue
            activity = (
                discord.Activity(type=discord.ActivityType.listening, name=text) if text else None
            )
            self.presence.sent(shard_id, text)
            await _change_presence(self.client, activity, shard_id)

    # Life ---------------------------------------------------------------------------------

    def _spawn(self, work: Awaitable[Any]) -> None:
        self._tasks.spawn(work)

    async def close(self) -> None:
        """Stop every player (sessions stay stored: the next start rejoins them)."""
        self._closing = True
        self.idle.close()
        for task in [*self._rejoins.values(), *self._tasks]:
            task.cancel()
        if self._presence_task is not None:
            self._presence_task.cancel()
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


async def _change_presence(
    client: discord.Client, activity: discord.Activity | None, shard_id: int
) -> None:
    if isinstance(client, discord.AutoShardedClient):
        await client.change_presence(activity=activity, shard_id=shard_id)
    else:
        await client.change_presence(activity=activity)


def _frames(player: Player) -> int:
    return int(getattr(player.audio, "frames_sent", 0))


def _name(station: StationConfig) -> str:
    return safe(station.name, limit=80) or short_slug(station)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
