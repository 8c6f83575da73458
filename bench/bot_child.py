"""``onair run`` against a benchmark's fake Discord, its event loop's lag sampled from outside.

Exactly ``tests.support.run_against_fake`` (the unchanged ``bot.cli.main``, the fake's CA and
DNS), plus a thread that asks the bot's loop to run a callback every 10 ms and records how late
it runs: the bot's own stalls, measured without touching its code. The samples go to the file
named by ``ONAIR_BENCH_LAG_FILE`` (JSON lines ``[perf_counter at the ask, lag]``) as they come,
so the benchmark reads the stretch it measured. With ``ONAIR_BENCH_STATS_FILE`` the loop also
writes, every ``ONAIR_BENCH_STATS_EVERY`` seconds (default 5), ``[time.time(), asyncio tasks,
Python's allocated blocks]`` (from a callback on the loop: what the bot holds, not a guess).

    python -m bench.bot_child run --config PATH
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from typing import IO

from bot.cli import main
from tests.support.run_against_fake import connector

LAG_ENV = "ONAIR_BENCH_LAG_FILE"
STATS_ENV = "ONAIR_BENCH_STATS_FILE"
STATS_EVERY_ENV = "ONAIR_BENCH_STATS_EVERY"
INTERVAL = 0.01


class LagSampler:
    """One sample at a time: ask, wait until the loop has run it, write the delay."""

    def __init__(self, loop: asyncio.AbstractEventLoop, out: IO[str]) -> None:
        self.loop = loop
        self.out = out
        self.stopped = threading.Event()

    def run(self) -> None:
        ran = threading.Event()
        while not self.stopped.wait(INTERVAL) and not self.loop.is_closed():
            ran.clear()
            asked = time.perf_counter()
            try:
                self.loop.call_soon_threadsafe(ran.set)
            except RuntimeError:
                return  # the loop closed meanwhile
            while not ran.wait(1.0):
                if self.loop.is_closed():
                    return
            self.out.write(f"[{asked:.6f}, {time.perf_counter() - asked:.6f}]\n")
            self.out.flush()


class StatsSampler:
    """Every ``every`` s: the loop's task count and Python's allocated blocks, written by a
    callback on the loop itself."""

    def __init__(self, loop: asyncio.AbstractEventLoop, out: IO[str], every: float) -> None:
        self.loop = loop
        self.out = out
        self.every = every

    def _write(self) -> None:
        tasks = len(asyncio.all_tasks(self.loop))
        self.out.write(f"[{time.time():.3f}, {tasks}, {sys.getallocatedblocks()}]\n")
        self.out.flush()

    def run(self) -> None:
        while not self.loop.is_closed():
            time.sleep(self.every)
            try:
                self.loop.call_soon_threadsafe(self._write)
            except RuntimeError:
                return  # the loop closed meanwhile


class SampledPolicy(asyncio.DefaultEventLoopPolicy):
    """Every loop made (``asyncio.run`` makes one) gets a sampler thread (and a stats one)."""

    def __init__(self, out: IO[str] | None, stats: IO[str] | None = None) -> None:
        super().__init__()
        self.out = out
        self.stats = stats

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        loop = super().new_event_loop()
        if self.out is not None:
            sampler = LagSampler(loop, self.out)
            threading.Thread(target=sampler.run, name="lag-sampler", daemon=True).start()
        if self.stats is not None:
            every = float(os.environ.get(STATS_EVERY_ENV) or 5.0)
            stats = StatsSampler(loop, self.stats, every)
            threading.Thread(target=stats.run, name="stats-sampler", daemon=True).start()
        return loop


if __name__ == "__main__":
    path, stats_path = os.environ.get(LAG_ENV), os.environ.get(STATS_ENV)
    if path or stats_path:
        asyncio.set_event_loop_policy(
            SampledPolicy(
                open(path, "w", encoding="utf-8") if path else None,  # noqa: SIM115
                open(stats_path, "w", encoding="utf-8") if stats_path else None,  # noqa: SIM115
            )
        )
    sys.exit(main(sys.argv[1:], discord_connector=connector))
