"""The stats chart: a PNG rendered with matplotlib's Agg backend, off the event loop."""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import multiprocessing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..station import DayStats
from ..util.i18n import ENGLISH_CODE, N_, Lang
from .lang_dates import CHART_DAY_PATTERN, axis_number, chart_day

# Discord's dark theme: the embed's own background, its text colours, OnAir's brand colour.
BACKGROUND = "#2b2d31"
TEXT = "#dbdee1"
MUTED = "#949ba4"
GRID = "#3f4147"
SESSIONS = "#e0245e"
UNIQUE = "#00a8fc"
LABEL_SIZE = 22  # px in the 800 px image: 11 px or more as Discord shows it
TEXT_KEY = "Description"  # the PNG's text chunk: every word drawn on the chart, one a line
LAYOUT_KEY = "Layout"  # and where each label went (chart_labels)
SESSIONS_LABEL = N_("sessions")
UNIQUE_LABEL = N_("unique listeners")
PER_DAY = N_("per day")
TODAY_SO_FAR = N_("today, so far")
BUSIEST = N_("busiest: {day}")
DASHED = (0, (1.5, 1.5))  # a day counted so far


@dataclass(frozen=True)
class ChartText:
    """The chart's words in the viewer's language, and the language's code for its day and
    number formats: plain strings, so they cross to the worker process."""

    code: str = ENGLISH_CODE
    sessions: str = SESSIONS_LABEL
    unique: str = UNIQUE_LABEL
    per_day: str = PER_DAY
    today_so_far: str = TODAY_SO_FAR
    busiest: str = BUSIEST
    day_pattern: str = CHART_DAY_PATTERN

    @classmethod
    def of(cls, lang: Lang) -> ChartText:
        return cls(
            lang.code,
            lang.t(SESSIONS_LABEL),
            lang.t(UNIQUE_LABEL),
            lang.t(PER_DAY),
            lang.t(TODAY_SO_FAR),
            lang.t(BUSIEST),
            lang.t(CHART_DAY_PATTERN),
        )


def busiest(days: Sequence[DayStats], today_last: bool = False) -> int | None:
    """The index of the busiest whole day, or None (fewer than two whole days, or no sessions).

    A day counted so far (``today_last``: the last day is today) is never crowned: its count
    grows until midnight, so against whole days it says how old the day is, not how busy it
    was. It is compared once it is whole, tomorrow."""
    whole = len(days) - 1 if today_last else len(days)
    if whole < 2:
        return None
    peak = max(range(whole), key=lambda i: days[i].sessions)
    return peak if days[peak].sessions > 0 else None


