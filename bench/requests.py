"""/request's autocomplete under load: 200 listeners typing at once, through the fake Discord.

Each listener wants one of 20 songs and types its title; Discord's client asks for choices
as they type (here at 3, 5, 8 and 12 characters, 300 ms apart, as debounced clients do), all
200 starting together. The station's search answers in 150 ms (``--latency``). Reports the
upstream searches made (per station at most ``[requests] searches_per_second`` a second plus
what the cache serves), where the answers came from, and the answer time: the fake creating
the interaction -> its callback request arriving (what Discord's 3 s counts; includes the
in-process fake's own queueing).

    .venv/bin/python -m bench.requests [--listeners 200] [--rate 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import time

from bot.simulator import TRACKS, StationSimulator
from tests.support.botenv import running_bot
from tests.support.fakediscord import FakeDiscord

from .common import LoopLag, emit, ms, percentile

STEPS = (3, 5, 8, 12)  # characters typed when the client asks
PAUSE = 0.3  # seconds between a listener's asks


async def listener(fake: FakeDiscord, user: int, title: str, sent: dict[str, float]) -> None:
    for step in STEPS:
        typed = title[:step]
        started = time.monotonic()
        iid = await fake.autocomplete("request", "song", typed, user_id=user)
        sent[iid] = started
        await asyncio.sleep(PAUSE)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--listeners", type=int, default=200)
    parser.add_argument("--rate", type=float, default=2.0, help="searches per second")
    parser.add_argument("--latency", type=float, default=0.15, help="the station's answer")
    args = parser.parse_args()
    fake = FakeDiscord()
    await fake.start()
    sim = StationSimulator()
    sim.add_station(1, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm")
    await sim.start()
    songs = [t.title for t in TRACKS[:20]]
    rng = random.Random(23)
    config = f"[requests]\nsearches_per_second = {args.rate:g}\n"
    async with running_bot(
        sim,
        fake=fake,
        extra_config=config,
        station_options="requests = true",
        enable_debug_events=True,
    ) as env:
        callbacks = lambda: fake.sent("POST", r"^/interactions/\d+/[^/]+/callback$")  # noqa: E731
        received: dict[str, float] = {}

        async def on_socket_raw_receive(raw: str) -> None:
            # discord.py has just read this frame off the gateway: the bot-side clock starts.
            if '"INTERACTION_CREATE"' in raw:
                received[json.loads(raw)["d"]["id"]] = time.monotonic()

        env.bot.add_listener(on_socket_raw_receive)
        await fake.response(await fake.autocomplete("request", "song", "warm up"))
        sim.latency = args.latency
        before = sim.counters["songrequestsearch"]
        log: list[tuple[float, str]] = []
        sim.request_log = log
        sent: dict[str, float] = {}
        lag = LoopLag().start()
        started = time.perf_counter()
        await asyncio.gather(
            *(listener(fake, 1000 + n, rng.choice(songs), sent) for n in range(args.listeners))
        )
        total = args.listeners * len(STEPS)
        seen = {"index": 0, "count": 0}

        def all_answered() -> bool:
            # Only the requests since the last look (scanning all again would cost the
            # loop the fake and the bot share quadratic time).
            for record in fake.requests[seen["index"] :]:
                seen["count"] += record.route.endswith("/callback")
            seen["index"] = len(fake.requests)
            return seen["count"] >= total + 1

        await fake.wait_for(all_answered, within=120)
        seconds = time.perf_counter() - started
        await lag.stop()
        arrived = {r.route.split("/")[2]: r.at for r in callbacks()}
        times = [arrived[i] - fake.interactions[i].created for i in sent if i in arrived]
        bot_side = [arrived[i] - received[i] for i in sent if i in arrived and i in received]
        answered = sum(
            1 for r in callbacks() if r.route.split("/")[2] in sent and r.json["data"]["choices"]
        )
        upstream = sim.counters["songrequestsearch"] - before
        per_second: dict[int, int] = {}
        for at, what in log:
            if what.startswith("songrequestsearch"):
                per_second[int(at)] = per_second.get(int(at), 0) + 1
        sources = dict(env.bot.requests.desk.answered)
    await sim.stop()
    await fake.stop()
    emit(
        {
            "bench": "requests",
            "listeners": args.listeners,
            "autocompletes": total,
            "answered": len(times),
            "with_choices": answered,
            "upstream_searches": upstream,
            "most_searches_in_one_second": max(per_second.values(), default=0),
            "sources": sources,
            "p50_ms": ms(percentile(times, 0.5)),
            "p99_ms": ms(percentile(times, 0.99)),
            "max_ms": ms(max(times, default=0.0)),
            "over_3s": sum(t > 3.0 for t in times),
            "bot_side_p50_ms": ms(percentile(bot_side, 0.5)),
            "bot_side_p99_ms": ms(percentile(bot_side, 0.99)),
            "seconds": round(seconds, 2),
            "worst_loop_lag_ms": ms(lag.worst),
            "goals": {"p99_ms": 500, "max_ms": 3000},
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
