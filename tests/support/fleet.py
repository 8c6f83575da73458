"""Two announcer services on one PostgreSQL (one shard each) following one simulated station: the
in-process fleet the fleet tests of plays, shows and requests build the same way."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import aiohttp

from bot.simulator import ManualClock, Programme, StationSimulator
from bot.simulator.library import LibraryItem
from bot.simulator.programme import Slot

from .botenv import STATION_KEY
from .storage_backends import reset_postgres

WATCH_LEASE = 9.0  # seconds: a takeover after a stop comes at the next tick (3 s)

if TYPE_CHECKING:
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.announcer.followers import Followers
    from bot.announcer.service import AnnouncerService
    from bot.catalog.registry import StationRegistry
    from bot.config import Settings, StationConfig
    from bot.storage import Storage, Subscription


@dataclass
class Fleet:
    """The station, its manual clock and the services started on it (stopped by :func:`fleet`)."""

    postgres_url: str
    session: aiohttp.ClientSession
    clock: ManualClock
    sim: StationSimulator
    station: StationConfig
    services: dict[str, AnnouncerService] = field(default_factory=dict)
    schedulers: list[AsyncIOScheduler] = field(default_factory=list)

    async def service(
        self,
        name: str,
        shard: int,
        sender: Any,
        subscriptions: tuple[Subscription, ...] = (),
        followers: Callable[[Settings, StationRegistry, Storage], Followers] | None = None,
    ) -> AnnouncerService:
        """Process ``name`` of the fleet: shard ``shard`` of 2, its own storage connection and
        scheduler, delivering through ``sender``; not started yet. ``followers`` makes the
        services that follow its watches, from its own settings, registry and storage."""
        from apscheduler.schedulers.asyncio import AsyncIOScheduler

        from bot.announcer import WatchScheduler
        from bot.announcer.followers import Followers
        from bot.announcer.service import AnnouncerService, SharedInfo
        from bot.catalog.registry import StationRegistry
        from bot.config import Settings
        from bot.storage import PostgresStorage
        from bot.util.hooks import Hook

        settings = Settings(
            stations=(self.station,),
            subscriptions=subscriptions,
            shard_count=2,
            shard_ids=(shard,),
            # A renews its lease every third of it: 1 s let a loaded machine's stall of about
            # a second hand the station to the other process mid-test. A stop gives it back.
            watch_lease=WATCH_LEASE,
        )
        storage = await PostgresStorage(self.postgres_url).open()
        scheduler = AsyncIOScheduler()
        scheduler.start()
        self.schedulers.append(scheduler)
        # The commands of each process read what the fleet's poller stored (the announcer binds).
        shared_info: Hook[SharedInfo] = Hook("shared station info")
        registry = StationRegistry(settings, self.session, shared_info=shared_info)
        service = AnnouncerService(
            settings,
            registry,
            storage,
            WatchScheduler(scheduler),
            sender,
            followers=followers(settings, registry, storage) if followers else Followers(),
            shared_info=shared_info,
        )
        self.services[name] = service
        return service

    async def start_listening(self, service: AnnouncerService) -> None:
        """Start ``service`` and return once its LISTEN for the other processes' plays is up."""
        listening = asyncio.Event()
        assert service.fleet is not None
        previous = service.fleet.on_connect

        def connected() -> None:
            previous()
            listening.set()

        service.fleet.on_connect = connected
        await service.start()
        await asyncio.wait_for(listening.wait(), timeout=10)

    async def close(self) -> None:
        for service in self.services.values():
            await service.stop()
            await service.storage.close()
        for scheduler in self.schedulers:
            scheduler.shutdown(wait=False)
        await self.sim.stop()


@contextlib.asynccontextmanager
async def fleet(
    postgres_url: str,
    session: aiohttp.ClientSession,
    slots: Sequence[tuple[LibraryItem, float] | Slot],
    **station_options: Any,
) -> AsyncIterator[Fleet]:
    """An emptied database and station 1 playing ``slots`` on a manual clock, one second in."""
    from bot.config import StationConfig

    await reset_postgres(postgres_url)
    clock = ManualClock()
    sim = StationSimulator(clock=clock)
    sim.add_station(
        1, key=STATION_KEY, programme=Programme(list(slots), epoch=clock() - 1.0), seed=3
    )
    await sim.start()
    station = StationConfig("main", "Main FM", sim.base_url, 1, key=STATION_KEY, **station_options)
    rig = Fleet(postgres_url, session, clock, sim, station)
    try:
        yield rig
    finally:
        await rig.close()
