"""The weekly recap's tick on a busy week: 50,000 plays of one station, 20 guilds whose recaps
share its slot and zone (and 5 in another zone). Reports the tick's time, the weeks summed up
and the worst event-loop lag while it runs (the summary is computed in a worker thread, once
per station, week and zone); and, apart, reading the week's plays from storage and its lag.

    .venv/bin/python -m bench.recap [--plays 50000] [--guilds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from datetime import UTC, datetime, timedelta

from bot.simulator import ManualClock, StationSimulator
from bot.storage import GuildSettings
from tests.support.botenv import running_bot
from tests.support.fakediscord import FakeDiscord

from .common import LoopLag, emit, ms


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--plays", type=int, default=50_000)
    parser.add_argument("--guilds", type=int, default=20)
    args = parser.parse_args()
    slot = datetime(2026, 11, 23, 9, tzinfo=UTC)  # a Monday, 09:00 UTC
    clock = ManualClock(slot.timestamp() - 8 * 86400)
    simulator = StationSimulator(clock=clock)
    simulator.add_station(1)
    await simulator.start()
    fake = FakeDiscord()
    await fake.start()
    try:
        async with running_bot(simulator, fake=fake, clock=clock) as env:
            storage = env.bot.storage
            rng = random.Random(7)
            step = 7 * 86400 / args.plays
            start = slot - timedelta(days=7)
            rows = []
            for index in range(args.plays):
                track = rng.randrange(2000)
                rows.append(
                    (
                        "INSERT INTO plays (station, started, title, artist, listeners, live) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (
                            "main",
                            (start + timedelta(seconds=index * step)).timestamp(),
                            f"Title {track}",
                            f"Artist {track % 400}",
                            rng.randrange(500),
                            int(index % 97 == 0),
                        ),
                    )
                )
            await storage.execute_atomic(rows)
            channel = fake.guilds[0].channels[0]
            others = 5
            for index in range(args.guilds + others):
                guild_id = 10_000 + index
                if index >= args.guilds:
                    tokyo = GuildSettings(guild_id, timezone="Asia/Tokyo")
                    await storage.save_guild_settings(tokyo)
                await env.bot.recaps.configure(guild_id, channel, "main", 0, 9)
            clock.now = slot.timestamp() + 30
            lag = LoopLag(0.005).start()
            began = time.perf_counter()
            await storage.plays_between("main", slot - timedelta(days=7), slot)
            read = time.perf_counter() - began
            await asyncio.sleep(0.02)
            read_lag = lag.worst
            await lag.stop()
            lag = LoopLag(0.005).start()
            began = time.perf_counter()
            recorded = await env.bot.recaps.tick()
            took = time.perf_counter() - began
            await asyncio.sleep(0.02)
            await lag.stop()
            emit(
                {
                    "plays": args.plays,
                    "guilds": args.guilds + others,
                    "recorded": len(recorded),
                    "weeks_summed_up": env.bot.recaps.summaries,
                    "tick_ms": ms(took),
                    "read_week_ms": ms(read),
                    "read_week_worst_loop_lag_ms": ms(read_lag),
                    "worst_loop_lag_ms": ms(lag.worst),
                }
            )
            await env.bot.posts.stop()
    finally:
        await fake.stop()
        await simulator.stop()


if __name__ == "__main__":
    asyncio.run(main())
