"""The weekly recap as posted: one compact embed, drawn from the stored summary."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import discord

from ..util.text import safe, timestamp
from .embeds import BRAND, EmbedBuilder

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MEDALS = ("🥇", "🥈", "🥉")


def _lines(rows: Any, unit: str) -> str | None:
    out = []
    for index, row in enumerate(rows if isinstance(rows, list) else []):
        if not isinstance(row, list) or len(row) != 2:
            continue
        mark = MEDALS[index] if index < len(MEDALS) else f"{index + 1}."
        out.append(f"{mark} {safe(str(row[0]), limit=120)} · **{int(row[1])}** {unit}")
    return "\n".join(out) or None


def _moment(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC)
    return None


def recap_embed(summary: dict[str, Any]) -> discord.Embed:
    station = safe(str(summary.get("station_name") or ""), limit=100) or "the station"
    start, end = _moment(summary.get("start")), _moment(summary.get("end"))
    plays = int(summary.get("plays") or 0)
    period = f"{timestamp(start, 'D')} – {timestamp(end, 'D')}"
    if not plays:
        text = f"{period}\nOnAir saw no plays this week."
    else:
        text = f"{period} · **{plays:,}** plays"
    builder = EmbedBuilder(f"📊 The week on {station}", text, colour=BRAND)
    builder.field("Most played", _lines(summary.get("played"), "plays"), inline=False)
    builder.field("Most liked", _lines(summary.get("liked"), "❤"), inline=False)
    peak = summary.get("peak")
    if isinstance(peak, list) and len(peak) == 2:
        when = _moment(peak[1])
        builder.field("Peak listeners", f"**{int(peak[0]):,}** {timestamp(when, 'f')}")
    busiest = summary.get("busiest")
    if isinstance(busiest, list) and len(busiest) == 3 and 0 <= int(busiest[0]) < 7:
        day, hour, mean = WEEKDAYS[int(busiest[0])], int(busiest[1]), int(busiest[2])
        zone = safe(str(summary.get("zone") or ""), limit=60)
        where = f" ({zone})" if zone and zone != "UTC" else " UTC"
        builder.field(
            "Busiest hour",
            f"{day} {hour:02d}:00–{(hour + 1) % 24:02d}:00{where} · ~**{mean:,}** listening",
        )
    builder.field("Live shows", _lines(summary.get("live"), "×"), inline=False)
    builder.footer("OnAir weekly recap", when=end)
    return builder.build()
