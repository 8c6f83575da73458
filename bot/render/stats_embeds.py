"""``/stats``: a station's listeners over a range of days, its top countries and the chart."""

from __future__ import annotations

from datetime import date

import discord

from ..station import Stats
from ..util.text import flag, isolate, safe
from . import station_parts
from .embeds import EmbedBuilder

TOP_COUNTRIES = 5


def stats_embed(
    stats: Stats,
    first: date,
    last: date,
    station_name: str,
    *,
    chart_name: str | None,
    listening_now: tuple[int | None, int] | None = None,
    today: date | None = None,
) -> discord.Embed:
    """``listening_now``: (the station's own listener count, Discord voice listeners) when
    OnAir plays the station in voice somewhere. ``today`` (the station's): a range that
    holds it says that day is counted so far (the chart draws it dashed)."""
    days = stats.days_between(first, last)
    sessions = (
        stats.total_sessions if stats.total_sessions is not None else sum(d.sessions for d in days)
    )
    unique = stats.total_unique if stats.total_unique is not None else sum(d.unique for d in days)
    span = (
        f"{first:%d %b %Y}"
        if first == last
        else f"{first:%d %b} – {last:%d %b %Y} ({len(days)} days)"
    )
    lines = [span, f"**{sessions:,}** sessions · **{unique:,}** unique listeners"]
    if today is not None and first <= today <= last:
        lines.append("-# Today so far (station time): lower than a whole day.")
    if listening_now is not None:
        station_count, discord_count = listening_now
        at_station = "" if station_count is None else f"**{station_count:,}** at the station · "
        lines.append(f"Now: {at_station}**{discord_count:,}** in Discord voice through OnAir")
    second = []
    if stats.total_tlh is not None:
        second.append(f"**{stats.total_tlh:,}** h listened")
    peak = max(days, key=lambda d: d.sessions, default=None)
    if peak is not None and peak.sessions > 0 and len(days) > 1:
        second.append(f"busiest day {peak.day:%a %d %b}")
    if second:
        lines.append(" · ".join(second))
    ranked = sorted(stats.countries, key=lambda c: -c.value)
    total = sum(c.value for c in stats.countries) or 1
    if ranked:
        lines.append("")
        lines.append("**Top countries**")
        for c in ranked[:TOP_COUNTRIES]:
            name = isolate(safe(c.country or (c.iso or "?").upper(), limit=60))
            lines.append(f"{flag(c.iso)} {name} · {c.value / total:.0%} ({c.value:,})")
        rest = ranked[TOP_COUNTRIES:]
        if rest:
            share = sum(c.value for c in rest) / total
            lines.append(f"-# and {len(rest)} more countries ({share:.0%})")
    builder = EmbedBuilder(
        f"Listeners of {station_parts.station_name(None, station_name)}", "\n".join(lines)
    )
    if chart_name:
        builder.image(f"attachment://{chart_name}")
    return builder.build()
