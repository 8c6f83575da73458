"""``onair run`` against a benchmark's fake Discord, its event loop's lag sampled from outside.

Exactly ``tests.support.run_against_fake`` (the unchanged ``bot.cli.main``, the fake's CA and
DNS), plus a thread that asks the bot's loop to run a callback every 10 ms and records how late
it runs: the bot's own stalls, measured without touching its code. The samples go to the file
named by ``ONAIR_BENCH_LAG_FILE`` (JSON lines ``[perf_counter at the ask, lag]``) as they come,
so the benchmark reads the stretch it measured.

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


class SampledPolicy(asyncio.DefaultEventLoopPolicy):
    """Every loop made (``asyncio.run`` makes one) gets a sampler thread."""

    def __init__(self, out: IO[str]) -> None:
        super().__init__()
        self.out = out

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        loop = super().new_event_loop()
        sampler = LagSampler(loop, self.out)
        threading.Thread(target=sampler.run, name="lag-sampler", daemon=True).start()
        return loop


if __name__ == "__main__":
    path = os.environ.get(LAG_ENV)
    if path:
        asyncio.set_event_loop_policy(SampledPolicy(open(path, "w", encoding="utf-8")))  # noqa: SIM115
    sys.exit(main(sys.argv[1:], discord_connector=connector))
