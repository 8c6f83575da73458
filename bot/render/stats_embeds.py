"""``/stats``: a station's listeners over a range of days, its top countries and the chart."""

from __future__ import annotations

import re
from datetime import date

import discord

from ..station import Stats
from ..util.i18n import ENGLISH, Lang
from ..util.text import flag, isolate, safe
from . import station_parts
from .chart import busiest
from .embeds import EmbedBuilder
from .lang_dates import country, date_range, full_date, percent, weekday_date

TOP_COUNTRIES = 5
_ORDERED = re.compile(r"^(\d+)\.(?=\s)")


def stats_embed(
    stats: Stats,
    first: date,
    last: date,
    station_name: str,
    *,
    chart_name: str | None,
    listening_now: tuple[int | None, int] | None = None,
    today: date | None = None,
    lang: Lang = ENGLISH,
) -> discord.Embed:
    """``listening_now``: (the station's own listener count, Discord voice listeners) when
    OnAir plays the station in voice somewhere. ``today`` (the station's): a range that
    holds it says that day is counted so far (the chart draws it dashed). ``lang``: the
    viewer's (a private answer)."""
    days = stats.days_between(first, last)
    sessions = (
        stats.total_sessions if stats.total_sessions is not None else sum(d.sessions for d in days)
    )
    unique = stats.total_unique if stats.total_unique is not None else sum(d.unique for d in days)
    n = lang.number
    if first == last:
        span = full_date(lang, first)
    else:
        span = lang.tn(
            "{range} ({count} day)",
            "{range} ({count} days)",
            len(days),
            range=date_range(lang, first, last),
        )
    lines = [
        _ORDERED.sub(r"\1\\.", span),  # "28. Okt." would start a numbered list at 28
        lang.t(
            "**{sessions}** sessions · **{unique}** unique listeners",
            sessions=n(sessions),
            unique=n(unique),
        ),
    ]
    if today is not None and first <= today <= last:
        lines.append("-# " + lang.t("Today so far (station time): lower than a whole day."))
    if listening_now is not None:
        station_count, discord_count = listening_now
        if station_count is None:
            lines.append(
                lang.t(
                    "Now: **{discord}** in Discord voice through OnAir", discord=n(discord_count)
                )
            )
        else:
            lines.append(
                lang.t(
                    "Now: **{station}** at the station · **{discord}** in Discord voice "
                    "through OnAir",
                    station=n(station_count),
                    discord=n(discord_count),
                )
            )
    second = []
    if stats.total_tlh is not None:
        second.append(lang.t("**{hours}** h listened", hours=n(stats.total_tlh)))
    peak = busiest(days, today_last=today is not None and first <= today <= last)
    if peak is not None:
        second.append(lang.t("busiest day {day}", day=weekday_date(lang, days[peak].day)))
    if second:
        lines.append(" · ".join(second))
    ranked = sorted(stats.countries, key=lambda c: -c.value)
    total = sum(c.value for c in stats.countries) or 1
    if ranked:
        lines.append("")
        lines.append("**" + lang.t("Top countries") + "**")
        for c in ranked[:TOP_COUNTRIES]:
            named = country(lang, c.iso, c.country)
            name = isolate(safe(named or (c.iso or "?").upper(), limit=60))
            share = percent(lang, c.value / total)
            lines.append(f"{flag(c.iso)} {name} · {share} ({n(c.value)})")
        rest = ranked[TOP_COUNTRIES:]
        if rest:
            share = percent(lang, sum(c.value for c in rest) / total)
            # English says "countries" for one too (its msgid); others pick their plural form.
            more = lang.tn(
                "and {count} more countries ({share})",
                "and {count} more countries ({share})",
                len(rest),
                share=share,
            )
            lines.append("-# " + more)
    title = lang.t("Listeners of {station}", station=station_parts.station_name(None, station_name))
    builder = EmbedBuilder(title, "\n".join(lines))
    if chart_name:
        builder.image(f"attachment://{chart_name}")
    return builder.build()
