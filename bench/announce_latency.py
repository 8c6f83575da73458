"""Announcement latency: OnAir's watcher against a fixed 15-s poller on the same programme.

A programme of at least 40 plays (tracks of 8-40 s, jingles, one live segment) runs in real time
on two identical simulated stations; OnAir's StationWatch (predictive scheduling on APScheduler)
watches one, a plain 15-s poller the other. For every play that started during the run we
measure the delay from its start to its announcement, the upstream requests per play, and the
missed and duplicate announcements.

    .venv/bin/python -m bench.announce_latency [--plays 40] [--min 8] [--max 40] [--seed 11]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import time
from datetime import UTC

import aiohttp
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.announcer import Announcement, StationWatch, WatchScheduler
from bot.announcer.detector import PlayDetector
from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, Programme, StationSimulator
from bot.station import StationClient, StationError

from .common import emit, ms, percentile


def build_programme(plays: int, low: float, high: float, seed: int, start: float) -> Programme:
    rng = random.Random(seed)
    slots = []
    for index in range(plays):
        if index and index % 6 == 0:
            slots.append((JINGLES[index % len(JINGLES)], rng.uniform(4, 12)))
        elif index == plays // 2:
            slots.append((LIVE_SHOW, rng.uniform(low, high)))
        else:
            slots.append((TRACKS[index % len(TRACKS)], rng.uniform(low, high)))
    # a long tail item so the programme does not wrap during the run
    slots.append((TRACKS[-1], 3600.0))
    return Programme(slots, epoch=start)


async def baseline_poller(
    client: StationClient, interval: float, seen: list[tuple[float, str]], stop: asyncio.Event
) -> None:
    detector = PlayDetector()
    while not stop.is_set():
        try:
            info = await client.info(max_age=0)
            play = detector.observe(info)
            if play is not None:
                seen.append((time.time(), play.title))
        except StationError:
            pass
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval)


def score(airings, announced: list[tuple[float, str]], end: float) -> dict[str, float | int | None]:
    latencies: list[float] = []
    missed = 0
    used: set[int] = set()
    for airing in airings:
        if airing.ends > end:
            continue
        match = None
        for index, (at, title) in enumerate(announced):
            if index in used or title != airing.item.title:
                continue
            if airing.started - 0.5 <= at <= airing.ends + 30:
                match = index
                break
        if match is None:
            missed += 1
            continue
        used.add(match)
        latencies.append(max(0.0, announced[match][0] - airing.started))
    # Announcements that match no play (a play announced twice leaves one unmatched).
    last_end = max((a.ends for a in airings if a.ends <= end), default=end)
    in_window = [a for a in announced if a[0] < last_end]
    duplicates = len(in_window) - len(used)
    return {
        "p50_ms": ms(percentile(latencies, 0.5)),
        "p95_ms": ms(percentile(latencies, 0.95)),
        "max_ms": ms(max(latencies) if latencies else None),
        "announced": len(announced),
        "missed": missed,
        "duplicates": duplicates,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plays", type=int, default=40)
    parser.add_argument("--min", type=float, default=8.0)
    parser.add_argument("--max", type=float, default=40.0)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--baseline-interval", type=float, default=15.0)
    args = parser.parse_args()

    start = time.time() + 1.0
    programme = build_programme(args.plays, args.min, args.max, args.seed, start)
    sim = StationSimulator()
    sim.add_station(1, key="k", programme=programme)
    sim.add_station(2, key="k", programme=programme)
    await sim.start()
    scheduler = AsyncIOScheduler(timezone=UTC)
    scheduler.start()
    onair: list[tuple[float, str]] = []
    baseline: list[tuple[float, str]] = []
    stop = asyncio.Event()
    async with aiohttp.ClientSession() as session:
        watch = StationWatch(StationClient(sim.base_url, 1, "k", session=session))

        async def on_play(announcement: Announcement) -> None:
            onair.append((announcement.detected_at, announcement.play.title))

        watch.listeners.append(on_play)
        await asyncio.sleep(max(0.0, start - time.time()) + 0.2)
        WatchScheduler(scheduler).add(watch)
        base_task = asyncio.create_task(
            baseline_poller(
                StationClient(sim.base_url, 2, "k", session=session),
                args.baseline_interval,
                baseline,
                stop,
            )
        )
        end = programme.airing(args.plays).started + 2.0  # the last measured play has started
        await asyncio.sleep(max(0.0, end - time.time()))
        stop.set()
        await base_task
        scheduler.shutdown(wait=False)
    await sim.stop()
    # Plays after the first one (the first is on air when watching starts).
    airings = [programme.airing(n) for n in range(1, args.plays)]
    measured = len([a for a in airings if a.ends <= end])
    result = {
        "bench": "announce_latency",
        "plays": measured,
        "onair": {
            **score(airings, onair[1:], end),
            "requests_per_play": round(sim.counters["info:1"] / max(1, measured), 2),
        },
        "baseline_15s": {
            **score(airings, baseline[1:], end),
            "requests_per_play": round(sim.counters["info:2"] / max(1, measured), 2),
        },
        "goals": {"p95_ms": 1500, "requests_per_play": 2, "missed": 0, "duplicates": 0},
    }
    emit(result)


if __name__ == "__main__":
    asyncio.run(main())
