"""Fleet: 4 processes × 500 stations on one PostgreSQL, every station followed from every shard.

Each process is a shard running the real AnnouncerService (watch leases, NOTIFY, the outbox)
with a recording deliverer instead of Discord; the simulator (500 stations, tracks of 20-60 s)
runs in a child process of its own. Measured against one process on the same database:

- polls per play: upstream ``info`` requests (simulator counters) / plays recorded, over the
  same window; the fleet's goal is ≤ 1.1× the single process's;
- announcement delay (delivery time − the station's reported start) p50/p95, in the fleet split
  into the poller's own deliveries and those that reached another process through NOTIFY (goal:
  p95 through NOTIFY ≤ 1.5× the single process's p95);
- takeover: kill -9 the process holding the most watch leases; seconds until every one of its
  stations is held by another process (goal ≤ 5 s; the watch lease is 3 s, renewed every 1 s).

    export ONAIR_TEST_POSTGRES_URL=$(scripts/start-postgres)
    .venv/bin/python -m bench.fleet [--stations 500] [--processes 4] [--measure 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import signal
import time
import urllib.request
from typing import Any

from .common import emit, ms, percentile

SPAWN = multiprocessing.get_context("spawn")
WATCH_LEASE = 3.0
LEAD = 20.0  # seconds from a phase's start to its programmes' epoch (processes start meanwhile)


def guild_for(index: int, shard: int, shards: int) -> int:
    """A guild id on ``shard`` by Discord's formula ``(id >> 22) % shards``."""
    return ((index * shards + shard) << 22) | 1


def serve(stations: int, epoch: float, queue: Any) -> None:
    """The simulator; every phase gets the same programmes from ``epoch`` on (same seeds), so
    the single process and the fleet are measured on the same stretch of the same programmes."""
    from bot.simulator import Programme, StationSimulator

    async def run() -> None:
        sim = StationSimulator()
        for sid in range(1, stations + 1):
            programme = Programme.generate(seed=sid, now=epoch, track_seconds=(20.0, 60.0))
            # Songs keep their library length (DURATION) on this compressed clock: 20-60 s
            # slots of songs are songs, not jingles (which are not announced).
            sim.add_station(sid, key="k", programme=programme, library_durations=True)
        queue.put(await sim.start())
        await asyncio.Event().wait()

    asyncio.run(run())


def shard_main(url: str, base: str, stations: int, shard: int, shards: int, queue: Any) -> None:
    """One process of the fleet (``shards`` 0: a single process serving every guild)."""
    import logging

    # Lease moves and warnings on stderr (stdout carries the one JSON line).
    logging.basicConfig(level=logging.WARNING, format=f"shard {shard}: %(message)s")
    logging.getLogger("onair.fleet").setLevel(logging.INFO)
    asyncio.run(_shard(url, base, stations, shard, shards, queue))


