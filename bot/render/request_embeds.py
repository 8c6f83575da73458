"""What song requests show: /request's private answer, /requests and /onair requests' replies."""

from __future__ import annotations

import discord

from ..requests.service import Overview
from ..storage import RequestSettings
from ..util.text import clip, safe
from .embeds import FIELD_VALUE, EmbedBuilder

QUEUE_ROWS = 10


def accepted(title: str, station_name: str, *, ping: bool, listed: bool) -> str:
    """The requester's private confirmation."""
    when = "You'll be pinged when it airs." if ping else "Its announcement will name you."
    shown = " It's listed in the server's request channel." if listed else ""
    return (
        f"✅ **{safe(station_name, limit=80)}** accepted your request: "
        f"**{safe(title, limit=150)}**. {when}{shown}"
    )


def overview_embed(station_name: str, overview: Overview) -> discord.Embed:
    builder = EmbedBuilder(f"Song requests · {safe(station_name, limit=200)}")
    if overview.off:
        builder.description = "The station is not taking song requests right now."
        return builder.build()
    rows = []
    for song in overview.queue[:QUEUE_ROWS]:
        mark = "✔️ played" if song.played else "⏳ waiting"
        rows.append(f"{mark} · {safe(song.title, limit=120)}")
    builder.field(
        "The station's queue (newest first)",
        clip("\n".join(rows), FIELD_VALUE) or "No requests in the queue.",
        inline=False,
    )
    mine = []
    for title, position in overview.mine:
        where = f"#{position} in line" if position else "waiting (not in the queue shown)"
        mine.append(f"**{safe(title, limit=120)}** · {where}")
    builder.field(
        "Your requests",
        clip("\n".join(mine), FIELD_VALUE) or "None waiting. Ask for one with `/request`.",
        inline=False,
    )
    builder.footer("Played requests are credited in the announcements")
    return builder.build()


def settings_saved(station_name: str, enabled: bool, rules: RequestSettings) -> str:
    state = "on" if enabled else "off"
    who = f"<@&{rules.role_id}>" if rules.role_id else "everyone"
    every = f"{rules.cooldown / 60:g} min"
    cap = f"{rules.hourly_cap} an hour in this server" if rules.hourly_cap else "no hourly cap"
    channel = f"listed in <#{rules.channel_id}>" if rules.channel_id else "not listed"
    return (
        f"Song requests for **{safe(station_name, limit=80)}** are **{state}** here. "
        f"Who may ask: {who}; one request per person every {every}; {cap}; accepted "
        f"requests {channel}."
    )
