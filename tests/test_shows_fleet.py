"""In a fleet the shows hear of every play of a station they follow once per process, also in
the processes that do not poll it: the poller records the play (even with no channel to announce
it in) and publishes it, and each other process's change listeners are told from the record."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable

import aiohttp

from bot.simulator import JINGLES, TRACKS, ManualClock, Programme, StationSimulator
from tests.support.botenv import STATION_KEY
from tests.support.storage_backends import reset_postgres
from tests.support.waiting import wait_for


async def test_every_process_hears_each_play_once(postgres_url, session: aiohttp.ClientSession):
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.announcer import WatchScheduler
    from bot.announcer.service import AnnouncerService
    from bot.announcer.watcher import Announcement
    from bot.catalog.registry import StationRegistry
    from bot.config import Settings, StationConfig
    from bot.storage import PostgresStorage

    await reset_postgres(postgres_url)
    clock = ManualClock()
    sim = StationSimulator(clock=clock)
    slots = [(TRACKS[0], 3600.0), (JINGLES[0], 5.0), (TRACKS[1], 3600.0)]
    sim.add_station(1, key=STATION_KEY, programme=Programme(slots, epoch=clock() - 1.0), seed=3)
    await sim.start()
    station = StationConfig("main", "Main FM", sim.base_url, 1, key=STATION_KEY)
    heard: Counter[tuple[str, str, str]] = Counter()
    services: dict[str, AnnouncerService] = {}
    schedulers = []

    async def main_only() -> set[str]:
        return {"main"}

    def listener(name: str):  # type: ignore[no-untyped-def]
        async def changed(slug: str, announcement: Announcement) -> None:
            heard[(name, slug, announcement.play.title)] += 1

        return changed

    class Nothing:
        async def deliver(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("no channel announces this station")

    try:
        for name, shard in (("A", 0), ("B", 1)):
            settings = Settings(
                stations=(station,), shard_count=2, shard_ids=(shard,), watch_lease=1.0
            )
            storage = await PostgresStorage(postgres_url).open()
            scheduler = AsyncIOScheduler()
            scheduler.start()
            schedulers.append(scheduler)
            service = AnnouncerService(
                settings,
                StationRegistry(settings, session),
                storage,
                WatchScheduler(scheduler),
                Nothing(),
            )
            service.also_watch = main_only  # e.g. played in voice in both processes
            service.change_listeners.append(listener(name))
            services[name] = service
            listening = asyncio.Event()
            assert service.fleet is not None
            service.fleet.on_connect = _and_then(service.fleet.on_connect, listening.set)
            await service.start()
            await asyncio.wait_for(listening.wait(), timeout=10)  # its LISTEN is connected
            if name == "A":  # A polls the first play and tells of it before B is there
                await wait_for(lambda: heard[("A", "main", TRACKS[0].title)] == 1)
                await service.idle()
        a, b = services["A"], services["B"]
        (watch_a,) = a.watched()
        (watch_b,) = b.watched()
        assert watch_a.owned
        assert not watch_b.owned
        first = TRACKS[0].title
        clock.advance(3600)  # the jingle
        a.poll_now(watch_a)
        await wait_for(lambda: heard[("B", "main", JINGLES[0].title)] == 1)
        await a.idle()
        await b.idle()
        assert heard == {
            ("A", "main", first): 1,
            ("A", "main", JINGLES[0].title): 1,
            ("B", "main", JINGLES[0].title): 1,
        }
        assert watch_b.status.polls == 0  # B heard it all without asking the station
    finally:
        for service in services.values():
            await service.stop()
            await service.storage.close()
        for scheduler in schedulers:
            scheduler.shutdown(wait=False)
        await sim.stop()


def _and_then(first: Callable[[], None], then: Callable[[], None]) -> Callable[[], None]:
    def both() -> None:
        first()
        then()

    return both
