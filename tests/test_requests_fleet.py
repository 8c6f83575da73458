"""A fleet of two processes (PostgreSQL, one shard each) credits a requested play once: the
poller decides who asked while it fans the play out and records it with the play; the other
process delivers to its own guild's channel from that record, naming its own guild's
requester, and credits nothing itself."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import aiohttp
import pytest

from bot.simulator import TRACKS, ManualClock, Programme, StationSimulator
from tests.support.botenv import STATION_KEY
from tests.support.storage_backends import POSTGRES_ENV, reset_postgres
from tests.support.waiting import wait_for

GUILD_A = 1 << 23  # shard 0 of 2
GUILD_B = 1 << 22  # shard 1 of 2


@pytest.fixture
def postgres_url() -> str:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"the fleet test needs {POSTGRES_ENV} (scripts/start-postgres prints one)")
    return url


async def test_two_processes_credit_a_play_once(postgres_url, session: aiohttp.ClientSession):
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.announcer import WatchScheduler
    from bot.announcer.service import AnnouncerService
    from bot.catalog.registry import StationRegistry
    from bot.config import Settings, StationConfig
    from bot.delivery.announcements import credits_in
    from bot.requests.service import RequestService
    from bot.station import Play
    from bot.storage import NewRequest, PostgresStorage, Subscription

    await reset_postgres(postgres_url)
    clock = ManualClock()
    sim = StationSimulator(clock=clock)
    slots = [(TRACKS[0], 3600.0), (TRACKS[1], 3600.0)]
    sim.add_station(1, key=STATION_KEY, programme=Programme(slots, epoch=clock() - 1.0), seed=3)
    await sim.start()
    station = StationConfig("main", "Main FM", sim.base_url, 1, key=STATION_KEY, requests=True)
    subs = (
        Subscription(0, guild_id=GUILD_A, channel_id=11, station="main"),
        Subscription(0, guild_id=GUILD_B, channel_id=22, station="main"),
    )
    delivered: list[tuple[str, int, str, tuple[str, ...]]] = []
    credit_calls: dict[str, int] = {"A": 0, "B": 0}
    services: dict[str, AnnouncerService] = {}
    schedulers = []

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        async def deliver(self, sub, announcement, station, **kw: Any) -> int:  # type: ignore[no-untyped-def]
            names = tuple(c.name for c in credits_in(sub, announcement))
            delivered.append((self.name, sub.guild_id, announcement.play.title, names))
            return len(delivered)

    try:
        for name, shard in (("A", 0), ("B", 1)):
            settings = Settings(
                stations=(station,),
                shard_count=2,
                shard_ids=(shard,),
                watch_lease=1.0,
                subscriptions=subs,
            )
            storage = await PostgresStorage(postgres_url).open()
            scheduler = AsyncIOScheduler()
            scheduler.start()
            schedulers.append(scheduler)
            registry = StationRegistry(settings, session)
            service = AnnouncerService(
                settings, registry, storage, WatchScheduler(scheduler), Recorder(name)
            )
            requests = RequestService(settings, registry, storage)

            def counting(tag: str, inner):  # type: ignore[no-untyped-def]
                async def credit(slug: str, play: Play, key: str):  # type: ignore[no-untyped-def]
                    credit_calls[tag] += 1
                    return await inner(slug, play, key)

                return credit

            service.credit_requests(counting(name, requests.credits_for))
            services[name] = service
            listening = asyncio.Event()
            assert service.fleet is not None
            previous = service.fleet.on_connect

            def connected(previous=previous, listening=listening) -> None:  # type: ignore[no-untyped-def]
                previous()
                listening.set()

            service.fleet.on_connect = connected
            await service.start()
            await asyncio.wait_for(listening.wait(), timeout=10)
            if name == "A":
                await wait_for(lambda: len(delivered) == 1)  # A's guild, the first play
                await service.idle()
            # A listener of this process's guild requests the next song.
            guild = GUILD_A if name == "A" else GUILD_B
            request = NewRequest(
                guild_id=guild,
                station="main",
                user_id=100 + shard,
                display_name=f"listener {name}",
                track_id="1002",
                title=TRACKS[1].cast_title,
                title_key=TRACKS[1].cast_title.casefold(),
            )
            request_id = await storage.reserve_request(
                request, now=clock(), cooldown=600.0, hourly_cap=30
            )
            assert request_id is not None
            await storage.request_accepted(request_id)
        a, b = services["A"], services["B"]
        (watch_a,) = a.watched()
        assert watch_a.owned
        clock.advance(3600)
        a.poll_now(watch_a)
        second = TRACKS[1].title
        await wait_for(lambda: sum(d[2] == second for d in delivered) == 2)
        await a.idle()
        await b.idle()
        played = sorted(d for d in delivered if d[2] == second)
        assert played == [
            ("A", GUILD_A, second, ("listener A",)),
            ("B", GUILD_B, second, ("listener B",)),
        ]
        assert credit_calls["B"] == 0  # decided once, where the play was fanned out
        rows = await a.storage.fetch(
            "SELECT COUNT(DISTINCT play_key), COUNT(*) FROM song_requests "
            "WHERE play_key IS NOT NULL"
        )
        assert tuple(rows[0]) == (1, 2)  # both credited, to the one play
    finally:
        for service in services.values():
            await service.stop()
            await service.storage.close()
        for scheduler in schedulers:
            scheduler.shutdown(wait=False)
        await sim.stop()
