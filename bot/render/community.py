"""What the community features show: /top, and /onair template's replies and preview."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

import discord

from ..templates.model import PARTS, VARIANTS, TemplateSet
from ..util.i18n import ENGLISH, N_, Lang
from ..util.text import clip, safe, timestamp
from .embeds import EmbedBuilder
from .ranking import ranked

# /top's periods: the whole line each (a translator never sees a sentence glued from pieces).
PERIODS: dict[str, tuple[str, float]] = {
    "day": (N_("Listeners' favourites of the last 24 hours (since {when})"), 86400.0),
    "week": (N_("Listeners' favourites of the last 7 days (since {when})"), 7 * 86400.0),
    "month": (N_("Listeners' favourites of the last 30 days (since {when})"), 30 * 86400.0),
}
TOP_ROWS = 10


def top_embed(
    station_name: str,
    period: str,
    since: datetime,
    liked: Sequence[tuple[str, str | None, int]],
    played: Sequence[tuple[str, str | None, int]],
    lang: Lang = ENGLISH,
) -> discord.Embed:
    """The rows are the weekly recap's (``ranking.py``)."""
    builder = EmbedBuilder(
        lang.t("Top tracks · {name}", name=safe(station_name, limit=200)),
        lang.t(PERIODS[period][0], when=timestamp(since, "f")),
    )
    builder.field(
        lang.t("Most liked"),
        ranked(liked, "likes", limit=TOP_ROWS, lang=lang)
        or lang.t("No likes yet: click ❤️ under an announcement or `/nowplaying`."),
        inline=False,
    )
    builder.field(
        lang.t("Most played"),
        ranked(played, "plays", limit=TOP_ROWS, lang=lang)
        or lang.t("Nothing played yet in this period."),
        inline=False,
    )
    builder.footer(lang.t("Likes count across every server that posted the play"))
    return builder.build()


def template_summary(templates: TemplateSet | None, lang: Lang = ENGLISH) -> str:
    """The templates set, one line each, as code (what the admin typed, shown inertly)."""
    lines = []
    for variant in VARIANTS:
        wording = getattr(templates or TemplateSet(), variant)
        for part in PARTS:
            text = getattr(wording, part)
            if text:
                shown = clip(" ".join(text.split()).replace("`", "ˋ"), 120)
                lines.append(f"- {variant} · {part}: `{shown}`")
    return "\n".join(lines) or lang.t("No templates: the built-in layout is used.")


def template_saved(templates: TemplateSet | None, channel: str, lang: Lang = ENGLISH) -> str:
    saved = lang.t("Saved the announcement wording for {channel}.", channel=channel)
    return f"{saved}\n{template_summary(templates, lang)}"


NEAR_LIMIT = 0.8  # a part's share of its limit from which the preview counts it


def template_preview(
    budget: Mapping[str, tuple[int, int]],
    played: str,
    *,
    recorded: bool,
    live: bool,
    lang: Lang = ENGLISH,
) -> str:
    """The preview's heading: which wording (live show or AutoDJ) with which play, and the
    characters of the parts that come near their limit (none: nothing to watch)."""
    if live and recorded:
        first = lang.t(
            "Preview of the live show wording with the station's last announced play: {play}",
            play=played,
        )
    elif live:
        first = lang.t(
            "Preview of the live show wording with the play on air now: {play}", play=played
        )
    elif recorded:
        first = lang.t(
            "Preview of the AutoDJ wording with the station's last announced play: {play}",
            play=played,
        )
    else:
        first = lang.t(
            "Preview of the AutoDJ wording with the play on air now: {play}", play=played
        )
    first = f"-# {first}"
    order = ("embed", "title", "description", "footer", "content")
    near = " · ".join(
        lang.t(
            "{part} {used} of {limit}",
            part=name,
            used=lang.number(budget[name][0]),
            limit=lang.number(budget[name][1]),
        )
        for name in order
        if name in budget and budget[name][0] >= NEAR_LIMIT * budget[name][1]
    )
    if not near:
        return first
    return first + "\n-# " + lang.t("Near a limit: {parts} characters", parts=near)


def like_answer(liked: bool, title: str | None, count: int, lang: Lang = ENGLISH) -> str:
    """The private answer to a click on ❤️: what it did, and how to undo it. The count is
    said here, to the one who clicked, because it cannot be kept current on every message
    that shows the play (each server's announcement, every /nowplaying)."""
    shown = safe(title, limit=200)
    if not liked:
        if shown:
            return lang.t("Like removed from *{title}*.", title=shown)
        return lang.t("Like removed.")
    if not shown:
        return lang.t("Liked: click again to undo.")
    if count <= 1:
        return lang.t(
            "Liked *{title}*: click again to undo. You are the first to like it.", title=shown
        )
    return lang.t(
        "Liked *{title}*: click again to undo. {count} listeners like it now.",
        title=shown,
        count=lang.number(count),
    )