async def _shard(url: str, base: str, stations: int, shard: int, shards: int, queue: Any) -> None:
    from datetime import UTC

    import aiohttp
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.announcer import WatchScheduler
    from bot.announcer.service import AnnouncerService
    from bot.catalog.registry import StationRegistry
    from bot.config import Settings, StationConfig
    from bot.storage import PostgresStorage, Subscription

    configs = tuple(
        StationConfig(f"s{sid}", f"Station {sid}", base, sid, key="k")
        for sid in range(1, stations + 1)
    )
    # Every station followed from every shard: one channel per (station, shard).
    subs = tuple(
        Subscription(0, guild_for(i, s, max(shards, 1)), 10_000_000 + i * 16 + s, c.slug)
        for i, c in enumerate(configs)
        for s in range(max(shards, 1))
    )
    settings = Settings(
        stations=configs,
        subscriptions=subs,
        shard_count=shards,
        shard_ids=(shard,) if shards else (),
        watch_lease=WATCH_LEASE,
    )
    records: list[tuple[float, float, str]] = []  # (wall time, delay, "own" | "notified")
    service: AnnouncerService | None = None

    class Recorder:
        async def deliver(self, sub, announcement, station, *, nonce, resumed=False):  # type: ignore[no-untyped-def]
            play = announcement.play
            if play.started is not None and play.started_exact and service is not None:
                watch = service.watch_for(station)
                kind = "own" if watch is not None and watch.owned else "notified"
                now = time.time()
                records.append((now, now - play.started.timestamp(), kind))
            return

    storage = await PostgresStorage(url).open()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)

    def report() -> None:
        """SIGUSR1: hand the figures so far to the parent (before it kills one of us)."""
        assert service is not None
        polls = sum(w.status.polls for w in service.watched())
        queue.put(
            {
                "report": shard,
                "records": list(records),
                "polls": polls,
                "taken": service.fleet.taken if service.fleet else 0,
            }
        )

    loop.add_signal_handler(signal.SIGUSR1, report)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=100)) as session:
        scheduler = AsyncIOScheduler(
            timezone=UTC, job_defaults={"misfire_grace_time": None, "coalesce": True}
        )
        scheduler.start()
        service = AnnouncerService(
            settings,
            StationRegistry(settings, session),
            storage,
            WatchScheduler(scheduler),
            Recorder(),
        )
        await service.start()
        queue.put({"ready": shard, "pid": os.getpid(), "owner": service.owner})
        await stop.wait()
        await service.stop()
        scheduler.shutdown(wait=False)
    await storage.close()


async def reset(url: str) -> None:
    """An empty database for each phase (the tables are re-created when the processes open it)."""
    import asyncpg

    connection = await asyncpg.connect(url, timeout=10)
    try:
        await connection.execute("DROP SCHEMA public CASCADE; CREATE SCHEMA public")
    finally:
        await connection.close()


def info_requests(base: str) -> int:
    with urllib.request.urlopen(f"{base}/_admin/counters", timeout=10) as answer:
        return int(json.load(answer).get("info", 0))


async def fetchval(url: str, sql: str) -> Any:
    import asyncpg

    connection = await asyncpg.connect(url, timeout=10)
    try:
        return await connection.fetchval(sql)
    finally:
        await connection.close()


async def phase(
    url: str, stations: int, processes: int, warmup: float, measure: float, kill: bool
) -> dict[str, Any]:
    await reset(url)
    queue = SPAWN.Queue()
    epoch = time.time() + LEAD
    sim = SPAWN.Process(target=serve, args=(stations, epoch, queue), daemon=True)
    sim.start()
    try:
        base = await asyncio.to_thread(queue.get, True, 60)
        return await _measure(url, base, queue, epoch, stations, processes, warmup, measure, kill)
    finally:
        sim.terminate()


