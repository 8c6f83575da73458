"""Announcement latency for kind icecast: OnAir's watch following a mount's ICY metadata.

The Icecast simulator plays ``Programme.crossfaded`` (the programme ``announce_latency`` uses)
on one mount at 128 kbit/s with Icecast's default metadata interval (16000 bytes: a block about
every second), on the real clock. OnAir's StationWatch on APScheduler, with its push follower
(one ICY connection), announces each play; the delay is from the airing's start to the
announcement (``Announcement.detected_at``). Requests per play count status-json polls and ICY
connections made while the measured plays aired.

    .venv/bin/python -m bench.announce_latency --kind icecast [--plays 29] [--metaint 16000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from datetime import UTC
from typing import Any

import aiohttp
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.announcer import Announcement, StationWatch, WatchScheduler
from bot.simulator import Programme
from bot.simulator.hosts.icecast import IcecastSimulator
from bot.station.hosts.icecast import IcecastClient

from .common import ms, percentile

GOALS = {"p95_ms": 1000, "missed": 0, "doubled": 0}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    load_before = os.getloadavg()
    started_at = time.monotonic()
    start = time.time() + 1.0
    programme = Programme.crossfaded(
        seed=args.seed, epoch=start, plays=args.plays, tail=args.tail, after_live=args.after_live
    )
    sim = IcecastSimulator(metaint=args.metaint)
    sim.add_mount("/live", programme=programme)
    await sim.start()
    scheduler = AsyncIOScheduler(timezone=UTC)
    scheduler.start()
    announced: list[tuple[float, str]] = []
    counts: dict[str, tuple[int, int]] = {}
    async with aiohttp.ClientSession() as session:
        client = IcecastClient(sim.base_url, "/live", session=session)
        watch = StationWatch(client)

        async def on_play(announcement: Announcement) -> None:
            announced.append((announcement.detected_at, announcement.play.display))

        watch.listeners.append(on_play)
        await asyncio.sleep(max(0.0, start - time.time()) + 0.2)
        WatchScheduler(scheduler).add(watch)
        last = args.plays - 1
        first_start = programme.airing(1).started
        await asyncio.sleep(max(0.0, first_start - time.time()))
        counts["before"] = (sim.counters["status"], sim.counters["stream"])
        end = programme.airing(last).ends + 2.5
        await asyncio.sleep(max(0.0, end - time.time()))
        counts["after"] = (sim.counters["status"], sim.counters["stream"])
        scheduler.shutdown(wait=False)
    await sim.stop()

    delays: list[float] = []
    missed = 0
    used: set[int] = set()
    for number in range(1, last + 1):
        airing = programme.airing(number)
        match = next(
            (
                index
                for index, (at, title) in enumerate(announced)
                if index not in used
                and title == airing.item.cast_title
                and airing.started - 0.5 <= at <= airing.ends + 2.0
            ),
            None,
        )
        if match is None:
            missed += 1
            continue
        used.add(match)
        delays.append(max(0.0, announced[match][0] - airing.started))
    window = [
        at
        for at, _ in announced
        if programme.airing(1).started - 0.5 <= at <= programme.airing(last).ends
    ]
    polls = counts["after"][0] - counts["before"][0]
    connections = counts["after"][1] - counts["before"][1]
    figures = {
        "p50_ms": ms(percentile(delays, 0.5)),
        "p95_ms": ms(percentile(delays, 0.95)),
        "max_ms": ms(max(delays) if delays else None),
        "status_polls_per_play": round(polls / last, 2),
        "icy_connections": connections,
        "requests_per_play": round((polls + connections) / last, 2),
        "missed": missed,
        "doubled": len(window) - len(used),
    }
    return {
        "bench": "announce_latency",
        "kind": "icecast",
        "plays": last,
        "metaint": args.metaint,
        "seconds": round(time.monotonic() - started_at, 1),
        "load_avg_1m": [round(load_before[0], 2), round(os.getloadavg()[0], 2)],
        "figures": figures,
        "goals": GOALS,
        "goals_met": {
            key: figures[key] is not None and figures[key] <= goal for key, goal in GOALS.items()
        },
    }


def main() -> None:
    """``python -m bench.announce_icecast``: the same as ``announce_latency --kind icecast``."""
    from .announce_latency import main as latency_main

    sys.argv = [sys.argv[0], "--kind", "icecast", *sys.argv[1:]]
    asyncio.run(latency_main())


if __name__ == "__main__":
    main()
