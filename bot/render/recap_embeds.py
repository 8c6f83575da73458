"""The weekly recap as posted: one compact embed, drawn from the stored summary.

Its times are on the guild's wall clock (the zone the recap was set up in, named once): the
week, the peak and the busiest hour are the guild's, not a reader's. Rows of tracks are
``ranking.py``'s, as in ``/top``.
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import discord

from ..config.schema import WEEKDAYS
from ..util.text import safe
from .embeds import BRAND, EmbedBuilder
from .ranking import Row, ranked


def _rows(stored: Any) -> list[Row]:
    """[title, artist, count] rows; [display, count] as an older OnAir stored them."""
    rows: list[Row] = []
    for row in stored if isinstance(stored, list) else []:
        if isinstance(row, list) and len(row) == 3:
            artist = str(row[1]) if row[1] else None
            rows.append((str(row[0]), artist, int(row[2])))
        elif isinstance(row, list) and len(row) == 2:
            rows.append((str(row[0]), None, int(row[1])))
    return rows


def _moment(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC)
    return None


def _zone(name: str) -> tzinfo:
    try:
        return ZoneInfo(name) if name else UTC
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


def day_and_time(moment: datetime) -> str:
    """``Fri 20 Nov, 19:01``: short enough for a phone's inline field."""
    return f"{moment:%a} {moment.day} {moment:%b}, {moment:%H:%M}"


def _day(moment: datetime) -> str:
    return f"{moment:%a} {moment.day} {moment:%b}"


def week_line(start: datetime, end: datetime) -> str:
    """The week as 7 days: ``Thu 19 Nov – Wed 25 Nov`` when it runs midnight to midnight,
    else from and to the recap's hour (``Thu 19 Nov, 18:00 – Thu 26 Nov, 18:00``)."""
    if start.time() == end.time() == datetime.min.time():
        last = datetime.fromtimestamp(end.timestamp() - 1, end.tzinfo)
        return f"{_day(start)} – {_day(last)}"
    return f"{day_and_time(start)} – {day_and_time(end)}"


def recap_embed(summary: dict[str, Any]) -> discord.Embed:
    station = safe(str(summary.get("station_name") or ""), limit=100) or "the station"
    zone_name = str(summary.get("zone") or "UTC")
    zone = _zone(zone_name)
    start, end = _moment(summary.get("start")), _moment(summary.get("end"))
    plays = int(summary.get("plays") or 0)
    period = week_line(start.astimezone(zone), end.astimezone(zone)) if start and end else "?"
    if not plays:
        text = f"{period}\nOnAir saw no plays this week."
    else:
        text = "{period} · **{plays}** plays".format(period=period, plays=f"{plays:,}")
    text += "\n-# " + f"Times in {safe(zone_name, limit=60)}."
    builder = EmbedBuilder(f"📊 The week on {station}", text, colour=BRAND)
    builder.field("Most played", ranked(_rows(summary.get("played")), "plays"), inline=False)
    builder.field("Most liked", ranked(_rows(summary.get("liked")), "likes"), inline=False)
    peak = summary.get("peak")
    when = _moment(peak[1]) if isinstance(peak, list) and len(peak) == 2 else None
    if isinstance(peak, list) and when is not None:
        builder.field(
            "Peak listeners",
            "{count} · {when}".format(
                count=f"{int(peak[0]):,}", when=day_and_time(when.astimezone(zone))
            ),
        )
    busiest = summary.get("busiest")
    if isinstance(busiest, list) and len(busiest) == 3 and 0 <= int(busiest[0]) < 7:
        # The hour alone: its mean would read as the peak's figure beside it.
        day, hour = WEEKDAYS[int(busiest[0])], int(busiest[1])
        builder.field(
            "Busiest hour",
            f"{day} {hour:02d}:00–{(hour + 1) % 24:02d}:00",
        )
    # Live shows are not a contest: no medals.
    builder.field(
        "Live shows", ranked(_rows(summary.get("live")), "airings", medals=False), inline=False
    )
    # No footer: the message's own time says when it was posted.
    return builder.build()
