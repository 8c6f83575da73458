"""/nowplaying under load: 500 concurrent interactions on one station through the fake Discord.

Reports the upstream `info` requests (goal: one per cache window), the time from the
INTERACTION_CREATE frame leaving the fake gateway to the callback request arriving at the fake
REST API (p50, p99; this includes loopback both ways, so it bounds the bot-side time from above),
and the worst event-loop lag while a 90-day stats chart renders (it renders in the
worker process of `bot/render/chart.py`).

    .venv/bin/python -m bench.commands [--count 500]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from bot.simulator import StationSimulator
from tests.support.botenv import running_bot
from tests.support.fakediscord import FakeDiscord

from .common import LoopLag, emit, ms, percentile


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=500)
    args = parser.parse_args()
    fake = FakeDiscord()
    await fake.start()
    sim = StationSimulator()
    sim.add_station(1, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm")
    sim.add_station(2, key="station-key-SECRET-42")
    await sim.start()
    received: dict[str, float] = {}

    async def on_socket_raw_receive(raw: str) -> None:
        # discord.py has just read this frame off the gateway: the bot-side clock starts here.
        if '"INTERACTION_CREATE"' in raw:
            received[json.loads(raw)["d"]["id"]] = time.monotonic()

    async with running_bot(sim, fake=fake, enable_debug_events=True) as env:
        env.bot.add_listener(on_socket_raw_receive)
        await fake.final_message(await fake.slash("station"))  # warm up
        callbacks = lambda: fake.sent("POST", r"^/interactions/\d+/[^/]+/callback$")  # noqa: E731

        def bot_side(ids: list[str]) -> list[float]:
            arrived = {r.route.split("/")[2]: r.at for r in callbacks()}
            return [arrived[i] - received[i] for i in ids if i in arrived and i in received]

        # One at a time (station answer cached, as it is within the cache window).
        single_ids = []
        for _ in range(50):
            iid = await fake.slash("nowplaying")
            await fake.response(iid)
            single_ids.append(iid)
        single = bot_side(single_ids)

        # All at once: 500 interactions sent back to back on one cold cache.
        env.bot.registry.clients["main"].forget_cached()
        before = sim.counters["info"]
        count_before = len(callbacks())
        burst_started = time.perf_counter()
        ids = [await fake.slash("nowplaying") for _ in range(args.count)]
        await fake.wait_for(lambda: len(callbacks()) >= count_before + args.count, within=120)
        burst_seconds = time.perf_counter() - burst_started
        latencies = bot_side(ids)
        upstream = sim.counters["info"] - before

        await fake.final_message(await fake.slash("stats", {"period": "7d"}))  # first use
        charts = env.bot.get_cog("StatsCog").charts  # the cog's own renderer
        windows: list[tuple[float, float]] = []
        real_render = charts.render

        async def timed_render(*args: object) -> bytes:
            started = time.perf_counter()
            try:
                return await real_render(*args)
            finally:
                windows.append((started, time.perf_counter()))

        charts.render = timed_render
        lag = LoopLag().start()
        chart_started = time.perf_counter()
        iid = await fake.slash("stats", {"period": "90d"})
        await fake.wait_request("POST", rf"^/webhooks/\d+/itoken-{iid}", within=60)
        chart_seconds = time.perf_counter() - chart_started
        await lag.stop()
        charts.render = real_render
        render_lag = max((lag.worst_between(a, b) for a, b in windows), default=0.0)
    await sim.stop()
    await fake.stop()
    emit(
        {
            "bench": "commands",
            "interactions": args.count,
            "answered": len(latencies),
            "upstream_info_requests": upstream,
            "single_p50_ms": ms(percentile(single, 0.5)),
            "single_p99_ms": ms(percentile(single, 0.99)),
            "burst_p50_ms": ms(percentile(latencies, 0.5)),
            "burst_p99_ms": ms(percentile(latencies, 0.99)),
            "burst_seconds": round(burst_seconds, 3),
            "rest_connections": len(fake.connections),
            "stats_90d_seconds": round(chart_seconds, 3),
            "loop_lag_during_render_ms": ms(render_lag),
            "loop_lag_whole_stats_command_ms": ms(lag.worst),
            "goals": {"upstream_info_requests": 1, "p99_ms": 25, "loop_lag_ms": 20},
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
