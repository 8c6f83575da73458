"""The stats chart: a PNG rendered with matplotlib's Agg backend, off the event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import multiprocessing
from collections.abc import Sequence
from typing import Any

from ..station import DayStats

# Discord's dark theme: the embed's own background, its text colours, OnAir's brand colour.
BACKGROUND = "#2b2d31"
TEXT = "#dbdee1"
MUTED = "#949ba4"
GRID = "#3f4147"
SESSIONS = "#e0245e"
UNIQUE = "#00a8fc"
LABEL_SIZE = 22  # px in the 800 px image: 11 px or more as Discord shows it


def render_stats_chart(days: Sequence[DayStats], today_last: bool = False) -> bytes:
    """Sessions and unique listeners per day, drawn for Discord's dark client.

    Discord shows an embed image at most 400 px wide (less on a phone), so it is drawn at
    800 x 360 px with type at 22 px: 11 px or more as shown, readable, where 17 px became
    8.5 px. The embed's title says what it is, so the chart has none; the y axis says "per
    day" and the busiest day is marked and named. ``today_last``: the last day is today, so
    far: its line is dashed and named, not drawn as a collapse. Pure CPU work: run it through
    ChartRenderer.
    """
    from matplotlib.dates import AutoDateLocator, num2date
    from matplotlib.figure import Figure  # Figure without pyplot: thread-safe, Agg by default
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    figure = Figure(figsize=(8, 3.6), dpi=100, facecolor=BACKGROUND)
    axes = figure.subplots()
    axes.set_facecolor(BACKGROUND)
    x: list[Any] = [d.day for d in days]
    sessions = [d.sessions for d in days]
    unique = [d.unique for d in days]
    axes.fill_between(x, sessions, color=SESSIONS, alpha=0.12, linewidth=0)
    partial = today_last and len(days) > 1
    whole = slice(None, -1) if partial else slice(None)
    axes.plot(x[whole], sessions[whole], label="sessions", color=SESSIONS, linewidth=3.5)
    axes.plot(x[whole], unique[whole], label="unique listeners", color=UNIQUE, linewidth=3.5)
    if partial:  # today so far: dashed, and said
        for values, colour in ((sessions, SESSIONS), (unique, UNIQUE)):
            axes.plot(x[-2:], values[-2:], color=colour, linewidth=3.5, linestyle=(0, (1.5, 1.5)))
        axes.annotate(  # at the top, above today: clear of the lines it names
            "today, so far",
            (x[-1], 0.97),
            xycoords=("data", "axes fraction"),
            ha="right",
            va="top",
            color=MUTED,
            fontsize=LABEL_SIZE,
        )
    if len(days) <= 14:
        size = 40 if len(days) > 1 else 160
        axes.scatter(x, sessions, color=SESSIONS, s=size, zorder=3)
        axes.scatter(x, unique, color=UNIQUE, s=size, zorder=3)
    peak = max(range(len(days)), key=lambda i: sessions[i], default=None)
    if peak is not None and sessions[peak] > 0 and len(days) > 1:
        axes.scatter(
            [x[peak]],
            [sessions[peak]],
            s=260,
            color=SESSIONS,
            edgecolors=TEXT,
            linewidths=2.5,
            zorder=4,
        )
        where = peak / (len(days) - 1)
        align = "left" if where < 0.2 else "right" if where > 0.8 else "center"
        axes.annotate(
            f"busiest: {days[peak].day:%b} {days[peak].day.day}",
            (x[peak], sessions[peak]),
            xytext=(0, 12),
            textcoords="offset points",
            ha=align,
            va="bottom",
            color=TEXT,
            fontsize=LABEL_SIZE,
        )
    axes.set_ylim(bottom=0, top=max([*sessions, *unique, 1]) * 1.3)  # room for the label
    axes.margins(x=0.03)
    axes.grid(axis="y", color=GRID, linewidth=1.2)
    axes.set_axisbelow(True)
    for side in ("top", "right", "left"):
        axes.spines[side].set_visible(False)
    axes.spines["bottom"].set_color(GRID)
    axes.tick_params(colors=MUTED, labelsize=LABEL_SIZE, length=0, pad=8)
    axes.set_ylabel("per day", color=MUTED, fontsize=LABEL_SIZE, labelpad=8)
    axes.yaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    axes.yaxis.set_major_formatter(
        FuncFormatter(lambda value, _pos: f"{value / 1000:g}k" if value >= 1000 else f"{value:g}")
    )
    if len(days) <= 3:  # too few days for a date locator: a tick per day
        axes.set_xticks(x)
        axes.margins(x=0.25)
    else:
        axes.xaxis.set_major_locator(AutoDateLocator(minticks=3, maxticks=6))  # type: ignore[no-untyped-call]

    def day_label(value: float, _position: int) -> str:
        moment = num2date(value)  # type: ignore[no-untyped-call]
        return f"{moment:%b} {moment.day}"

    axes.xaxis.set_major_formatter(FuncFormatter(day_label))
    legend = axes.legend(
        loc="lower left",
        bbox_to_anchor=(0, 1.0),
        ncols=2,
        frameon=False,
        fontsize=LABEL_SIZE,
        labelcolor=TEXT,
        handlelength=1.2,
        borderaxespad=0.1,
    )
    for handle in legend.legend_handles:
        if handle is not None:
            handle.set_linewidth(6)  # type: ignore[attr-defined]
    figure.tight_layout(pad=0.6)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", facecolor=BACKGROUND)
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

    async def render(self, days: Sequence[DayStats], today_last: bool = False) -> bytes:
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            try:
                return await loop.run_in_executor(
                    self._executor(), render_stats_chart, list(days), today_last
                )
            except (concurrent.futures.process.BrokenProcessPool, OSError):
                self.close()
                if attempt:
                    break
        return await asyncio.to_thread(render_stats_chart, days, today_last)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
