"""The announcer service without Discord: filters, pausing and resuming, retries and the drop of
stale plays, and what subscribing starts and stops. Real SQLite storage, the real station
simulator; the Discord side is a recording deliverer (the service's deliverer protocol). The
scheduler is never started, so no poll runs behind a test's back: plays are fed to
``AnnouncerService.announce``, the path a watch takes when it sees one."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, timedelta
from typing import Any

import aiohttp
import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.announcer import Announcement, WatchScheduler
from bot.announcer.outbox import DeliveryError
from bot.announcer.service import AnnouncerService
from bot.catalog.registry import StationRegistry
from bot.config import Settings, StationConfig
from bot.simulator import StationSimulator
from bot.storage import DROPPED, SENT, SqliteStorage, Storage, Subscription

from .support.stations import KEY

GUILD = 4242


@dataclass
class RecordingDeliverer:
    """Stands in for Discord: records each send; a channel in ``failures`` fails with it."""

    sent: list[tuple[int, str]] = field(default_factory=list)  # (channel, title)
    failures: dict[int, DeliveryError] = field(default_factory=dict)
    resumed: list[tuple[int, bool]] = field(default_factory=list)  # (channel, resumed) per try

    async def deliver(
        self, sub: Subscription, announcement: Announcement, station: StationConfig, **kw: Any
    ) -> int | None:
        self.resumed.append((sub.channel_id, kw.get("resumed", False)))
        failure = self.failures.get(sub.channel_id)
        if failure is not None:
            raise failure
        self.sent.append((sub.channel_id, announcement.play.title))
        return None

    def channels(self, title: str) -> list[int]:
        return sorted(channel for channel, sent in self.sent if sent == title)


@pytest.fixture
async def storage(tmp_path) -> AsyncIterator[Storage]:
    opened = await SqliteStorage(str(tmp_path / "onair.sqlite3")).open()
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def deliverer() -> RecordingDeliverer:
    return RecordingDeliverer()


@pytest.fixture
async def service(
    simulator: StationSimulator,
    session: aiohttp.ClientSession,
    storage: Storage,
    deliverer: RecordingDeliverer,
) -> AsyncIterator[AnnouncerService]:
    station = StationConfig("main", "Main FM", simulator.base_url, 1, key=KEY)
    settings = Settings(stations=(station,))
    scheduler = AsyncIOScheduler(timezone=UTC)  # never started: watches are added, never run
    announcer = AnnouncerService(
        settings, StationRegistry(settings, session), storage, WatchScheduler(scheduler), deliverer
    )
    try:
        yield announcer
    finally:
        await announcer.stop()


async def subscribe(service: AnnouncerService, channel: int, **options: object) -> Subscription:
    return await service.storage.upsert_subscription(
        Subscription(0, GUILD, channel, "main", **options)
    )


async def on_air(
    service: AnnouncerService, title: str, *, hours: int = 0, age: float = 0.0, **changes: object
) -> Announcement:
    """The simulator's current play renamed ``title`` (started ``hours`` later, so a new play),
    detected ``age`` seconds ago."""
    info = await service.registry.clients["main"].info(max_age=0)
    play = info.current_play()
    assert play is not None
    assert play.started is not None
    started = play.started + timedelta(hours=hours)
    new = replace(play, title=title, started=started, **changes)
    return Announcement(new, info, time.time() - age)


async def subs(service: AnnouncerService) -> list[int]:
    return [s.id for s in await service.storage.subscriptions()]


async def announce(service: AnnouncerService, announcement: Announcement) -> None:
    service.announce("main", announcement)
    await service.idle()


async def test_each_channel_gets_only_the_plays_its_filters_let_through(service, deliverer):
    await subscribe(service, 1)
    await subscribe(service, 2, min_seconds=60.0)
    await subscribe(service, 3, skip_pattern="Jingle")
    await subscribe(service, 4, announce_live=False)
    await announce(service, await on_air(service, "Song", duration=timedelta(minutes=4)))
    jingle = await on_air(service, "Station Jingle", hours=1, duration=timedelta(seconds=5))
    await announce(service, jingle)
    await announce(service, await on_air(service, "Live Hour", hours=2, live=True))
    assert deliverer.channels("Song") == [1, 2, 3, 4]
    assert deliverer.channels("Station Jingle") == []  # a jingle (under 30 s): for no channel
    assert deliverer.channels("Live Hour") == [1, 2, 3]  # a live show has no minimum length
    assert service.skipped == 5
    assert service.delivered == 7


async def test_a_play_seen_again_is_not_announced_twice(service, deliverer):
    await subscribe(service, 1)
    song = await on_air(service, "Song")
    await announce(service, song)
    await announce(service, replace(song, detected_at=time.time()))  # e.g. after a restart
    assert deliverer.sent == [(1, "Song")]


async def test_a_permanent_failure_pauses_that_channel_only_until_resumed(service, deliverer):
    await service.subscribe(Subscription(0, GUILD, 1, "main"))
    await service.subscribe(Subscription(0, GUILD, 2, "main"))
    assert len(service.watched()) == 1
    deliverer.failures[2] = DeliveryError("Missing Access", permanent=True)
    await announce(service, await on_air(service, "First"))
    assert deliverer.channels("First") == [1]
    paused = {s.channel_id: s.paused_reason for s in await service.storage.subscriptions()}
    assert paused == {1: None, 2: "Missing Access"}
    deliverer.failures.clear()
    await announce(service, await on_air(service, "Second", hours=1))
    assert deliverer.channels("Second") == [1]  # paused: not even tried
    assert await service.resume_channel(GUILD, 2) == 1
    await announce(service, await on_air(service, "Third", hours=2))
    assert deliverer.channels("Third") == [1, 2]
    assert service.failed == 1


async def test_the_last_channel_paused_stops_the_polls_and_resuming_restarts_them(
    service, deliverer
):
    await service.subscribe(Subscription(0, GUILD, 1, "main"))
    deliverer.failures[1] = DeliveryError("Unknown Channel", permanent=True)
    await announce(service, await on_air(service, "First"))
    assert service.watched() == []  # nothing left to announce to: the station is not polled
    station = service.registry.station("main")
    assert station is not None
    assert service.status_for(station) is None
    assert await service.resume_channel(GUILD, 1) == 1
    assert len(service.watched()) == 1


async def test_a_failed_send_is_retried_by_the_sweep_unless_the_play_went_stale(service, deliverer):
    await subscribe(service, 1)
    deliverer.failures[1] = DeliveryError("HTTP 503", permanent=False)
    fresh = await on_air(service, "Fresh")
    stale = await on_air(service, "Stale", hours=1, age=2 * service.settings.max_delivery_age)
    await announce(service, fresh)
    await announce(service, stale)
    assert deliverer.sent == []
    assert service.failed == 2
    pending = {d.announcement_id for d in await service.storage.due_deliveries(time.time())}
    assert len(pending) == 2  # both given back unsent, waiting for the sweep
    deliverer.failures.clear()
    assert await service.sweep() == 1  # the fresh one is sent again...
    await service.idle()
    assert deliverer.sent == [(1, "Fresh")]
    # The first try is fresh; the sweep's is resumed (an earlier lease may have posted it).
    assert deliverer.resumed == [(1, False), (1, False), (1, True)]
    assert service.dropped == 1  # ...the stale one is dropped, never posted late
    states = [await service.storage.deliveries(a) for a in sorted(pending)]
    assert states == [{(await subs(service))[0]: SENT}, {(await subs(service))[0]: DROPPED}]


async def test_subscribe_and_unsubscribe_start_and_stop_the_polls(service):
    await service.subscribe(Subscription(0, GUILD, 1, "main"))
    await service.subscribe(Subscription(0, GUILD, 2, "main"))
    assert len(service.watched()) == 1  # one watch per station, however many channels
    assert await service.unsubscribe(GUILD, 1, "main") == 1
    assert len(service.watched()) == 1
    assert await service.unsubscribe(GUILD, 2, None) == 1
    assert service.watched() == []
    assert await service.unsubscribe(GUILD, 2, None) == 0


async def test_a_message_discord_refuses_fails_once_and_the_channel_goes_on(service, deliverer):
    await subscribe(service, 1)
    deliverer.failures[1] = DeliveryError("Refused (400)", permanent=False, final=True)
    await announce(service, await on_air(service, "Refused"))
    assert service.failed == 1
    assert await service.storage.due_deliveries(time.time()) == []  # nothing left to retry
    assert await service.sweep() == 0
    deliverer.failures.clear()
    await announce(service, await on_air(service, "Next", hours=1))
    assert deliverer.sent == [(1, "Next")]
    assert [s.paused_reason for s in await service.storage.subscriptions()] == [None]
