"""The announcer: one watch per distinct station, fan-out of each new play to its subscriptions.

Discord-agnostic: delivery goes through a :class:`Deliverer`, so the same service runs in the
bot (discord.py) and in tests and benchmarks. Delivery is bounded in concurrency, per-channel
isolated, and recorded in storage only after a successful send.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any, Protocol

from ..config import Settings, StationConfig
from ..station import Play, StationError
from ..stations import StationRegistry
from ..storage import Storage, Subscription
from .filters import skip_reason
from .watcher import Announcement, StationWatch, WatchScheduler, job_id_for

_LOGGER = logging.getLogger("onair.announcer")
STARTUP_SPREAD = 0.02  # seconds between the first polls of newly watched stations


class DeliveryError(Exception):
    """A send failed. ``permanent`` failures (403, 404) pause the subscription."""

    def __init__(self, reason: str, *, permanent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent


class Deliverer(Protocol):
    async def deliver(
        self, sub: Subscription, announcement: Announcement, station: StationConfig
    ) -> int | None:
        """Post (or edit) the announcement; return the message id used (for card mode)."""


class AnnouncerService:
    def __init__(
        self,
        settings: Settings,
        registry: StationRegistry,
        storage: Storage,
        watches: WatchScheduler,
        deliverer: Deliverer,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.watches = watches
        self.deliverer = deliverer
        self._limit = asyncio.Semaphore(settings.concurrency)
        self._station_locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._tasks: set[asyncio.Task[None]] = set()
        self._slugs_by_job: dict[str, list[str]] = {}
        self.delivered = 0
        self.skipped = 0
        self.failed = 0
        self.subscription_count = 0
        self.metrics: Any = None  # bot.metrics.Metrics when the bot serves metrics

    # Lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        await self.import_config_subscriptions()
        await self.refresh()

    async def stop(self, grace: float = 5.0) -> None:
        """Stop watching; let announcements in flight finish (up to ``grace`` seconds)."""
        for job_id in list(self._slugs_by_job):
            self.watches.remove(job_id)
        self._slugs_by_job.clear()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

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
        for slug in sorted({s.station for s in subs if s.paused_reason is None}):
            station = self.registry.station(slug)
            if station is None:
                continue
            wanted[job_id_for(self.registry.client(station))].append(slug)
        for job_id in list(self._slugs_by_job):
            if job_id not in wanted:
                self.watches.remove(job_id)
                del self._slugs_by_job[job_id]
        new = 0
        for job_id, slugs in wanted.items():
            self._slugs_by_job[job_id] = slugs
            if job_id in self.watches.watches:
                continue
            station = self.registry.station(slugs[0])
            assert station is not None
            watch = StationWatch(self.registry.client(station), settings=self.settings.poll)
            watch.listeners.append(self._listener(job_id))
            # Spread first polls (20 ms apart) so 500 stations do not answer in one loop turn.
            self.watches.add(watch, delay=new * STARTUP_SPREAD)
            new += 1

    def _listener(self, job_id: str) -> Callable[[Announcement], Awaitable[None]]:
        async def on_play(announcement: Announcement) -> None:
            for slug in self._slugs_by_job.get(job_id, []):
                task = asyncio.create_task(self._fan_out(slug, announcement))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

        return on_play

    # Fan-out ----------------------------------------------------------------------------

    async def _item_type(
        self, station: StationConfig, play: Play, subs: Iterable[Subscription]
    ) -> str | None:
        """ITEMTYPE is only in the playlist: fetched only when some channel filters on it."""
        if not any(s.skip_item_types for s in subs):
            return None
        try:
            playlist = await self.registry.client(station).playlist()
        except StationError:
            return None
        for item in playlist.items:
            if item.title and item.title.casefold() == play.title.casefold():
                return item.item_type
        return None

    async def _fan_out(self, slug: str, announcement: Announcement) -> None:
        station = self.registry.station(slug)
        if station is None:
            return
        async with self._station_locks[slug]:
            play = announcement.play
            try:
                await self.storage.record_play(
                    slug, play, announcement.info.listener_count, datetime.now(UTC)
                )
            except Exception:
                _LOGGER.exception("could not record a play in the history")
            subs = [
                s
                for s in await self.storage.subscriptions(slug)
                if s.paused_reason is None and self.settings.handles_guild(s.guild_id)
            ]
            item_type = await self._item_type(station, play, subs)
            results = await asyncio.gather(
                *(self._deliver(sub, announcement, station, item_type) for sub in subs)
            )
        if any(paused for paused in results):
            await self.refresh()  # a paused channel may have been the station's last one

    async def _deliver(
        self,
        sub: Subscription,
        announcement: Announcement,
        station: StationConfig,
        item_type: str | None,
    ) -> bool:
        """Deliver to one subscription; True when it had to be paused."""
        play = announcement.play
        if sub.last_play is not None and play.same_as(sub.last_play):
            return False  # announced before a restart
        reason = skip_reason(sub, play, item_type)
        if reason is not None:
            self.skipped += 1
            return False
        key = play.claim_key
        if not await self.storage.claim(sub.id, key):
            return False  # another process (or an earlier run) announced it in this channel
        async with self._limit:
            try:
                message_id = await self.deliverer.deliver(sub, announcement, station)
            except asyncio.CancelledError:
                await self.storage.release(sub.id, key)  # not sent: a later run may announce it
                raise
            except DeliveryError as error:
                await self.storage.release(sub.id, key)
                self.failed += 1
                if error.permanent:
                    _LOGGER.warning("pausing announcements in %s: %s", sub.channel_id, error.reason)
                    await self.storage.pause(sub.id, error.reason)
                    return True
                _LOGGER.warning("announcement to %s failed: %s", sub.channel_id, error.reason)
                return False
            except Exception:
                await self.storage.release(sub.id, key)
                self.failed += 1
                _LOGGER.exception("announcement to %s failed", sub.channel_id)
                return False
        self.delivered += 1
        if self.metrics is not None:
            self.metrics.inc("announcements_total")
            if play.started is not None and play.started_exact:
                delay = (datetime.now(UTC) - play.started).total_seconds()
                self.metrics.observe_delay(max(0.0, delay))
        await self.storage.mark_announced(sub.id, play, message_id)
        return False
