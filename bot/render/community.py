"""What the community features show: /top, and /onair template's replies and preview."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import discord

from ..templates.model import PARTS, VARIANTS, TemplateSet
from ..util.text import clip, safe, timestamp
from .embeds import FIELD_VALUE, EmbedBuilder

PERIODS: dict[str, tuple[str, float]] = {
    "day": ("the last 24 hours", 86400.0),
    "week": ("the last 7 days", 7 * 86400.0),
    "month": ("the last 30 days", 30 * 86400.0),
}
TOP_ROWS = 10
_MEDALS = ("🥇", "🥈", "🥉")


def _track(title: str, artist: str | None) -> str:
    name = f"**{safe(title, limit=70, fallback='?')}**"
    return f"{name} · {safe(artist, limit=50)}" if artist else name


def _rows(rows: Sequence[tuple[str, str | None, int]], unit: str) -> str:
    lines = []
    for index, (title, artist, count) in enumerate(rows[:TOP_ROWS]):
        rank = _MEDALS[index] if index < len(_MEDALS) else f"`{index + 1}.`"
        lines.append(f"{rank} {_track(title, artist)} — {unit.format(count=count)}")
    return clip("\n".join(lines), FIELD_VALUE)


def top_embed(
    station_name: str,
    period: str,
    since: datetime,
    liked: Sequence[tuple[str, str | None, int]],
    played: Sequence[tuple[str, str | None, int]],
) -> discord.Embed:
    label = PERIODS[period][0]
    builder = EmbedBuilder(
        f"Top tracks · {safe(station_name, limit=200)}",
        f"Listeners' favourites of {label} (since {timestamp(since, 'f')})",
    )
    builder.field(
        "❤ Most liked",
        _rows(liked, "❤ {count}")
        or "No likes yet: click ❤ under an announcement or `/nowplaying`.",
        inline=False,
    )
    builder.field(
        "▶ Most played",
        _rows(played, "{count}×") or "Nothing played yet in this period.",
        inline=False,
    )
    builder.footer("Likes count across every server that posted the play")
    return builder.build()


def template_summary(templates: TemplateSet | None) -> str:
    """The templates set, one line each, as code (what the admin typed, shown inertly)."""
    lines = []
    for variant in VARIANTS:
        wording = getattr(templates or TemplateSet(), variant)
        for part in PARTS:
            text = getattr(wording, part)
            if text:
                shown = clip(" ".join(text.split()).replace("`", "ˋ"), 120)
                lines.append(f"- {variant} · {part}: `{shown}`")
    return "\n".join(lines) or "No templates: the built-in layout is used."


def template_saved(templates: TemplateSet | None, channel: str) -> str:
    return f"Saved the announcement wording for {channel}.\n{template_summary(templates)}"


def template_preview(budget: Mapping[str, tuple[int, int]], played: str, *, recorded: bool) -> str:
    """The preview's heading: which play, and the characters used of each limit."""
    source = "the station's last announced play" if recorded else "the play on air now"
    order = ("embed", "title", "description", "footer", "content")
    used = " · ".join(
        f"{name} {budget[name][0]:,} of {budget[name][1]:,}"
        for name in order
        if name in budget and budget[name][0]
    )
    return f"-# Preview with {source}: {played}\n-# Characters used: {used}"
