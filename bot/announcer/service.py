"""The announcer: one watch per distinct station, each new play fanned out to its channels.

Discord-agnostic: delivery goes through a :class:`Deliverer`, so the same service runs in the
bot (discord.py) and in tests and benchmarks. This module manages the watches (which stations,
under which job ids, who hears of their plays and polls) and answers what the rest of the bot
asks; a new play's fan-out is ``fanout.py``, and the durable delivery outbox that makes each
channel get it once across crashes (leases, nonces, the sweep) is ``outbox.py``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from ..catalog.registry import StationRegistry
from ..config import Settings, StationConfig
from ..station import StationClient, StationError, StationInfo
from ..storage import Storage, Subscription
from ..util.hooks import Hook
from ..util.metrics import Metrics
from ..util.tasks import BackgroundTasks, stop_task
from ..util.text import describe
from . import snapshot
from .fanout import FanOut
from .fleet import FleetCoordinator
from .followers import Followers
from .outbox import Deliverer, DeliveryOutbox, Resumable
from .pollreport import station_label
from .watcher import (
    ELSEWHERE,
    Announcement,
    StationStatus,
    StationWatch,
    WatchScheduler,
    job_id_for,
)

_LOGGER = logging.getLogger("onair.announcer")
STARTUP_SPREAD = 0.02  # seconds between the first polls of newly watched stations
STATUS_WINDOW = 86400.0  # /onair status counts the deliveries of the last day
SharedInfo = Callable[[StationClient], Awaitable[StationInfo | None]]


def process_owner() -> str:
    """Who holds a lease: unique per process and run (host, pid, random)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"


