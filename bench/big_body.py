"""Big answers: a ~2 MiB info answer that changes every poll, parsed inline vs in a worker.

Prints the worst event-loop stall and the 99th percentile of a 10 ms ticker's lateness, and
the median poll time, for both ways; the client parses answers above INLINE_PARSE_BYTES
(256 KiB) in a worker thread. What stays on the loop's clock in the worker case is what holds
the GIL in one C call: json.loads (~30 ms for 2 MiB) and garbage collections that the
worker's allocations trigger.

    .venv/bin/python -m bench.big_body [--polls 20] [--size-kib 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import aiohttp

from bot.simulator import StationSimulator
from bot.station import StationClient
from bot.station import client as client_module
from tests.fixtures import responses

from .common import LoopLag, emit, ms, percentile


def body(size: int, serial: int) -> str:
    info = responses.full_info()
    recent = info["recent"]
    per_item = len(json.dumps(recent)) // len(recent) + 12
    items = [
        {**recent[n % len(recent)], "title": f"Song #{serial}-{n}"} for n in range(size // per_item)
    ]
    info["recent"] = items
    return json.dumps(info)


async def run(polls: int, size: int, inline_limit: int) -> dict[str, float | None]:
    client_module.INLINE_PARSE_BYTES = inline_limit
    sim = StationSimulator()
    sim.add_station(1, key="k")
    await sim.start()
    bodies = [body(size, serial) for serial in range(polls)]
    times: list[float] = []
    async with aiohttp.ClientSession() as session:
        client = StationClient(sim.base_url, 1, "k", session=session, max_bytes=4 * size)
        lag = LoopLag().start()
        for text in bodies:
            sim.inject("status", status=200, body=text, endpoint="info", times=1)
            started = time.perf_counter()
            await client.info(max_age=0)
            times.append(time.perf_counter() - started)
        await lag.stop()
    await sim.stop()
    return {
        "worst_loop_stall_ms": ms(lag.worst),
        "p99_loop_lag_ms": ms(percentile(lag.samples, 0.99)),
        "median_poll_ms": ms(statistics.median(times)),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--polls", type=int, default=20)
    parser.add_argument("--size-kib", type=int, default=2000)
    args = parser.parse_args()
    size = args.size_kib * 1024
    default = client_module.INLINE_PARSE_BYTES
    inline = await run(args.polls, size, inline_limit=size * 10)
    worker = await run(args.polls, size, inline_limit=default)
    emit({"bench": "big_body", "size_kib": args.size_kib, "inline": inline, "worker": worker})


if __name__ == "__main__":
    asyncio.run(main())
