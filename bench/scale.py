"""Scale: 500 stations and 2,000 subscriptions watched for 10 minutes in one process.

The simulator (500 stations, tracks of 60-240 s, jingles, live shows) runs in a child process so
that only OnAir is measured: the real AnnouncerService, WatchScheduler (APScheduler), one
StationClient per station on one aiohttp session, and SQLite storage, delivering to a counting
deliverer (no Discord). Reports RSS, CPU seconds, the worst event-loop lag and the counts.

    .venv/bin/python -m bench.scale [--stations 500] [--subscriptions 2000] [--duration 600]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import tempfile
import time
from datetime import UTC

import aiohttp
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.announcer import WatchScheduler
from bot.announcer.service import AnnouncerService
from bot.catalog.registry import StationRegistry
from bot.config import Settings, StationConfig
from bot.runtime.heap import freeze_startup_heap
from bot.simulator import StationSimulator
from bot.storage import SqliteStorage, Subscription

from .common import LoopLag, cpu_seconds, emit, rss_mb


def serve(stations: int, port_queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    async def run() -> None:
        sim = StationSimulator()
        for sid in range(1, stations + 1):
            sim.add_station(sid, key="k", seed=sid, track_seconds=(60.0, 240.0))
        base = await sim.start()
        port_queue.put(base)
        await asyncio.Event().wait()

    asyncio.run(run())


class CountingDeliverer:
    def __init__(self) -> None:
        self.count = 0

    async def deliver(self, sub, announcement, station, *, nonce, resumed=False):  # type: ignore[no-untyped-def]
        self.count += 1
        return


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stations", type=int, default=500)
    parser.add_argument("--subscriptions", type=int, default=2000)
    parser.add_argument("--duration", type=float, default=600.0)
    args = parser.parse_args()

    queue: multiprocessing.Queue = multiprocessing.Queue()  # type: ignore[type-arg]
    child = multiprocessing.Process(target=serve, args=(args.stations, queue), daemon=True)
    child.start()
    base = queue.get(timeout=60)
    rss_start = rss_mb()
    cpu_start = cpu_seconds()
    stations = tuple(
        StationConfig(f"s{sid}", f"Station {sid}", base, sid, key="k")
        for sid in range(1, args.stations + 1)
    )
    settings = Settings(stations=stations)
    db_dir = tempfile.mkdtemp(prefix="onair-scale-")
    storage = await SqliteStorage(os.path.join(db_dir, "scale.sqlite3")).open()
    for index in range(args.subscriptions):
        station = stations[index % len(stations)]
        await storage.upsert_subscription(
            Subscription(0, guild_id=1000 + index, channel_id=10_000 + index, station=station.slug)
        )
    connector = aiohttp.TCPConnector(limit=100)
    async with aiohttp.ClientSession(connector=connector) as session:
        registry = StationRegistry(settings, session)
        scheduler = AsyncIOScheduler(
            timezone=UTC, job_defaults={"misfire_grace_time": None, "coalesce": True}
        )
        scheduler.start()
        deliverer = CountingDeliverer()
        service = AnnouncerService(
            settings, registry, storage, WatchScheduler(scheduler), deliverer
        )
        await service.refresh()  # subscriptions were stored directly (no config file)
        freeze_startup_heap()  # as OnAirBot.setup_hook does
        lag = LoopLag().start()
        started = time.monotonic()
        peak_rss = rss_mb()
        while time.monotonic() - started < args.duration:
            await asyncio.sleep(1.0)
            peak_rss = max(peak_rss, rss_mb())
        await lag.stop()
        polls = sum(w.status.polls for w in service.watched())
        errors = sum(w.status.errors for w in service.watched())
        await service.stop()
        scheduler.shutdown(wait=False)
    await storage.close()
    child.terminate()
    lags = sorted(lag.samples)
    emit(
        {
            "bench": "scale",
            "stations": args.stations,
            "subscriptions": args.subscriptions,
            "seconds": args.duration,
            "rss_mb_start": round(rss_start, 1),
            "rss_mb_peak": round(peak_rss, 1),
            "cpu_seconds": round(cpu_seconds() - cpu_start, 2),
            "loop_lag_worst_ms": round(lag.worst * 1000, 1),
            "loop_lag_p99_ms": round(lags[int(len(lags) * 0.99)] * 1000, 1) if lags else None,
            "lag_spikes": lag.spikes[:10],
            "polls": polls,
            "poll_errors": errors,
            "announcements_delivered": deliverer.count,
            "goals": {"rss_mb": 150, "loop_lag_ms": 20},
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
