"""The stats chart: a PNG rendered with matplotlib's Agg backend, meant for a worker thread."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from ..station import DayStats


def render_stats_chart(days: Sequence[DayStats], title: str = "Listeners per day") -> bytes:
    """Sessions and unique listeners per day. Pure CPU work: call it via ``asyncio.to_thread``."""
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


def warm_up() -> None:
    """Import matplotlib and load its fonts once, in a thread at start-up: the first real chart
    then renders in ~0.3 s with the event loop barely noticing (cold, the import stalls it)."""
    from datetime import date

    render_stats_chart([DayStats(date(2026, 1, 1), 1, 1), DayStats(date(2026, 1, 2), 2, 1)])
