"""Shows: what a station plays, shown where a guild looks outside messages — the voice channel
OnAir plays in (its status, or a stage's topic) and Discord Scheduled Events for live shows.

Both are driven by one hook: the announcer's watch of the station tells ``station_changed`` of
each new play once, and it updates every guild of this process that plays the station or asked
for its events (no per-guild polling). The voice service tells ``player_started`` and
``player_leaving`` so a channel shows the play on air at once and is cleared when OnAir leaves.
Each poll of a watch comes to ``observe`` as well: a station that stops answering or playing
for longer than ``offline_after`` (the alerts' setting and rule) has its open events completed
and OnAir's channel statuses cleared; the first poll that finds it playing again shows its play.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import replace
from typing import Any

import discord

from ..announcer.watcher import Announcement
from ..catalog.registry import StationRegistry
from ..config import GuildConfig, StationConfig
from ..scheduled.alerts import Observation
from ..station import ScheduledShow, StationError, StationInfo
from ..station.schedule import from_json, to_json
from ..station.source import Feature
from ..storage import Storage
from ..util.hooks import Hook
from ..util.tasks import stop_task
from ..voice.players import PlayerListener
from .channel_status import ChannelStatusKeeper, Players, follow_status_events
from .events import ShowEvents, may_make_events
from .slots import AHEAD

_LOGGER = logging.getLogger("onair.shows")
SCHEDULE_EVERY = 300.0  # seconds between two reads of a station's schedule (the whole fleet)
SCHEDULE_TICK = 60.0  # how often a process looks (the read itself is claimed in storage)
SCHEDULE_STALE = 4  # a schedule older than this many reads changes nothing


class ShowsService:
    """Built by ``create_bot``; the announcer and the voice service call into it."""

    def __init__(
        self,
        client: discord.Client,
        storage: Storage,
        registry: StationRegistry,
        players: Players,
        *,
        refresh_watches: Hook[Callable[[], Awaitable[None]]],
        player_events: Hook[PlayerListener] | None = None,
        handles_guild: Callable[[int], bool],
        pace: Callable[[], Awaitable[None]] | None = None,
        guild_configs: tuple[GuildConfig, ...] = (),
        offline_after: float = 120.0,
        clock: Callable[[], float] = time.time,
        schedule_every: float = SCHEDULE_EVERY,
    ) -> None:
        """``refresh_watches``: the announcer's, bound once it is built (it is built after the
        shows, whose plays and polls it reports); ``player_events``: the voice service's
        listener, which the shows become."""
        self.client = client
        self.storage = storage
        self.registry = registry
        self.players = players
        self._refresh_watches = refresh_watches
        self.handles_guild = handles_guild
        self.guild_configs = guild_configs
        self.status = ChannelStatusKeeper(client, storage, players, pace=pace)
        self.events = ShowEvents(
            client, storage, pace=pace, clock=clock, handles_guild=handles_guild
        )
        self._event_stations: set[str] = set()
        self._playing: set[str] = set()  # stations this process plays in voice
        self.offline_after = offline_after
        self.clock = clock
        self._down_since: dict[str, float] = {}  # station → its outage's first poll
        self._down: set[str] = set()  # stations down longer than offline_after (handled)
        self._poll_locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._reported = False  # the missing-permission lines are said once per start
        self.schedule_every = schedule_every
        self._schedule_task: asyncio.Task[None] | None = None
        if player_events is not None:
            player_events.bind(self)

    def follow_gateway(self) -> None:
        """Before the client connects: read voice channel statuses off the gateway."""
        follow_status_events(self.client, self.status.seen)

    async def load(self) -> None:
        """At start-up, before the voice settings are read: the config file's ``[[guilds]]``
        choices (``live_events`` turns events on, ``voice_status`` when set), then what OnAir
        wrote and which stations have events."""
        for guild in self.guild_configs:
            for station in guild.live_events:
                await self.storage.set_show_events(guild.id, station, on=True)
            if guild.voice_status is not None:
                voice = await self.storage.guild_voice(guild.id)
                if voice.channel_status != guild.voice_status:
                    await self.storage.save_guild_voice(
                        replace(voice, channel_status=guild.voice_status)
                    )
        await self.status.load()
        await self._load_event_stations()

    async def _load_event_stations(self) -> None:
        pairs = await self.storage.show_event_guilds()
        self._event_stations = {station for guild, station in pairs if self.handles_guild(guild)}

    async def report_missing_permissions(self) -> None:
        """Once ready (the guilds known): a WARNING per guild whose live-show events are on but
        where OnAir may not make events, so the owner learns it at start-up, not at the next
        live show."""
        if self._reported:
            return
        self._reported = True
        stations: defaultdict[int, list[str]] = defaultdict(list)
        try:
            pairs = await self.storage.show_event_guilds()
        except Exception as error:
            if self.client.is_closed():
                return  # the bot stopped right after READY: its storage is closed, nothing to tell
            self.storage.log_fault_or_raise(
                error, _LOGGER, "live-show event permissions not checked"
            )
            return
        for guild_id, station in pairs:
            if self.handles_guild(guild_id):
                stations[guild_id].append(station)
        for guild_id, names in sorted(stations.items()):
            guild = self.client.get_guild(guild_id)
            if guild is None or may_make_events(guild):
                continue
            _LOGGER.warning(
                "guild %s (%s): live-show events are on for %s (live_events or /onair events) "
                "but OnAir lacks the Create Events permission there (Manage Events alone is not "
                "enough); no event is made until a server admin grants it",
                guild_id,
                guild.name[:100],
                ", ".join(sorted(names)),
            )

    async def refresh_watches(self) -> None:
        """Ask the announcer to plan its watches again (nothing before it is built)."""
        refresh = self._refresh_watches.target
        if refresh is not None:
            await refresh()

    def wanted_stations(self) -> set[str]:
        """Stations the announcer watches for shows (besides the announced ones)."""
        return self._event_stations | self._playing

    # The one hook -------------------------------------------------------------------------

    async def station_changed(self, station: str, announcement: Announcement) -> None:
        if not announcement.on_air:
            return  # a play recovered once it had ended: what is on air comes right after
        play = announcement.play
        try:
            await self.status.station_changed(station, play)
        except Exception as error:  # storage down: the next play tries again
            _LOGGER.warning("voice statuses of %s not updated: %r", station, error)
        try:
            # (Also where no guild wants events any more: an open one still gets completed.)
            await self.events.station_changed(station, play, announcement.info)
        except Exception as error:
            _LOGGER.warning("live-show events of %s not updated: %r", station, error)

    # Polls --------------------------------------------------------------------------------

    def observe(
        self, slugs: list[str], info: StationInfo | None, error: StationError | None
    ) -> Coroutine[Any, Any, None]:
        """One poll of a watch (its stations ``slugs``), timed now: the work that follows it,
        which the announcer runs in the background."""
        now = self.clock()
        problem = Observation(info, error.message if error is not None else "").problem
        return self._polled(slugs, info, problem, now)

    async def _polled(
        self, slugs: list[str], info: StationInfo | None, problem: str, now: float
    ) -> None:
        for station in slugs:
            # One poll's work at a time per station, in the order of the polls (a fair lock):
            # a slow "down" never lands after the "back" of the poll that followed it.
            async with self._poll_locks[station]:
                await self._judge(station, info, problem, now)

    async def _judge(
        self, station: str, info: StationInfo | None, problem: str, now: float
    ) -> None:
        if not problem:
            self._down_since.pop(station, None)
            if station in self._down and info is not None:
                self._down.discard(station)  # back: its channels show what plays
                await self._guarded("voice statuses", station, self._back(station, info))
            return
        since = self._down_since.setdefault(station, now)
        if now - since < self.offline_after:
            return  # flapping: nothing changes yet
        if station not in self._down:
            _LOGGER.info("%s down for %.0f s: its live-show events end", station, now - since)
        # (Every poll while down: an event Discord did not complete is tried again.)
        self._down.add(station)
        await self._guarded("live-show events", station, self.events.station_down(station))
        await self._guarded("voice statuses", station, self.status.station_down(station))

    async def _back(self, station: str, info: StationInfo) -> None:
        await self.status.station_changed(station, info.current_play())

    async def _guarded(self, what: str, station: str, work: Awaitable[None]) -> None:
        try:
            await work
        except Exception as error:  # storage down: the next poll tries again
            _LOGGER.warning("%s of %s not updated: %r", what, station, error)

    # Voice --------------------------------------------------------------------------------

    async def player_started(self, guild_id: int, channel_id: int, station: str) -> None:
        """OnAir plays ``station`` in the channel: show what is on air now (its info is cached
        from the join), and have the station watched if it was not."""
        if station not in self._playing:
            self._playing.add(station)
            await self.refresh_watches()
        config = self.registry.station(station)
        if config is None:
            return
        try:
            info = (await self.registry.snapshot(config)).info
        except Exception as error:  # the station is down: its next play will show
            _LOGGER.info("status of channel %s waits: %s", channel_id, type(error).__name__)
            return
        await self.status.show(guild_id, channel_id, info.current_play())

    async def player_leaving(self, guild_id: int, channel_id: int) -> None:
        await self.status.clear(guild_id, channel_id)

    async def players_changed(self) -> None:
        """A player stopped: stop watching stations nobody plays here (and nobody announces)."""
        playing = {station for station in self._playing if self.players.channels_playing(station)}
        if playing != self._playing:
            self._playing = playing
            await self.refresh_watches()

    async def voice_settings_changed(self, guild_id: int, channel_id: int | None) -> None:
        """The guild turned the status on or off: show or clear it now where OnAir plays."""
        if channel_id is None:
            return
        for station in list(self._playing):
            if (guild_id, channel_id) in self.players.channels_playing(station):
                await self.player_started(guild_id, channel_id, station)

    # Scheduled shows ----------------------------------------------------------------------

    async def start_schedules(self, *, every: float = SCHEDULE_TICK) -> None:
        """Read the schedules of the stations with events every ``every`` seconds, off the
        announcement path (the first read one tick after start)."""
        self._schedule_task = asyncio.create_task(self._schedule_loop(every))

    async def stop_schedules(self) -> None:
        await stop_task(self._schedule_task)
        self._schedule_task = None

    async def _schedule_loop(self, every: float) -> None:
        while True:
            await asyncio.sleep(every)
            try:
                await self.schedule_tick()
            except Exception as error:  # storage down: the next tick tries again
                _LOGGER.warning("station schedules not read: %r", error)

    async def schedule_tick(self) -> None:
        """Each station with events in this process's guilds whose host publishes a schedule:
        its upcoming live shows as the guilds' SCHEDULED events (read from the host once per
        ``schedule_every`` for the whole fleet, shared through storage)."""
        await self.client.wait_until_ready()
        now = self.clock()
        pairs = [
            (guild, station)
            for guild, station in await self.storage.show_event_guilds()
            if self.handles_guild(guild)
        ]
        for station in sorted({station for _, station in pairs}):
            config = self.registry.station(station)
            if config is None or not self.registry.offers(config, Feature.SCHEDULE):
                continue
            shows = await self._schedule_of(station, config, now)
            if shows is None:
                continue  # unknown or stale: nothing changes
            name, listen = await self._place_of(config)
            guilds = [guild for guild, s in pairs if s == station]
            await self.events.slots.plan(
                station, guilds, shows, now=now, station_name=name, listen=listen
            )
        await self._cancel_unwanted(set(pairs))

    async def _schedule_of(
        self, station: str, config: StationConfig, now: float
    ) -> tuple[ScheduledShow, ...] | None:
        if await self.storage.claim_schedule_fetch(station, now=now, every=self.schedule_every):
            try:
                shows = await self.registry.client(config).schedule(within=AHEAD)
            except StationError as error:  # (NotOffered too)
                _LOGGER.info("schedule of %s not read: %s", station, type(error).__name__)
            else:
                await self.storage.save_schedule(station, to_json(shows), fetched_at=now)
        stored = await self.storage.stored_schedule(station)
        if stored is None or now - stored[0] > SCHEDULE_STALE * self.schedule_every:
            return None
        return from_json(stored[1])

    async def _place_of(self, config: StationConfig) -> tuple[str | None, str | None]:
        """The station's name and listen link for its events (its last known state)."""
        try:
            info = (await self.registry.snapshot(config)).info
        except Exception:  # the station is down: its name from the config
            return config.name, None
        return info.name or config.name, info.links.listen

    async def _cancel_unwanted(self, pairs: set[tuple[int, str]]) -> None:
        """Planned events of a station whose events a guild turned off are cancelled."""
        for guild, station, key, event_id, _, _ in await self.storage.planned_slot_events():
            if self.handles_guild(guild) and (guild, station) not in pairs:
                await self.events.slots.cancel(guild, station, key, event_id)

    # Events -------------------------------------------------------------------------------

    async def event_stations(self, guild_id: int) -> list[str]:
        """The stations whose live shows get an event in ``guild_id``, sorted."""
        pairs = await self.storage.show_event_guilds()
        return sorted(station for guild, station in pairs if guild == guild_id)

    async def set_events(self, guild_id: int, station: str, *, on: bool) -> bool:
        """Turn a station's live-show events on or off here; whether that changed anything."""
        changed = await self.storage.set_show_events(guild_id, station, on=on)
        await self._load_event_stations()
        await self.refresh_watches()
        return changed
