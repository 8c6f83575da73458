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

from ..util.i18n import ENGLISH, Lang
from ..util.text import safe
from .embeds import BRAND, EmbedBuilder
from .lang_dates import weekday_date, weekday_name, weekday_time
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


def week_line(start: datetime, end: datetime, lang: Lang = ENGLISH) -> str:
    """The week as 7 days: ``Thu 19 Nov – Wed 25 Nov`` when it runs midnight to midnight,
    else from and to the recap's hour (``Thu 19 Nov, 18:00 – Thu 26 Nov, 18:00``)."""
    if start.time() == end.time() == datetime.min.time():
        last = datetime.fromtimestamp(end.timestamp() - 1, end.tzinfo)
        return f"{weekday_date(lang, start)} – {weekday_date(lang, last)}"
    return f"{weekday_time(lang, start)} – {weekday_time(lang, end)}"


def recap_embed(summary: dict[str, Any], lang: Lang = ENGLISH) -> discord.Embed:
    """The recap in the guild's ``lang`` (a public post); the numbers are the stored ones."""
    station = safe(str(summary.get("station_name") or ""), limit=100) or lang.t("the station")
    zone_name = str(summary.get("zone") or "UTC")
    zone = _zone(zone_name)
    start, end = _moment(summary.get("start")), _moment(summary.get("end"))
    plays = int(summary.get("plays") or 0)
    period = week_line(start.astimezone(zone), end.astimezone(zone), lang) if start and end else "?"
    if not plays:
        text = f"{period}\n" + lang.t("OnAir saw no plays this week.")
    else:
        # English says "plays" for one too (its msgid); others pick their plural form.
        text = lang.tn(
            "{period} · **{count}** plays", "{period} · **{count}** plays", plays, period=period
        )
    text += "\n-# " + lang.t("Times in {zone}.", zone=safe(zone_name, limit=60))
    builder = EmbedBuilder(lang.t("📊 The week on {station}", station=station), text, colour=BRAND)
    played = ranked(_rows(summary.get("played")), "plays", lang=lang)
    builder.field(lang.t("Most played"), played, inline=False)
    liked = ranked(_rows(summary.get("liked")), "likes", lang=lang)
    builder.field(lang.t("Most liked"), liked, inline=False)
    peak = summary.get("peak")
    when = _moment(peak[1]) if isinstance(peak, list) and len(peak) == 2 else None
    if isinstance(peak, list) and when is not None:
        builder.field(
            lang.t("Peak listeners"),
            f"{lang.number(int(peak[0]))} · {weekday_time(lang, when.astimezone(zone))}",
        )
    busiest = summary.get("busiest")
    if isinstance(busiest, list) and len(busiest) == 3 and 0 <= int(busiest[0]) < 7:
        # The hour alone: its mean would read as the peak's figure beside it.
        weekday, hour = int(busiest[0]), int(busiest[1])
        day = weekday_name(lang, weekday)
        builder.field(
            lang.t("Busiest hour"),
            f"{day} {hour:02d}:00–{(hour + 1) % 24:02d}:00",
        )
    # Live shows are not a contest: no medals.
    live = ranked(_rows(summary.get("live")), "airings", medals=False, lang=lang)
    builder.field(lang.t("Live shows"), live, inline=False)
    # No footer: the message's own time says when it was posted.
    return builder.build()