class AnnouncerService:
    def __init__(
        self,
        settings: Settings,
        registry: StationRegistry,
        storage: Storage,
        watches: WatchScheduler,
        deliverer: Deliverer,
        *,
        followers: Followers = Followers(),
        owner: str | None = None,
        metrics: Metrics | None = None,
        shared_info: Hook[SharedInfo] | None = None,
        refresh_hook: Hook[Callable[[], Awaitable[None]]] | None = None,
    ) -> None:
        """``shared_info``: bound here in a fleet, for the registry's commands to read what
        another process polled; ``refresh_hook``: bound to :meth:`refresh` for the services
        built before the announcer (the shows) that need the watches planned again."""
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.watches = watches
        self.deliverer = deliverer
        self.followers = followers
        # Every fan-out's exception is retrieved: none is left for the loop to report.
        self._tasks = BackgroundTasks(
            lambda error: _LOGGER.error("an announcement task failed", exc_info=error)
        )
        self._slugs_by_job: dict[str, list[str]] = {}
        self.owner = owner or process_owner()
        self.outbox = DeliveryOutbox(
            settings, registry, storage, deliverer, self.owner, metrics=metrics
        )
        self._sweeper_task: asyncio.Task[None] | None = None
        # Key of the watch job ids (HMAC: a logged id says nothing about the station's key). A
        # fleet shares one from the database at start, so every process names a watch alike.
        self._job_secret = secrets.token_bytes(32)
        # PostgreSQL: one process polls each station (watch leases) and publishes its plays.
        self.fleet: FleetCoordinator | None = None
        if storage.fleet:
            if shared_info is not None:
                shared_info.bind(self._shared_info)
            self.fleet = FleetCoordinator(
                storage,
                watches,
                self.owner,
                lease=settings.watch_lease,
                on_play=self._on_published,
                on_connect=self._on_listening,
            )
        if refresh_hook is not None:
            refresh_hook.bind(self.refresh)
        self.subscription_count = 0
        self._judging_polls = True  # False once the scheduled posts stop: polls go unjudged
        self.fan_out = FanOut(
            settings,
            registry,
            storage,
            self.outbox,
            self.fleet,
            followers.change_listeners,
            self.refresh,
            credit=followers.credit,
        )

    # What became of the deliveries (tests, status); the outbox counts them.

    @property
    def skipped(self) -> int:
        return self.fan_out.skipped

    @property
    def delivered(self) -> int:
        return self.outbox.delivered

    @property
    def failed(self) -> int:
        return self.outbox.failed

    @property
    def dropped(self) -> int:
        return self.outbox.dropped

    # Lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        if self.fleet is not None:
            self._job_secret = await self.storage.shared_secret("watch-job-id")
        await self.import_config_subscriptions()
        if self.storage.single_process:
            released = await self.storage.release_all_leases()
            if released:
                _LOGGER.info(
                    "%d delivery(ies) left in flight by the last run are pending", released
                )
        await self.refresh()
        if self.fleet is not None:
            await self.fleet.start()
        self._sweeper_task = asyncio.create_task(self._sweeper())

    async def stop(self, grace: float = 3.0) -> None:
        """Stop watching; let announcements in flight finish (up to ``grace`` seconds), then
        cancel the rest: a cancelled send gives its lease back and stays pending for the next
        run. In a fleet the watch leases are given back first, so another process polls on."""
        if self.fleet is not None:
            await self.fleet.stop()
        await stop_task(self._sweeper_task)
        self._sweeper_task = None
        self.stop_watching()
        await self.watches.close()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
        if self._tasks:
            _LOGGER.info(
                "%d announcement(s) still sending after %.1f s: cancelled, their unsent "
                "deliveries stay pending for the next run",
                len(self._tasks),
                grace,
            )
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        # A deliverer's own follow-ups (the song links' edits) end with it, where it has any.
        follow_ups = getattr(self.deliverer, "stop_follow_ups", None)
        if follow_ups is not None:
            await follow_ups()

    def stop_observing_polls(self) -> None:
        """From now on no poll is handed to the followers' observers (the alerts' and the
        shows' judgement stops with the scheduled posts, before the bot closes)."""
        self._judging_polls = False

    def stop_watching(self) -> None:
        """Stop every station's polls (fan-outs in flight go on); ``refresh`` starts them again."""
        for job_id in list(self._slugs_by_job):
            self.watches.remove(job_id)
        self._slugs_by_job.clear()

    async def idle(self) -> None:
        """Wait until every fan-out in flight has finished (tests and benchmarks)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def import_config_subscriptions(self) -> None:
        """Subscriptions from the config file are the source of truth until the setup commands."""
        keep = []
        for config in self.settings.subscriptions:
            await self.storage.upsert_subscription(config)
            keep.append((config.channel_id, config.station))
        await self.storage.remove_subscriptions_not_in(keep)

    async def refresh(self) -> None:
        """Add a watch for every station with an active subscription; remove the others."""
        subs = [
            s for s in await self.storage.subscriptions() if self.settings.handles_guild(s.guild_id)
        ]
        self.subscription_count = len(subs)
        wanted: dict[str, list[str]] = defaultdict(list)
        followed = {s.station for s in subs if s.paused_reason is None}
        followed |= await self.followers.followed_stations()
        for slug in sorted(followed):
            station = self.registry.station(slug)
            if station is None:
                continue
            wanted[self.job_id(self.registry.client(station))].append(slug)
        gone = [job_id for job_id in self._slugs_by_job if job_id not in wanted]
        for job_id in gone:
            self.watches.remove(job_id)
            del self._slugs_by_job[job_id]
        new = 0
        for job_id, slugs in wanted.items():
            self._slugs_by_job[job_id] = slugs
            if job_id in self.watches:
                continue
            station = self.registry.station(slugs[0])
            assert station is not None
            watch = StationWatch(
                self.registry.client(station),
                settings=self.settings.poll,
                job_id=job_id,
                label=self._label(job_id),
            )
            watch.listeners.append(self._listener(job_id))
            watch.poll_listeners.append(self._poll_listener(job_id))
            # In a fleet a watch polls only once this process holds its lease.
            if self.fleet is not None:
                watch.owned, watch.status.state = False, ELSEWHERE
            # Spread first polls (20 ms apart) so 500 stations do not answer in one loop turn.
            self.watches.add(watch, delay=new * STARTUP_SPREAD)
            new += 1
        if self.fleet is not None:
            if gone:
                await self.fleet.forget(gone)
            if new:
                self.fleet.wake()

    async def _shared_info(self, client: StationClient) -> StationInfo | None:
        assert self.fleet is not None
        return await self.fleet.shared_info(self.job_id(client))

    def job_id(self, client: StationClient) -> str:
        """The id of the watch that polls ``client``'s station (the same in every process of a
        fleet)."""
        return job_id_for(client, secret=self._job_secret)

    def _label(self, job_id: str) -> Callable[[], str]:
        """The watch's stations as the owner configured them (for its log lines)."""

        def label() -> str:
            slugs = self._slugs_by_job.get(job_id, [])
            return station_label([s for s in map(self.registry.station, slugs) if s is not None])

        return label

    def _listener(self, job_id: str) -> Callable[[Announcement], Awaitable[None]]:
        async def on_play(announcement: Announcement) -> None:
            for slug in self._slugs_by_job.get(job_id, []):
                self.announce(slug, announcement)
                for listener in self.followers.change_listeners:
                    self._spawn(listener(slug, announcement))

        return on_play

    def _poll_listener(
        self, job_id: str
    ) -> Callable[[StationInfo | None, StationError | None], None]:
        def on_poll(info: StationInfo | None, error: StationError | None) -> None:
            slugs = self._slugs_by_job.get(job_id, [])
            if slugs and self._judging_polls:
                for observer in self.followers.poll_observers:
                    self._spawn(observer(list(slugs), info, error))

        return on_poll

    def announce(self, slug: str, announcement: Announcement) -> None:
        """Fan a new play out to the station's subscriptions in the background (what a watch
        does when it sees one; ``idle`` waits for it)."""
        self._spawn(self.fan_out.run(slug, announcement))

    # Recovery ---------------------------------------------------------------------------

    async def _sweeper(self) -> None:
        """Renew this process's leases; take up deliveries whose lease ran out; drop stale ones;
        write the plays storage failed into the history."""
        interval = self.settings.delivery_lease / 3
        while True:
            try:
                await self.sweep()
                await self.fan_out.catch_up_history()
            except Exception as error:
                if not self.storage.is_storage_error(error):
                    _LOGGER.exception("looking for pending announcements failed")
                else:
                    self.storage.health.warn(
                        _LOGGER,
                        "could not look for pending announcements (%s); again in %.0fs",
                        describe(error),
                        interval,
                    )
            await asyncio.sleep(interval)

    def _on_published(self, announcement_id: int) -> None:
        """Another process (or this one) recorded a play: send it to this process's channels,
        and tell this process's change listeners when another process polled it."""
        self._spawn(self._take_up(announcement_id))
        if self.followers.change_listeners:
            self._spawn(self._changed_elsewhere(announcement_id))

    async def _changed_elsewhere(self, announcement_id: int) -> None:
        """A fleet's poller recorded a play of a station this process watches but does not
        poll: its change listeners hear of it as if it had (the poller's own were told when it
        saw the play). A missed notification is not made up for: the next play corrects it."""
        try:
            found = await self.storage.announcement_of(announcement_id)
        except Exception as error:
            self.storage.log_fault_or_raise(
                error,
                _LOGGER,
                "could not read announcement %d (%s)",
                announcement_id,
                describe(error),
            )
            return
        station = self.registry.station(found[0]) if found is not None else None
        if found is None or station is None:
            return
        job_id = self.job_id(self.registry.client(station))
        watch = self.watches.get(job_id)
        if watch is None or watch.owned:
            return
        try:
            announcement = snapshot.load(found[1])
        except ValueError:
            return
        for slug in self._slugs_by_job.get(job_id, []):
            for listener in self.followers.change_listeners:
                self._spawn(listener(slug, announcement))

    def _on_listening(self) -> None:
        """The play listener (re)connected: look for plays published while it was not."""
        self._spawn(self._sweep_quietly())

    async def _take_up(self, announcement_id: int) -> None:
        try:
            await self.sweep(announcement_id=announcement_id)
        except Exception as error:
            self.storage.log_fault_or_raise(
                error,
                _LOGGER,
                "could not read published announcement %d (%s); the sweep retries it",
                announcement_id,
                describe(error),
            )

    async def _sweep_quietly(self) -> None:
        try:
            await self.sweep()
        except Exception as error:
            self.storage.log_fault_or_raise(
                error, _LOGGER, "could not look for pending announcements (%s)", describe(error)
            )

    async def sweep(self, *, announcement_id: int | None = None) -> int:
        """One pass (over one published announcement, or all); returns how many deliveries it
        resumed."""
        return await self.outbox.sweep(self._spawn_resume, announcement_id=announcement_id)

    def _spawn_resume(self, work: Resumable) -> None:
        self._spawn(self.fan_out.resume(work))

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        self._tasks.spawn(coroutine)

    # What the rest of the bot asks of the service (status, metrics, leaving a guild) ------

    def watched(self) -> list[StationWatch]:
        """The station watches polling now, one per distinct station."""
        return self.watches.all()

    def watched_station_count(self) -> int:
        return self.watches.count()

    def watch_for(self, station: StationConfig) -> StationWatch | None:
        """The watch that polls this station, or None when no announcement makes OnAir poll it."""
        return self.watches.get(self.job_id(self.registry.client(station)))

    def status_for(self, station: StationConfig) -> StationStatus | None:
        """This station's polling status, or None when no announcement makes OnAir poll it."""
        watch = self.watch_for(station)
        return watch.status if watch is not None else None

    async def recent_deliveries(self, guild_id: int) -> dict[str, int]:
        """{state: count} of this guild's announcement deliveries in the last day."""
        return await self.storage.delivery_counts(guild_id, time.time() - STATUS_WINDOW)

    def poll_now(self, watch: StationWatch) -> None:
        """Poll this station at once instead of at its scheduled time."""
        self.watches.poll_now(watch.job_id)

    async def forget_guild(self, guild_id: int) -> None:
        """The bot left the guild: purge its subscriptions and stations, stop their polls."""
        await self.storage.purge_guild(guild_id)
        for station in self.registry.visible(guild_id):
            if station.owner_guild == guild_id:
                self.registry.remove_guild_station(station.slug)
        await self.refresh()

    async def subscribe(self, sub: Subscription) -> None:
        """Store (or update) a channel's announcements of a station, and watch the station."""
        await self.storage.upsert_subscription(sub)
        await self.refresh()

    async def unsubscribe(self, guild_id: int, channel_id: int, station: str | None) -> int:
        """Stop a channel's announcements (of one station, or of all); how many there were."""
        removed = await self.storage.remove_subscription(guild_id, channel_id, station)
        await self.refresh()
        return removed

    async def resume_channel(self, guild_id: int, channel_id: int) -> int:
        """Resume a channel's paused announcements; how many the channel has."""
        subs = await self.storage.subscriptions(guild_id=guild_id)
        ours = [s for s in subs if s.channel_id == channel_id]
        for sub in ours:
            await self.storage.pause(sub.id, None)
        await self.refresh()
        return len(ours)