async def _measure(
    url: str,
    base: str,
    queue: Any,
    epoch: float,
    stations: int,
    processes: int,
    warmup: float,
    measure: float,
    kill: bool,
) -> dict[str, Any]:
    shards = processes if processes > 1 else 0
    children = [
        SPAWN.Process(target=shard_main, args=(url, base, stations, i, shards, queue), daemon=True)
        for i in range(processes)
    ]
    for child in children:
        child.start()
    owners: dict[str, int] = {}
    for _ in children:
        message = await asyncio.to_thread(queue.get, True, 120)
        owners[message["owner"]] = message["ready"]
    ready_after = time.time() - (epoch - LEAD)
    # Start-up (every station's current play is announced), then the window, both from the
    # programmes' epoch: the same stretch of programme in every phase.
    await asyncio.sleep(max(0.0, epoch + warmup - time.time()))
    started = time.time()
    requests0 = await asyncio.to_thread(info_requests, base)
    plays0 = await fetchval(url, "SELECT COUNT(*) FROM announcements")
    await asyncio.sleep(measure)
    requests = await asyncio.to_thread(info_requests, base) - requests0
    plays = await fetchval(url, "SELECT COUNT(*) FROM announcements") - plays0
    ended = time.time()
    for child in children:
        os.kill(child.pid or 0, signal.SIGUSR1)
    own: list[float] = []
    notified: list[float] = []
    taken = 0
    for _ in children:
        message = await asyncio.to_thread(queue.get, True, 60)
        taken += message["taken"]
        for at, delay, kind in message["records"]:
            if started <= at <= ended:
                (own if kind == "own" else notified).append(delay)
    result: dict[str, Any] = {
        "processes": processes,
        "ready_after_s": round(ready_after, 1),
        "plays": plays,
        "info_requests": requests,
        "polls_per_play": round(requests / plays, 3) if plays else None,
        # Leases taken since start-up, all processes: the station count when none ever moved.
        "leases_taken": taken,
    }
    victim = None
    if kill:
        held = await fetchval(
            url,
            "SELECT json_object_agg(owner, n) FROM (SELECT owner, COUNT(*) AS n FROM watch_leases "
            "GROUP BY owner) t",
        )
        counts = json.loads(held)
        result["leases_per_process"] = sorted(counts.values(), reverse=True)
        victim_owner = max(counts, key=counts.get)
        victim = owners[victim_owner]
        killed = time.monotonic()
        os.kill(children[victim].pid or 0, signal.SIGKILL)
        children[victim].join()
        now = "EXTRACT(EPOCH FROM clock_timestamp())"
        orphaned = f"SELECT COUNT(*) FROM watch_leases WHERE owner = '{{}}' OR lease_until < {now}"
        live = f"SELECT COUNT(*) FROM watch_leases WHERE lease_until >= {now}"
        while True:
            left = await fetchval(url, orphaned.format(victim_owner.replace("'", "''")))
            if left == 0 and await fetchval(url, live) == stations:
                break
            if time.monotonic() - killed > 60:
                break
            await asyncio.sleep(0.05)
        result["killed_leases"] = counts[victim_owner]
        result["takeover_seconds"] = round(time.monotonic() - killed, 2)
    for index, child in enumerate(children):
        if index != victim:
            os.kill(child.pid or 0, signal.SIGTERM)
    for child in children:
        child.join(timeout=20)
    everything = own + notified
    result.update(
        {
            "deliveries": len(everything),
            "delay_p50_ms": ms(percentile(everything, 0.5)),
            "delay_p95_ms": ms(percentile(everything, 0.95)),
            "own_deliveries": len(own),
            "own_p95_ms": ms(percentile(own, 0.95)),
            "notified_deliveries": len(notified),
            "notified_p50_ms": ms(percentile(notified, 0.5)),
            "notified_p95_ms": ms(percentile(notified, 0.95)),
        }
    )
    return result


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stations", type=int, default=500)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=25.0)
    parser.add_argument("--measure", type=float, default=60.0)
    parser.add_argument("--database-url", default=os.environ.get("ONAIR_TEST_POSTGRES_URL", ""))
    args = parser.parse_args()
    if not args.database_url:
        parser.error("needs --database-url or ONAIR_TEST_POSTGRES_URL (scripts/start-postgres)")
    single = await phase(args.database_url, args.stations, 1, args.warmup, args.measure, False)
    fleet = await phase(
        args.database_url, args.stations, args.processes, args.warmup, args.measure, True
    )
    ratio = (
        round(fleet["polls_per_play"] / single["polls_per_play"], 3)
        if fleet["polls_per_play"] and single["polls_per_play"]
        else None
    )
    delay_ratio = (
        round(fleet["notified_p95_ms"] / single["delay_p95_ms"], 3)
        if fleet["notified_p95_ms"] and single["delay_p95_ms"]
        else None
    )
    emit(
        {
            "bench": "fleet",
            "stations": args.stations,
            "watch_lease_s": WATCH_LEASE,
            "measure_s": args.measure,
            "single": single,
            "fleet": fleet,
            "polls_per_play_ratio": ratio,
            "notified_p95_ratio": delay_ratio,
            "goals": {
                "polls_per_play_ratio": 1.1,
                "takeover_seconds": 5,
                "notified_p95_ratio": 1.5,
            },
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
