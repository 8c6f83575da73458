"""Live and offline alerts as posted: built from the stored payload, so a resumed post (after a
crash) is drawn exactly as the first attempt was."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import discord

from ..scheduled.alerts import NOT_PLAYING
from ..station.errors import Failure
from ..util.text import safe, timestamp
from .embeds import LIVE, EmbedBuilder, link_view
from .problems import staff_reason

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


def alert_message(payload: dict[str, Any]) -> AlertMessage:
    """The message of one alert (``payload`` as bot.scheduled.alert_service stores it)."""
    kind = str(payload.get("kind") or "")
    station = safe(str(payload.get("station_name") or ""), limit=100) or "The station"
    show = safe(str(payload.get("title") or ""), limit=200) or "Live show"
    at = _moment(payload.get("at"))
    since = _moment(payload.get("since"))
    role = int(payload.get("role") or 0) if kind == "live_start" else 0
    view = None
    if kind == "live_start":
        builder = EmbedBuilder(
            f"🔴 LIVE NOW: {show}", f"**{station}** is live. Tune in!", colour=LIVE
        )
        view = link_view([("Listen", payload.get("listen")), ("Web player", payload.get("page"))])
    elif kind == "live_end":
        lasted = f" after {spoken((at - since).total_seconds())}" if at and since else ""
        builder = EmbedBuilder(
            f"Live show ended: {show}",
            f"**{station}** is back to its programme{lasted}.",
            colour=ENDED,
        )
    elif kind == "down":
        # For staff: the cause and the server (bot.render.problems), never a listener's advice.
        stored = str(payload.get("reason") or "")
        failure = Failure.loads(stored)
        said = staff_reason(failure) if failure is not None else stored  # older: as stored
        reason = safe(said, limit=200).rstrip(".")
        values = {"station": station, "time": timestamp(since, "t"), "ago": timestamp(since)}
        if reason == NOT_PLAYING:
            first = "**{station}** is not playing since {time} ({ago}).".format(**values)
        elif reason:
            first = "**{station}** is not answering since {time} ({ago}): {reason}.".format(
                reason=reason, **values
            )
        else:
            first = "**{station}** is not answering since {time} ({ago}).".format(**values)
        lines = [first, "OnAir posts here again when it is back."]
        builder = EmbedBuilder(f"⚠️ {station} is down", "\n".join(lines), colour=DOWN)
    else:  # back
        down = spoken((at - since).total_seconds()) if at and since else "a while"
        builder = EmbedBuilder(
            f"✅ {station} is back",
            f"It was down for **{down}** (from {timestamp(since, 't')} to {timestamp(at, 't')}).",
            colour=BACK,
        )
    # No footer: the message's own time says when, and the author says who posted it.
    content = f"<@&{role}>" if role else None
    return AlertMessage(content, builder.build(), view, role)
