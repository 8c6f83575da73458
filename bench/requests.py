"""/request's autocomplete under load: 200 listeners typing at once, through the fake Discord.

Each listener wants one of 20 songs and types its title; Discord's client asks for choices
as they type (here at 3, 5, 8 and 12 characters, 300 ms apart, as debounced clients do), all
200 starting together. The station's search answers in 150 ms (``--latency``). The bot runs as
``onair run`` in a child process (as deployed: the fake Discord's and the simulator's work are
on another core, as Discord's and the station's are); ``--in-process`` runs it in this process.

Reports the upstream searches made (per station at most ``[requests] searches_per_second`` a
second plus what the cache serves), the answers with suggestions, and the answer time as
Discord sees it: the fake dispatching INTERACTION_CREATE on the gateway -> the callback request
arriving at the fake (what Discord's 3 s counts). The bot's event-loop lag is sampled from a
thread in the child (``bench.bot_child``); this process's own lag is reported too (its delays
are in the answer time).

    .venv/bin/python -m bench.requests [--listeners 200] [--rate 2] [--in-process]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from bot.simulator import TRACKS, StationSimulator
from tests.support.botenv import STATION_KEY, config_text, running_bot
from tests.support.fakediscord import FakeDiscord

from .bot_child import LAG_ENV
from .child import child_log, prepare_child
from .common import LoopLag, cpu_seconds, emit, ms, percentile

STEPS = (3, 5, 8, 12)  # characters typed when the client asks
PAUSE = 0.3  # seconds between a listener's asks
SONGS = 20


async def listener(fake: FakeDiscord, user: int, title: str, sent: list[str]) -> None:
    for step in STEPS:
        sent.append(await fake.autocomplete("request", "song", title[:step], user_id=user))
        await asyncio.sleep(PAUSE)


async def typing(
    fake: FakeDiscord, sim: StationSimulator, listeners: int, cpu: Callable[[], float]
) -> dict[str, Any]:
    """The measured stretch: every listener typing at once; the figures seen from outside.
    ``cpu``: the bot's CPU seconds so far."""
    songs = [t.title for t in TRACKS[:SONGS]]
    rng = random.Random(23)
    before = sim.counters["songrequestsearch"]
    log: list[tuple[float, str]] = []
    sim.request_log = log
    sent: list[str] = []
    first_callback = len(fake.requests)
    connections = len(fake.connections)
    cpu_before = cpu()
    lag = LoopLag().start()
    started = time.perf_counter()
    await asyncio.gather(
        *(listener(fake, 1000 + n, rng.choice(songs), sent) for n in range(listeners))
    )
    total = listeners * len(STEPS)
    seen = {"index": first_callback, "count": 0}

    def all_answered() -> bool:
        # Only the requests since the last look (scanning all again costs quadratic time).
        for record in fake.requests[seen["index"] :]:
            seen["count"] += record.route.endswith("/callback")
        seen["index"] = len(fake.requests)
        return seen["count"] >= total

    await fake.wait_for(all_answered, within=120)
    ended = time.perf_counter()
    cpu_used = cpu() - cpu_before
    await lag.stop()
    arrived = {
        r.route.split("/")[2]: r
        for r in fake.requests[first_callback:]
        if r.method == "POST" and r.route.endswith("/callback")
    }
    times = [arrived[i].at - fake.interactions[i].created for i in sent if i in arrived]
    with_choices = sum(
        1 for i in sent if i in arrived and (arrived[i].json or {})["data"]["choices"]
    )
    per_second: dict[int, int] = {}
    for at, what in log:
        if what.startswith("songrequestsearch"):
            per_second[int(at)] = per_second.get(int(at), 0) + 1
    return {
        "autocompletes": total,
        "answered": len(times),
        "with_suggestions": with_choices,
        "upstream_searches": sim.counters["songrequestsearch"] - before,
        "most_searches_in_one_second": max(per_second.values(), default=0),
        "p50_ms": ms(percentile(times, 0.5)),
        "p99_ms": ms(percentile(times, 0.99)),
        "max_ms": ms(max(times, default=0.0)),
        "over_3s": sum(t > 3.0 for t in times),
        "seconds": round(ended - started, 2),
        "bot_cpu_ms_per_autocomplete": round(cpu_used * 1000 / total, 2),
        "tls_connections_opened": len(fake.connections) - connections,
        "harness_worst_loop_lag_ms": ms(lag.worst),
        "window": (started, ended),
    }


