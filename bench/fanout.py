"""Fan-out: one announcement to 1,000 channels through the fake Discord's rate limits.

The fake enforces a global 50 requests/s limit and 5 messages per 5 s per channel (429s carry
`Via` and `retry_after`, as Discord's do). The bound is the time the global limit alone allows
(channels / 50 s); the goal is to deliver all in at most 1.15 times that, losing none.

    .venv/bin/python -m bench.fanout [--channels 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import time

from bot.announcer import Announcement
from bot.simulator import StationSimulator
from tests.support.botenv import running_bot, subscription_config
from tests.support.fakediscord import FakeDiscord

from .common import emit


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--channels", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=50)
    args = parser.parse_args()

    fake = FakeDiscord(channels_per_guild=args.channels)
    await fake.start()
    sim = StationSimulator()
    sim.add_station(1, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm")
    await sim.start()
    guild = fake.guilds[0]
    subs = "".join(subscription_config(guild.id, channel) for channel in guild.channels)
    config = f"[announcer]\nconcurrency = {args.concurrency}\n" + subs
    async with running_bot(sim, fake=fake, extra_config=config) as env:
        announcer = env.bot.announcer
        # Stop the watch so only the measured announcement is delivered.
        await announcer.idle()
        announcer.stop_watching()
        await announcer.idle()
        fake.requests.clear()
        fake.ratelimited.clear()
        fake.rate_limits = True
        info = await env.bot.registry.clients["main"].info(max_age=0)
        play = info.current_play()
        assert play is not None
        # A new play (a later start) so every channel wants it.
        from dataclasses import replace
        from datetime import timedelta

        new_play = replace(play, started=(play.started or info.fetched_at) + timedelta(hours=1))
        started = time.perf_counter()
        announcer.announce("main", Announcement(new_play, info, time.time()))  # the real fan-out
        await announcer.idle()
        elapsed = time.perf_counter() - started
        delivered = len({r.route for r in fake.requests if r.method == "POST" and r.status == 200})
    await sim.stop()
    await fake.stop()
    # A 1-s sliding window lets the first `global_limit` requests through at once.
    bound = max(1, args.channels - fake.global_limit) / fake.global_limit
    emit(
        {
            "bench": "fanout",
            "channels": args.channels,
            "delivered": delivered,
            "lost": args.channels - delivered,
            "seconds": round(elapsed, 2),
            "bound_seconds": round(bound, 2),
            "ratio_to_bound": round(elapsed / bound, 3),
            "429s": len(fake.ratelimited),
            "goal_ratio": 1.15,
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
