"""Helpers shared by the benchmarks: percentiles, event-loop lag, RSS, one-line JSON output."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import sys
import time
from typing import Any


def percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def rss_mb() -> float:
    """Current resident set size in MB (Linux /proc), falling back to the peak."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
        return pages * 4096 / 1e6
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class LoopLag:
    """Measures how late a 10 ms ticker wakes up: the worst event-loop stall while it runs."""

    def __init__(self, interval: float = 0.01) -> None:
        self.interval = interval
        self.worst = 0.0
        self.samples: list[float] = []
        self.timed: list[tuple[float, float]] = []  # (perf_counter at wake-up, lag)
        self.spikes: list[tuple[float, float]] = []  # (seconds since start, lag) over 20 ms
        self._started = time.perf_counter()
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.interval)
            lag = time.perf_counter() - start - self.interval
            self.samples.append(lag)
            self.timed.append((time.perf_counter(), lag))
            if lag > 0.02:
                self.spikes.append((round(start - self._started, 2), round(lag * 1000, 1)))
            self.worst = max(self.worst, lag)

    def worst_between(self, start: float, end: float) -> float:
        """Worst lag of the wake-ups that fell in [start, end] (perf_counter times)."""
        return max(
            (lag for at, lag in self.timed if start <= at <= end + self.interval), default=0.0
        )

    def start(self) -> LoopLag:
        self._task = asyncio.create_task(self._run())
        return self

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


def emit(result: dict[str, Any]) -> None:
    print(json.dumps(result, sort_keys=False), flush=True)
    sys.stdout.flush()


def ms(value: float | None) -> float | None:
    return None if value is None else round(value * 1000, 1)
