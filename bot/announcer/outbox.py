"""The announcer's delivery outbox: each channel's delivery of a play, leased, sent, settled.

A detected play is recorded with one pending delivery per channel before any send (the fan-out,
in ``service.py``); this module leases those deliveries, sends each under its lease with a nonce
derived from (subscription, play), marks it sent, failed or dropped, and finds the deliveries a
crash or another process left pending (the sweep). Storage failures are retried with backoff and
logged as one warning line each.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from ..catalog.registry import StationRegistry
from ..config import Settings, StationConfig
from ..station import Play
from ..storage import DROPPED, FAILED, Delivery, Storage, Subscription
from ..util.metrics import Metrics
from ..util.text import describe
from . import snapshot
from .watcher import Announcement

_LOGGER = logging.getLogger("onair.announcer")
MAX_ATTEMPTS = 5  # sends of one delivery (each already retried inside the deliverer)
MIN_WINDOW = 60.0  # a play is deliverable at least this long, even when its track ends sooner
RETRY_FIRST, RETRY_MAX = 0.2, 30.0  # storage retry backoff (seconds)
T = TypeVar("T")


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


@dataclass(frozen=True)
class Resumable:
    """Pending deliveries of one recorded play that a sweep found to send again."""

    announcement_id: int
    play_key: str
    station: StationConfig
    announcement: Announcement
    subs: Sequence[Subscription]
    until: float


class DeliveryOutbox:
    """Leases, sends and settles deliveries; counts what became of them."""

    def __init__(
        self,
        settings: Settings,
        registry: StationRegistry,
        storage: Storage,
        deliverer: Deliverer,
        owner: str,
        metrics: Metrics | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.deliverer = deliverer
        self.owner = owner  # who holds a lease: unique per process and run
        self._limit = asyncio.Semaphore(settings.concurrency)
        self._inflight: set[tuple[int, int]] = set()  # (announcement, subscription) being sent
        self.delivered = 0
        self.failed = 0
        self.dropped = 0
        self.storage_errors = 0
        self.metrics = metrics  # counts the sends when the bot serves metrics

    async def drain(
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
        claimed = await self.retrying(
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
                await self.retrying(
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
                await self.finish(announcement_id, sub.id, FAILED)
            elif attempts >= MAX_ATTEMPTS:
                _LOGGER.warning(
                    "announcement to %s failed %d times, giving up: %s",
                    sub.channel_id,
                    attempts,
                    error.reason,
                )
                await self.finish(announcement_id, sub.id, FAILED)
            else:
                _LOGGER.warning(
                    "announcement to %s failed (try %d of %d, retried later): %s",
                    sub.channel_id,
                    attempts,
                    MAX_ATTEMPTS,
                    error.reason,
                )
                await self._give_back(announcement_id, sub.id)
            return False
        except Exception:
            self.failed += 1
            _LOGGER.exception("announcement to %s failed", sub.channel_id)
            await self._give_back(announcement_id, sub.id)
            return False
        self.delivered += 1
        if self.metrics is not None:
            self.metrics.inc("announcements_total")
            if play.started is not None and play.started_exact:
                delay = (datetime.now(UTC) - play.started).total_seconds()
                self.metrics.observe_delay(max(0.0, delay))
        await self.retrying(
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

    async def _give_back(self, announcement_id: int, sub_id: int) -> None:
        """Give a failed send's lease back, retried while storage fails and the lease holds:
        the sweep then tries the send again at once rather than when the lease runs out."""
        lease_end = time.time() + self.settings.delivery_lease
        await self.retrying(
            f"giving back the lease of the delivery to subscription {sub_id}",
            lambda: self.storage.release_delivery(
                announcement_id, sub_id, self.owner, now=time.time()
            ),
            until=lease_end,
        )

    async def _release(self, announcement_id: int, sub_id: int) -> None:
        """Best effort (when cancelled): a lease not given back simply runs out."""
        try:
            await self.storage.release_delivery(
                announcement_id, sub_id, self.owner, now=time.time()
            )
        except Exception as error:
            self.storage.log_fault_or_raise(
                error,
                _LOGGER,
                "could not release the delivery to subscription %d (%s); it is retried when "
                "its lease runs out",
                sub_id,
                describe(error),
            )

    async def finish(self, announcement_id: int, sub_id: int, state: str) -> None:
        await self.retrying(
            f"closing a delivery to subscription {sub_id}",
            lambda: self.storage.finish_delivery(announcement_id, sub_id, state, now=time.time()),
            until=None,
        )

    def note_dropped(self, count: int) -> None:
        self.dropped += count
        if self.metrics is not None:
            self.metrics.inc("announcements_dropped_total", count)

    async def retrying(
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
                self.storage.health.warn(
                    _LOGGER,
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

    async def sweep(
        self, resume: Callable[[Resumable], None], *, announcement_id: int | None = None
    ) -> int:
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
                    await self.finish(ann_id, item.subscription_id, DROPPED)
                self.note_dropped(len(items))
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
                    await self.finish(ann_id, item.subscription_id, DROPPED)
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
                    await self.finish(ann_id, sub.id, DROPPED)
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
            resume(
                Resumable(
                    ann_id,
                    first.play_key,
                    station,
                    announcement,
                    targets,
                    first.expires_at,
                )
            )
        return resumed
