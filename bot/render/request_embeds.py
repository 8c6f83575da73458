"""What song requests show: /request's private answer, /requests and /onair requests' replies."""

from __future__ import annotations

import discord

from ..requests.service import Overview
from ..storage import RequestSettings
from ..util.i18n import ENGLISH, Lang
from ..util.text import clip, safe
from .embeds import FIELD_VALUE, EmbedBuilder

QUEUE_ROWS = 10


def accepted(
    title: str, station_name: str, *, ping: bool, listed: bool, lang: Lang = ENGLISH
) -> str:
    """The requester's private confirmation (three sentences, each whole)."""
    parts = [
        lang.t(
            "✅ **{station}** accepted your request: **{title}**.",
            station=safe(station_name, limit=80),
            title=safe(title, limit=150),
        ),
        lang.t("You'll be pinged when it airs.")
        if ping
        else lang.t("Its announcement will name you."),
    ]
    if listed:
        parts.append(lang.t("It's listed in the server's request channel."))
    return " ".join(parts)


def overview_embed(station_name: str, overview: Overview, lang: Lang = ENGLISH) -> discord.Embed:
    builder = EmbedBuilder(lang.t("Song requests · {name}", name=safe(station_name, limit=200)))
    if overview.off:
        builder.description = lang.t("The station is not taking song requests right now.")
        return builder.build()
    rows = []
    for song in overview.queue[:QUEUE_ROWS]:
        mark = lang.t("✔️ played") if song.played else lang.t("⏳ waiting")
        rows.append(f"{mark} · {safe(song.title, limit=120)}")
    builder.field(
        lang.t("The station's queue (newest first)"),
        clip("\n".join(rows), FIELD_VALUE) or lang.t("No requests in the queue."),
        inline=False,
    )
    mine = []
    for title, position in overview.mine:
        if position:
            where = lang.t("#{position} in line", position=position)
        else:
            where = lang.t("waiting (not in the queue shown)")
        mine.append(f"**{safe(title, limit=120)}** · {where}")
    builder.field(
        lang.t("Your requests"),
        clip("\n".join(mine), FIELD_VALUE) or lang.t("None waiting. Ask for one with `/request`."),
        inline=False,
    )
    builder.footer(lang.t("Played requests are credited in the announcements"))
    return builder.build()


def settings_saved(
    station_name: str, enabled: bool, rules: RequestSettings, lang: Lang = ENGLISH
) -> str:
    """The reply to /onair requests set: every rule in one sentence, in the admin's language."""
    state = lang.t("on") if enabled else lang.t("off")
    who = f"<@&{rules.role_id}>" if rules.role_id else lang.t("everyone")
    every = f"{rules.cooldown / 60:g} min"
    if rules.hourly_cap:
        cap = lang.t("{cap} an hour in this server", cap=rules.hourly_cap)
    else:
        cap = lang.t("no hourly cap")
    if rules.channel_id:
        channel = lang.t("listed in {channel}", channel=f"<#{rules.channel_id}>")
    else:
        channel = lang.t("not listed")
    return lang.t(
        "Song requests for **{station}** are **{state}** here. Who may ask: {who}; one request "
        "per person every {every}; {cap}; accepted requests {channel}.",
        station=safe(station_name, limit=80),
        state=state,
        who=who,
        every=every,
        cap=cap,
        channel=channel,
    )
