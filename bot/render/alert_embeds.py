"""Live and offline alerts as posted: built from the stored payload, so a resumed post (after a
crash) is drawn exactly as the first attempt was."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import discord

from ..scheduled.alerts import NOT_PLAYING
from ..util.i18n import ENGLISH, Lang
from ..util.text import safe, timestamp
from .embeds import LIVE, EmbedBuilder, link_view

DOWN = discord.Colour(0xF0B232)  # amber: staff, not listeners
BACK = discord.Colour(0x23A55A)
ENDED = discord.Colour(0x80848E)


@dataclass(frozen=True, slots=True)
class AlertMessage:
    content: str | None
    embed: discord.Embed
    view: discord.ui.View | None
    role: int  # the one role this message may ping (0 = none)


def spoken(seconds: float) -> str:
    """A length as people say it: "45 s", "4 min 10 s", "2 h 05 min"."""
    total = max(0, round(seconds))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"


def _moment(value: Any) -> datetime | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC)
    return None


def alert_message(payload: dict[str, Any], lang: Lang = ENGLISH) -> AlertMessage:
    """The message of one alert (``payload`` as bot.scheduled.alert_service stores it), in the
    guild's language (``lang``). A down alert keeps its stored reason for the log and never
    shows it: alert channels may be public."""
    kind = str(payload.get("kind") or "")
    station = safe(str(payload.get("station_name") or ""), limit=100) or lang.t("The station")
    show = safe(str(payload.get("title") or ""), limit=200) or lang.t("Live show")
    at = _moment(payload.get("at"))
    since = _moment(payload.get("since"))
    role = int(payload.get("role") or 0) if kind == "live_start" else 0
    view = None
    if kind == "live_start":
        builder = EmbedBuilder(
            lang.t("🔴 LIVE NOW: {show}", show=show),
            lang.t("**{station}** is live. Tune in!", station=station),
            colour=LIVE,
        )
        view = link_view(
            [
                (lang.t("Listen"), payload.get("listen")),
                (lang.t("Web player"), payload.get("page")),
            ]
        )
    elif kind == "live_end":
        if at and since:
            back = lang.t(
                "**{station}** is back to its programme after {length}.",
                station=station,
                length=spoken((at - since).total_seconds()),
            )
        else:
            back = lang.t("**{station}** is back to its programme.", station=station)
        builder = EmbedBuilder(lang.t("Live show ended: {show}", show=show), back, colour=ENDED)
    elif kind == "down":
        # Said where listeners may read it: since when, and whether the station answers at all;
        # the server and the low-level cause ("HTTP 503") are staff's, in /onair status.
        values = {"station": station, "time": timestamp(since, "t"), "ago": timestamp(since)}
        if str(payload.get("reason") or "") == NOT_PLAYING:
            first = lang.t("**{station}** has played nothing since {time} ({ago}).", **values)
        else:
            first = lang.t("**{station}** has not answered since {time} ({ago}).", **values)
        lines = [
            first,
            lang.t("OnAir posts here again when it is back."),
            "-# " + lang.t("Admins find the cause in `/onair status`."),
        ]
        builder = EmbedBuilder(
            lang.t("⚠️ {station} is down", station=station), "\n".join(lines), colour=DOWN
        )
    else:  # back
        down = spoken((at - since).total_seconds()) if at and since else lang.t("a while")
        builder = EmbedBuilder(
            lang.t("✅ {station} is back", station=station),
            lang.t(
                "It was down for **{length}** (from {start} to {end}).",
                length=down,
                start=timestamp(since, "t"),
                end=timestamp(at, "t"),
            ),
            colour=BACK,
        )
    # No footer: the message's own time says when, and the author says who posted it.
    content = f"<@&{role}>" if role else None
    return AlertMessage(content, builder.build(), view, role)