async def in_process(fake: FakeDiscord, sim: StationSimulator, args: Any) -> dict[str, Any]:
    async with running_bot(
        sim, fake=fake, extra_config=_config(args), station_options="requests = true"
    ) as env:
        await fake.response(await fake.autocomplete("request", "song", "warm up"))
        sim.latency = args.latency
        result = await typing(fake, sim, args.listeners, cpu_seconds)
        result["sources"] = dict(env.bot.requests.searches.answered)
        return result


async def child_process(
    fake: FakeDiscord, sim: StationSimulator, args: Any, workdir: str
) -> dict[str, Any]:
    """``onair run`` (through ``bench.bot_child``: its loop's lag sampled) in a child process."""
    text = config_text(
        sim,
        fake,
        extra=_config(args),
        db_path=os.path.join(workdir, "child.sqlite3"),
        station_options="requests = true",
    )
    lag_path = os.path.join(workdir, "lag.jsonl")
    config_path, env = prepare_child(fake, workdir, text, {LAG_ENV: lag_path})
    command = [sys.executable, "-m", "bench.bot_child", "run", "--config", config_path]
    if args.profile:
        command[1:3] = ["-m", "cProfile", "-o", args.profile, "-m", "bench.bot_child"]
    log = child_log(workdir)
    process = await asyncio.create_subprocess_exec(
        *command, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log
    )
    try:
        await asyncio.wait_for(fake.identified.wait(), timeout=60)
        await _warm_up(fake)
        sim.latency = args.latency
        result = await typing(fake, sim, args.listeners, lambda: _cpu_of(process.pid))
    finally:
        process.terminate()
        await process.wait()
        log.close()
    start, end = result["window"]
    lags = _samples(lag_path)
    result["bot_worst_loop_lag_ms"] = ms(
        max((lag for at, lag in lags if start <= at <= end), default=0.0)
    )
    return result


async def _warm_up(fake: FakeDiscord) -> None:
    """Until the child answers (its gateway is up once it has identified; ready soon after)."""
    for _ in range(30):
        try:
            await fake.response(await fake.autocomplete("request", "song", "warm up"), within=2)
            return
        except AssertionError:
            continue
    raise AssertionError("the bot never answered an autocomplete")


def _samples(path: str) -> list[tuple[float, float]]:
    """The child's lag samples: (perf_counter at the ask, lag)."""
    with open(path, encoding="utf-8") as lines:
        return [tuple(json.loads(line)) for line in lines if line.strip()]  # type: ignore[misc]


def _cpu_of(pid: int) -> float:
    """A process's CPU seconds (user + system) from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _config(args: Any) -> str:
    return f"[requests]\nsearches_per_second = {args.rate:g}\n"


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--listeners", type=int, default=200)
    parser.add_argument("--rate", type=float, default=2.0, help="searches per second")
    parser.add_argument("--latency", type=float, default=0.15, help="the station's answer")
    parser.add_argument("--in-process", action="store_true", help="the bot in this process")
    parser.add_argument("--profile", help="cProfile the child bot into this file")
    args = parser.parse_args()
    fake = FakeDiscord()
    await fake.start()
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, public_url="https://c9.radioboss.fm")
    await sim.start()
    try:
        with tempfile.TemporaryDirectory() as workdir:
            if args.in_process:
                result = await in_process(fake, sim, args)
            else:
                result = await child_process(fake, sim, args, workdir)
    finally:
        await sim.stop()
        await fake.stop()
    del result["window"]
    emit(
        {
            "bench": "requests",
            "bot": "this process" if args.in_process else "onair run, a child process",
            "listeners": args.listeners,
            "rate": args.rate,
            **result,
            "load_1min": os.getloadavg()[0],
            "goals": {"p99_ms": 500, "max_ms": 3000},
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
