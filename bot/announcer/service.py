"""The announcer: one watch per distinct station, fan-out of each new play to its subscriptions.

Discord-agnostic: delivery goes through a :class:`Deliverer`, so the same service runs in the
bot (discord.py) and in tests and benchmarks.

Delivery goes through a durable outbox so a play reaches every channel once across crashes:
a detected play is recorded with one pending delivery per channel in one transaction *before*
any send; each send holds a lease on its delivery (renewed while the process lives) and carries
a nonce derived from (subscription, play), so Discord returns the first message instead of a
second one if a crash fell between the send and its "sent" mark. Deliveries whose lease ran
out are taken up again by a sweep (at start-up and every ``delivery_lease / 3`` seconds) until
the play is stale (``max_delivery_age``, or the end of the track), then dropped and logged.
Storage failures are retried with backoff and logged as one warning line each.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import secrets
import socket
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from ..config import Settings, StationConfig
from ..registry import StationRegistry
from ..station import Play, StationClient, StationError, StationInfo
from ..storage import DROPPED, FAILED, Delivery, Storage, Subscription
from ..tasks import BackgroundTasks
from . import snapshot
from .filters import skip_reason
from .fleet import FleetCoordinator
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
MAX_ATTEMPTS = 5  # sends of one delivery (each already retried inside the deliverer)
STATUS_WINDOW = 86400.0  # /onair status counts the deliveries of the last day
MIN_WINDOW = 60.0  # a play is deliverable at least this long, even when its track ends sooner
RETRY_FIRST, RETRY_MAX = 0.2, 30.0  # storage retry backoff (seconds)
T = TypeVar("T")
# (the watch's stations, the poll's info or None, its error or None) -> the work it starts
PollObserver = Callable[
    [list[str], StationInfo | None, StationError | None], Coroutine[Any, Any, None]
]


def delivery_nonce(subscription_id: int, play_key: str) -> str:
    """Discord's message nonce for one play in one channel: deterministic, 25 characters."""
    digest = hashlib.sha256(f"{subscription_id}\x00{play_key}".encode()).hexdigest()
    return "oa" + digest[:23]


def expires_at(play: Play, detected_at: float, max_age: float) -> float:
    """Until when a play may still be posted: ``max_age`` after detection, or the end of the
    track when its length is known (but never less than a minute, or ``max_age`` if shorter)."""
    limit = detected_at + max_age
    if play.started is not None and play.duration:
        end = (play.started + play.duration).timestamp()
        limit = min(limit, max(end, detected_at + min(MIN_WINDOW, max_age)))
    return limit


def describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class DeliveryError(Exception):
    """A send failed. ``permanent`` failures (403, 404) pause the subscription; ``final`` ones
    (Discord refused this message itself, 400/413) fail this one delivery, never retried, and
    leave the channel announcing: the next play's message may well be fine."""

    def __init__(self, reason: str, *, permanent: bool, final: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.permanent = permanent
        self.final = final


class Deliverer(Protocol):
    async def deliver(
        self,
        sub: Subscription,
        announcement: Announcement,
        station: StationConfig,
        *,
        nonce: str,
        resumed: bool = False,
    ) -> int | None:
        """Post (or edit) the announcement; return the message id used (for card mode).

        ``nonce`` is the same for every attempt of one play in one channel: a deliverer that
        can (Discord can) makes a repeated send return the first message. ``resumed``: an
        earlier lease of this delivery may have posted it unrecorded (a crash between send and
        mark), so a deliverer that can look first does."""


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
        # Every fan-out's exception is retrieved: none is left for the loop to report.
        self._tasks = BackgroundTasks(
            lambda error: _LOGGER.error("an announcement task failed", exc_info=error)
        )
        self._slugs_by_job: dict[str, list[str]] = {}
        # Who holds a lease: unique per process and run (host, pid, random).
        self.owner = f"{socket.gethostname()[:40]}:{os.getpid()}:{secrets.token_hex(4)}"
        self._inflight: set[tuple[int, int]] = set()  # (announcement, subscription) being sent
        self._sweeper_task: asyncio.Task[None] | None = None
        # Key of the watch job ids (HMAC: a logged id says nothing about the station's key). A
        # fleet shares one from the database at start, so every process names a watch alike.
        self._job_secret = secrets.token_bytes(32)
        # PostgreSQL: one process polls each station (watch leases) and publishes its plays.
        self.fleet: FleetCoordinator | None = None
        if storage.fleet:
            registry.shared_info = self._shared_info
            self.fleet = FleetCoordinator(
                storage,
                watches,
                self.owner,
                lease=settings.watch_lease,
                on_play=self._on_published,
                on_connect=self._on_listening,
            )
        self.delivered = 0
        self.skipped = 0
        self.failed = 0
        self.dropped = 0
        self.storage_errors = 0
        self.subscription_count = 0
        self.metrics: Any = None  # bot.metrics.Metrics when the bot serves metrics
        # Stations other features need watched though no channel announces them: those alerts
        # and recaps follow (their plays go into the history the recap reads), those played in
        # voice or with live-show events (bot.shows).
        self.also_watch: Callable[[], Awaitable[set[str]]] | None = None
        # Each poll of a watch is handed to the alerts with the watch's stations
        # (bot.scheduled.alert_service).
        self.poll_observer: PollObserver | None = None
        # Told of every new play of a watched station, once per station (not per channel):
        # the voice channel status and the live-show events (bot.shows) hang here.
        self.change_listeners: list[Callable[[str, Announcement], Coroutine[Any, Any, None]]] = []

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
        if self._sweeper_task is not None:
            self._sweeper_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper_task
            self._sweeper_task = None
        self.stop_watching()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
        if self._tasks:
            _LOGGER.info(
                "%d announcement(s) still sending after %.0fs: cancelled, their unsent "
                "deliveries stay pending for the next run",
                len(self._tasks),
                grace,
            )
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

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
        if self.also_watch is not None:
            followed |= await self.also_watch()
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
            if job_id in self.watches.watches:
                continue
            station = self.registry.station(slugs[0])
            assert station is not None
            watch = StationWatch(
                self.registry.client(station), settings=self.settings.poll, job_id=job_id
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

    def _listener(self, job_id: str) -> Callable[[Announcement], Awaitable[None]]:
        async def on_play(announcement: Announcement) -> None:
            for slug in self._slugs_by_job.get(job_id, []):
                self.announce(slug, announcement)
                for listener in self.change_listeners:
                    self._spawn(listener(slug, announcement))

        return on_play

    def _poll_listener(
        self, job_id: str
    ) -> Callable[[StationInfo | None, StationError | None], None]:
        def on_poll(info: StationInfo | None, error: StationError | None) -> None:
            observer = self.poll_observer
            slugs = self._slugs_by_job.get(job_id, [])
            if observer is not None and slugs:
                self._spawn(observer(slugs, info, error))

        return on_poll

    def announce(self, slug: str, announcement: Announcement) -> None:
        """Fan a new play out to the station's subscriptions in the background (what a watch
        does when it sees one; ``idle`` waits for it)."""
        self._spawn(self._fan_out(slug, announcement))

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
        play = announcement.play
        until = expires_at(play, announcement.detected_at, self.settings.max_delivery_age)
        async with self._station_locks[slug]:
            await self._record_history(slug, announcement)
            stored = await self._retrying(
                f"reading the channels of station {slug}",
                lambda: self.storage.subscriptions(slug),
                until=until,
            )
            if stored is None:
                return
            # In a fleet the poller records the play for every channel of every shard (each
            # process then sends to its own shards' channels); alone, for its own shards.
            subs = [
                s
                for s in stored
                if s.paused_reason is None
                and (self.fleet is not None or self.settings.handles_guild(s.guild_id))
            ]
            item_type = await self._item_type(station, play, subs)
            targets = []
            for sub in subs:
                if sub.last_play is not None and play.same_as(sub.last_play):
                    continue  # announced before a restart
                if skip_reason(sub, play, item_type) is not None:
                    self.skipped += 1
                    continue
                targets.append(sub)
            # In a fleet every play is recorded and published while something besides the
            # channels follows plays (the shows): the other processes learn of it that way.
            if not targets and not (self.fleet is not None and self.change_listeners):
                return
            payload = snapshot.dump(announcement)
            play_key = await self._known_key(slug, play, until)
            announcement_id = await self._retrying(
                f"recording the play {play.display!r} of station {slug} "
                f"for {len(targets)} channel(s)",
                lambda: self.storage.enqueue_announcement(
                    slug,
                    play_key,
                    payload,
                    detected_at=announcement.detected_at,
                    expires_at=until,
                    subscription_ids=[s.id for s in targets],
                ),
                until=until,
            )
            if announcement_id is None:
                self._dropped(len(targets))
                _LOGGER.error(
                    "dropped the play %r of station %s for %d channel(s): storage did not "
                    "recover before the play went stale",
                    play.display,
                    slug,
                    len(targets),
                )
                return
            if self.fleet is not None:
                await self.fleet.publish(announcement_id)
                targets = [s for s in targets if self.settings.handles_guild(s.guild_id)]
            paused = await self._drain(
                announcement_id, play_key, station, announcement, targets, until
            )
        if paused:
            await self.refresh()  # a paused channel may have been the station's last one

    async def _known_key(self, slug: str, play: Play, until: float) -> str:
        """The key this play was recorded under already (by an earlier run or another process,
        whose estimate of an inexact start may round differently), else its own."""
        recent = await self._retrying(
            f"reading the recent plays of station {slug}",
            lambda: self.storage.recent_announcements(slug),
            until=until,
        )
        for key, payload in recent or []:
            try:
                if snapshot.load_play(payload).same_as(play):
                    return key
            except ValueError:
                continue
        return play.claim_key

    async def _record_history(self, slug: str, announcement: Announcement) -> None:
        """Best effort: /history misses a play rather than holding the announcement up."""
        try:
            await self.storage.record_play(
                slug,
                announcement.play,
                announcement.info.listener_count,
                datetime.fromtimestamp(announcement.detected_at, UTC),
            )
        except Exception as error:
            if not self.storage.is_storage_error(error):
                raise
            _LOGGER.warning(
                "could not record %r in the history of %s (%s)",
                announcement.play.display,
                slug,
                describe(error),
            )

    async def _drain(
        self,
        announcement_id: int,
        play_key: str,
        station: StationConfig,
        announcement: Announcement,
        subs: Sequence[Subscription],
        until: float,
    ) -> bool:
        """Lease and send the pending deliveries of one play; True when a channel was paused."""
        free = [s for s in subs if (announcement_id, s.id) not in self._inflight]
        if not free:
            return False
        lease = self.settings.delivery_lease
        claimed = await self._retrying(
            f"leasing {len(free)} delivery(ies) of announcement {announcement_id}",
            lambda: self.storage.claim_deliveries(
                announcement_id,
                [s.id for s in free],
                owner=self.owner,
                lease_until=time.time() + lease,
                now=time.time(),
            ),
            until=until,
        )
        if not claimed:
            return False  # delivered already, or being delivered by another process
        keys = {(announcement_id, sub_id) for sub_id in claimed}
        self._inflight |= keys
        try:
            results = await asyncio.gather(
                *(
                    self._deliver(
                        announcement_id, play_key, sub, claimed[sub.id], announcement, station
                    )
                    for sub in free
                    if sub.id in claimed
                ),
                return_exceptions=True,
            )
        except asyncio.CancelledError:
            # Shutting down: give back every lease not settled (sends cancelled before they
            # started included); rows already sent or closed are left as they are.
            for sub_id in claimed:
                await self._release(announcement_id, sub_id)
            raise
        finally:
            self._inflight -= keys
        paused = False
        for result in results:
            if isinstance(result, asyncio.CancelledError):
                raise result
            if isinstance(result, BaseException):
                _LOGGER.error("a delivery crashed", exc_info=result)
            elif result:
                paused = True
        return paused

    async def _deliver(
        self,
        announcement_id: int,
        play_key: str,
        sub: Subscription,
        attempts: int,
        announcement: Announcement,
        station: StationConfig,
    ) -> bool:
        """Send to one subscription under its lease; True when it had to be paused."""
        play = announcement.play
        nonce = delivery_nonce(sub.id, play_key)
        try:
            async with self._limit:
                message_id = await self.deliverer.deliver(
                    sub, announcement, station, nonce=nonce, resumed=attempts > 1
                )
        except asyncio.CancelledError:
            await self._release(announcement_id, sub.id)  # unsent: stays pending
            raise
        except DeliveryError as error:
            self.failed += 1
            if error.permanent:
                reason = error.reason
                _LOGGER.warning("pausing announcements in %s: %s", sub.channel_id, reason)
                await self._retrying(
                    f"pausing the subscription of channel {sub.channel_id}",
                    lambda: self._fail_and_pause(announcement_id, sub, reason),
                    until=None,
                )
                return True
            if error.final:
                _LOGGER.warning(
                    "announcement to %s refused by Discord, not retried: %s",
                    sub.channel_id,
                    error.reason,
                )
                await self._finish(announcement_id, sub.id, FAILED)
            elif attempts >= MAX_ATTEMPTS:
                _LOGGER.warning(
                    "announcement to %s failed %d times, giving up: %s",
                    sub.channel_id,
                    attempts,
                    error.reason,
                )
                await self._finish(announcement_id, sub.id, FAILED)
            else:
                _LOGGER.warning(
                    "announcement to %s failed (try %d of %d, retried later): %s",
                    sub.channel_id,
                    attempts,
                    MAX_ATTEMPTS,
                    error.reason,
                )
                await self._release(announcement_id, sub.id)
            return False
        except Exception:
            self.failed += 1
            _LOGGER.exception("announcement to %s failed", sub.channel_id)
            await self._release(announcement_id, sub.id)
            return False
        self.delivered += 1
        if self.metrics is not None:
            self.metrics.inc("announcements_total")
            if play.started is not None and play.started_exact:
                delay = (datetime.now(UTC) - play.started).total_seconds()
                self.metrics.observe_delay(max(0.0, delay))
        await self._retrying(
            f"marking the announcement in channel {sub.channel_id} as sent",
            lambda: self.storage.delivery_sent(
                announcement_id, sub.id, play, message_id, now=time.time()
            ),
            until=None,  # sent already: keep trying (a repeat after a crash reuses the nonce)
        )
        return False

    async def _fail_and_pause(self, announcement_id: int, sub: Subscription, reason: str) -> None:
        await self.storage.finish_delivery(announcement_id, sub.id, FAILED, now=time.time())
        await self.storage.pause(sub.id, reason)

    async def _release(self, announcement_id: int, sub_id: int) -> None:
        """Best effort: a lease not given back simply runs out."""
        try:
            await self.storage.release_delivery(
                announcement_id, sub_id, self.owner, now=time.time()
            )
        except Exception as error:
            if not self.storage.is_storage_error(error):
                raise
            _LOGGER.warning(
                "could not release the delivery to subscription %d (%s); it is retried when "
                "its lease runs out",
                sub_id,
                describe(error),
            )

    async def _finish(self, announcement_id: int, sub_id: int, state: str) -> None:
        await self._retrying(
            f"closing a delivery to subscription {sub_id}",
            lambda: self.storage.finish_delivery(announcement_id, sub_id, state, now=time.time()),
            until=None,
        )

    def _dropped(self, count: int) -> None:
        self.dropped += count
        if self.metrics is not None:
            self.metrics.inc("announcements_dropped_total", count)

    async def _retrying(
        self, what: str, operation: Callable[[], Awaitable[T]], *, until: float | None
    ) -> T | None:
        """``operation()``, retried with backoff while storage fails; None past ``until``."""
        delay = RETRY_FIRST
        tries = 0
        while True:
            try:
                return await operation()
            except Exception as error:
                if not self.storage.is_storage_error(error):
                    raise
                tries += 1
                if until is not None and time.time() + delay > until:
                    _LOGGER.error(
                        "storage failed %s %d times, giving up: %s", what, tries, describe(error)
                    )
                    return None
                _LOGGER.warning(
                    "storage failed %s (%s); try %d, again in %.1fs",
                    what,
                    describe(error),
                    tries,
                    delay,
                )
                self.storage_errors += 1
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)

    # Recovery ---------------------------------------------------------------------------

    async def _sweeper(self) -> None:
        """Renew this process's leases; take up deliveries whose lease ran out; drop stale ones."""
        interval = self.settings.delivery_lease / 3
        while True:
            try:
                await self.sweep()
            except Exception as error:
                if not self.storage.is_storage_error(error):
                    _LOGGER.exception("looking for pending announcements failed")
                else:
                    _LOGGER.warning(
                        "could not look for pending announcements (%s); again in %.0fs",
                        describe(error),
                        interval,
                    )
            await asyncio.sleep(interval)

    def _on_published(self, announcement_id: int) -> None:
        """Another process (or this one) recorded a play: send it to this process's channels,
        and tell this process's change listeners when another process polled it."""
        self._spawn(self._take_up(announcement_id))
        if self.change_listeners:
            self._spawn(self._changed_elsewhere(announcement_id))

    async def _changed_elsewhere(self, announcement_id: int) -> None:
        """A fleet's poller recorded a play of a station this process watches but does not
        poll: its change listeners hear of it as if it had (the poller's own were told when it
        saw the play). A missed notification is not made up for: the next play corrects it."""
        try:
            found = await self.storage.announcement_of(announcement_id)
        except Exception as error:
            if not self.storage.is_storage_error(error):
                raise
            _LOGGER.warning("could not read announcement %d (%s)", announcement_id, describe(error))
            return
        station = self.registry.station(found[0]) if found is not None else None
        if found is None or station is None:
            return
        job_id = self.job_id(self.registry.client(station))
        watch = self.watches.watches.get(job_id)
        if watch is None or watch.owned:
            return
        try:
            announcement = snapshot.load(found[1])
        except ValueError:
            return
        for slug in self._slugs_by_job.get(job_id, []):
            for listener in self.change_listeners:
                self._spawn(listener(slug, announcement))

    def _on_listening(self) -> None:
        """The play listener (re)connected: look for plays published while it was not."""
        self._spawn(self._sweep_quietly())

    async def _take_up(self, announcement_id: int) -> None:
        try:
            await self.sweep(announcement_id=announcement_id)
        except Exception as error:
            if not self.storage.is_storage_error(error):
                raise
            _LOGGER.warning(
                "could not read published announcement %d (%s); the sweep retries it",
                announcement_id,
                describe(error),
            )

    async def _sweep_quietly(self) -> None:
        try:
            await self.sweep()
        except Exception as error:
            if not self.storage.is_storage_error(error):
                raise
            _LOGGER.warning("could not look for pending announcements (%s)", describe(error))

    async def sweep(self, *, announcement_id: int | None = None) -> int:
        """One pass (over one published announcement, or all); returns how many deliveries it
        resumed."""
        now = time.time()
        if self._inflight and announcement_id is None:
            await self.storage.renew_leases(self.owner, now + self.settings.delivery_lease)
        due: dict[int, list[Delivery]] = defaultdict(list)
        for item in await self.storage.due_deliveries(now, announcement_id=announcement_id):
            if (item.announcement_id, item.subscription_id) not in self._inflight:
                due[item.announcement_id].append(item)
        subs_by_station: dict[str, dict[int, Subscription]] = {}
        resumed = 0
        for ann_id, items in due.items():
            first = items[0]
            if first.expires_at < now:
                for item in items:
                    await self._finish(ann_id, item.subscription_id, DROPPED)
                self._dropped(len(items))
                _LOGGER.warning(
                    "dropped announcement %d of station %s for %d channel(s): not delivered "
                    "before it went stale",
                    ann_id,
                    first.station,
                    len(items),
                )
                continue
            station = self.registry.station(first.station)
            if station is None:
                continue  # not a station this process knows; it expires or another takes it
            if first.station not in subs_by_station:
                subs_by_station[first.station] = {
                    s.id: s for s in await self.storage.subscriptions(first.station)
                }
            subs = subs_by_station[first.station]
            targets = []
            for item in items:
                sub = subs.get(item.subscription_id)
                if sub is None or sub.paused_reason is not None:
                    await self._finish(ann_id, item.subscription_id, DROPPED)
                elif self.settings.handles_guild(sub.guild_id):
                    targets.append(sub)
            if not targets:
                continue
            payload = await self.storage.announcement_payload(ann_id)
            try:
                announcement = snapshot.load(payload or "")
            except ValueError as error:
                _LOGGER.warning("dropping announcement %d: %s", ann_id, error)
                for sub in targets:
                    await self._finish(ann_id, sub.id, DROPPED)
                continue
            _LOGGER.log(
                logging.DEBUG if announcement_id is not None else logging.INFO,
                "%s announcement %d (%r) in %d channel(s)",
                "sending published" if announcement_id is not None else "resuming",
                ann_id,
                announcement.play.display,
                len(targets),
            )
            resumed += len(targets)
            self._spawn(
                self._resume(
                    ann_id,
                    first.play_key,
                    station,
                    announcement,
                    targets,
                    first.expires_at,
                )
            )
        return resumed

    async def _resume(
        self,
        announcement_id: int,
        play_key: str,
        station: StationConfig,
        announcement: Announcement,
        subs: Sequence[Subscription],
        until: float,
    ) -> None:
        async with self._station_locks[station.slug]:
            paused = await self._drain(
                announcement_id, play_key, station, announcement, subs, until
            )
        if paused:
            await self.refresh()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        self._tasks.spawn(coroutine)

    # What the rest of the bot asks of the service (status, metrics, leaving a guild) ------

    def watched(self) -> list[StationWatch]:
        """The station watches polling now, one per distinct station."""
        return list(self.watches.watches.values())

    def watched_station_count(self) -> int:
        return len(self.watches.watches)

    def watch_for(self, station: StationConfig) -> StationWatch | None:
        """The watch that polls this station, or None when no announcement makes OnAir poll it."""
        return self.watches.watches.get(self.job_id(self.registry.client(station)))

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