def chart_labels(png: bytes) -> list[tuple[tuple[float, float, float, float], str]]:
    """Where the chart drew each label (legend and annotations): (x0, y0, x1, y1) in pixels
    from the bottom left, and its text, read back from the PNG."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        text = str(image.info.get(LAYOUT_KEY, ""))
    labels = []
    for line in text.splitlines():
        x0, y0, x1, y1, words = line.split(" ", 4)
        labels.append(((float(x0), float(y0), float(x1), float(y1)), words))
    return labels


def chart_words(png: bytes) -> list[str]:
    """The words a chart drew (its labels, legend, ticks), read back from the PNG."""
    from PIL import Image  # matplotlib's own dependency

    with Image.open(io.BytesIO(png)) as image:
        text = image.info.get(TEXT_KEY, "")
    return str(text).splitlines()


def render_stats_chart(
    days: Sequence[DayStats], today_last: bool = False, words: ChartText | None = None
) -> bytes:
    """Sessions and unique listeners per day, drawn for Discord's dark client.

    Discord shows an embed image at most 400 px wide (less on a phone), so it is drawn at
    800 x 360 px (400 with today's legend row) with type at 22 px: 11 px or more as shown,
    readable, where 17 px became 8.5 px. The embed's title says what it is, so the chart has
    none; the y axis says "per day" and the busiest whole day is marked and named
    (:func:`busiest`). ``today_last``: the last day is today, so far: its line is dashed and
    named, not drawn as a collapse. ``words``: the labels in the
    viewer's language, days and numbers as it writes them; every word drawn is kept in the
    PNG's ``Description`` text (read it with :func:`chart_words`). Pure CPU work: run it
    through ChartRenderer.
    """
    from matplotlib.dates import AutoDateLocator, num2date
    from matplotlib.figure import Figure  # Figure without pyplot: thread-safe, Agg by default
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    words = words or ChartText()
    # Formats only (the words come translated), the day label's pattern among them.
    lang = Lang(words.code, {CHART_DAY_PATTERN: words.day_pattern})
    partial = today_last and len(days) > 1
    # 40 px more for the legend row that names today's dashed stretch.
    figure = Figure(figsize=(8, 4.0 if partial else 3.6), dpi=100, facecolor=BACKGROUND)
    axes = figure.subplots()
    axes.set_facecolor(BACKGROUND)
    x: list[Any] = [d.day for d in days]
    sessions = [d.sessions for d in days]
    unique = [d.unique for d in days]
    axes.fill_between(x, sessions, color=SESSIONS, alpha=0.12, linewidth=0)
    whole = slice(None, -1) if partial else slice(None)
    axes.plot(x[whole], sessions[whole], label=words.sessions, color=SESSIONS, linewidth=3.5)
    axes.plot(x[whole], unique[whole], label=words.unique, color=UNIQUE, linewidth=3.5)
    if partial:  # today so far: dashed, and said in the legend (clear of every point)
        for values, colour in ((sessions, SESSIONS), (unique, UNIQUE)):
            axes.plot(x[-2:], values[-2:], color=colour, linewidth=3.5, linestyle=DASHED)
        axes.plot([], [], color=MUTED, linewidth=3.5, linestyle=DASHED, label=words.today_so_far)
    if len(days) <= 14:
        size = 40 if len(days) > 1 else 160
        axes.scatter(x, sessions, color=SESSIONS, s=size, zorder=3)
        axes.scatter(x, unique, color=UNIQUE, s=size, zorder=3)
    peak = busiest(days, partial)
    if peak is not None:
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
        axes.annotate(  # above the point, within the chart at either edge
            words.busiest.format(day=chart_day(lang, days[peak].day)),
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
    axes.set_ylabel(words.per_day, color=MUTED, fontsize=LABEL_SIZE, labelpad=8)
    axes.yaxis.set_major_locator(MaxNLocator(nbins=4, integer=True))
    axes.yaxis.set_major_formatter(FuncFormatter(lambda value, _pos: axis_number(lang, value)))
    if len(days) <= 3:  # too few days for a date locator: a tick per day
        axes.set_xticks(x)
        axes.margins(x=0.25)
    else:
        axes.xaxis.set_major_locator(AutoDateLocator(minticks=3, maxticks=6))  # type: ignore[no-untyped-call]

    def day_label(value: float, _position: int) -> str:
        return chart_day(lang, num2date(value).date())  # type: ignore[no-untyped-call]

    axes.xaxis.set_major_formatter(FuncFormatter(day_label))
    handles, labels = axes.get_legend_handles_labels()
    legends = []
    rows = 0
    if partial:  # "today, so far" on a row of its own, under the lines' names
        legends.append(_legend(axes, handles[2:], labels[2:], rows))
        axes.add_artist(legends[0])
        rows = 1
    legends.insert(0, _legend(axes, handles[:2], labels[:2], rows))
    figure.tight_layout(pad=0.6)  # lays the ticks out: their labels are known from here
    drawn = [
        axes.get_ylabel(),
        *(text.get_text() for legend in legends for text in legend.get_texts()),
        *(text.get_text() for text in axes.texts),
        *(label.get_text() for label in axes.get_xticklabels()),
        *(label.get_text() for label in axes.get_yticklabels()),
    ]
    figure.draw_without_rendering()  # places the legends: where each label went is known
    labels = [t for legend in legends for t in legend.get_texts()] + list(axes.texts)
    boxes = [(t.get_window_extent().extents, t.get_text()) for t in labels]
    layout = "\n".join(" ".join(f"{v:.0f}" for v in box) + f" {text}" for box, text in boxes)
    buffer = io.BytesIO()
    metadata = {TEXT_KEY: "\n".join(w for w in drawn if w), LAYOUT_KEY: layout}
    figure.savefig(buffer, format="png", facecolor=BACKGROUND, metadata=metadata)
    return buffer.getvalue()


def _legend(axes: Any, handles: list[Any], labels: list[str], rows_below: int) -> Any:
    """A legend row above the plot, ``rows_below`` legend rows higher than the lowest."""
    from matplotlib.transforms import offset_copy

    raised = offset_copy(
        axes.transAxes, fig=axes.figure, y=1.5 * LABEL_SIZE * rows_below, units="points"
    )
    legend = axes.legend(
        handles,
        labels,
        loc="lower left",
        bbox_to_anchor=(0, 1.0),
        bbox_transform=raised,
        ncols=2,
        frameon=False,
        fontsize=LABEL_SIZE,
        labelcolor=TEXT,
        handlelength=1.2,
        borderaxespad=0.1,
    )
    for handle in legend.legend_handles:
        if handle is not None:
            handle.set_linewidth(6)
    return legend


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

    async def render(
        self, days: Sequence[DayStats], today_last: bool = False, words: ChartText | None = None
    ) -> bytes:
        loop = asyncio.get_running_loop()
        for attempt in range(2):
            try:
                return await loop.run_in_executor(
                    self._executor(), render_stats_chart, list(days), today_last, words
                )
            except (concurrent.futures.process.BrokenProcessPool, OSError):
                self.close()
                if attempt:
                    break
        return await asyncio.to_thread(render_stats_chart, days, today_last, words)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
