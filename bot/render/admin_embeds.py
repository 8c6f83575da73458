"""The setup commands' embeds and replies: the guild's stations, settings, announcements, status."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import discord

from ..announcer.watcher import ELSEWHERE
from ..catalog.registry import short_slug
from ..config import StationConfig
from ..storage import (
    DROPPED,
    FAILED,
    PENDING,
    SENT,
    AlertSubscription,
    GuildSettings,
    Recap,
    Subscription,
)
from ..util.i18n import LANGUAGE_NAMES
from ..util.text import plain, safe, timestamp
from .alert_embeds import spoken
from .embeds import EmbedBuilder
from .problems import staff_reason
from .station_embeds import effective_style

if TYPE_CHECKING:
    from ..announcer import StationStatus
    from ..voice.players import VoiceStatus


def station_list(stations: Sequence[StationConfig]) -> discord.Embed:
    """One field per station: its name and slug, then where it is and how it is set up."""
    builder = EmbedBuilder(
        "Stations", None if stations else "No stations yet: add one with `/onair station add`."
    )
    for s in stations:
        lines = [
            f"{s.base_url} · station #{s.station_id}",
            f"{'🔑 key set' if s.key else '⚠️ no key'} · "
            f"time zone {getattr(s.timezone, 'key', 'UTC')}",
            "from the bot's config file" if not s.owner_guild else "added in this server",
        ]
        builder.field(
            f"{plain(s.name, limit=80)} ({short_slug(s)})", "\n".join(lines), inline=False
        )
    return builder.build()


# Each watch state as an admin reads it: a marker and plain words.
_STATES = {
    "ok": "🟢 answering",
    "starting": "🟡 starting",
    "failing": "🟠 failing (retrying)",
    "unreachable": "🔴 unreachable",
    ELSEWHERE: "🟢 polled by another OnAir process",
}


def status(
    stations: Sequence[StationConfig],
    status_for: Callable[[StationConfig], StationStatus | None],
    subs: Sequence[Subscription],
    deliveries: Mapping[str, int],
    alerts: Sequence[AlertSubscription] = (),
    recap: Recap | None = None,
    voice: VoiceStatus | None = None,
) -> discord.Embed:
    """Per watched station: state, last and next poll, last error; then where it announces
    and what became of the last day's announcements. With nothing set up, that is said once,
    with the command that sets it up."""
    builder = EmbedBuilder("OnAir status")
    if voice is not None:
        builder.field("Voice", voice_line(voice), inline=False)
    watched = [(station, st) for station in stations if (st := status_for(station)) is not None]
    if not watched and not subs:
        builder.description = (
            "⚪ Nothing is announced in this server yet, so no station is watched.\n"
            "Start with `/onair announce` in the channel that should get new tracks."
        )
        return builder.build()
    for station, st in watched:
        lines = [
            _STATES.get(st.state, f"⚪ {st.state}"),
            f"last poll {timestamp(st.last_poll)} · next {timestamp(st.next_poll)}",
        ]
        if st.unreachable_since:
            lines.append(f"unreachable since {timestamp(st.unreachable_since)}")
        if st.failure is not None and st.failed_at is not None:
            # For staff: the cause, the server and when; a green marker never stands beside
            # an error without its time.
            lines.append(
                "last error: {reason}, {time}, {ago}".format(
                    reason=safe(staff_reason(st.failure), limit=200),
                    time=timestamp(st.failed_at, "t"),
                    ago=timestamp(st.failed_at),
                )
            )
        builder.field(plain(station.name, limit=200), "\n".join(lines), inline=False)
    quiet = [plain(station.name, limit=80) for station in stations if status_for(station) is None]
    if quiet and watched:
        builder.field("Not announced here", ", ".join(quiet), inline=False)
    paused = [
        f"🔴 <#{s.channel_id}>: {safe(s.paused_reason, limit=150)}" for s in subs if s.paused_reason
    ]
    active = [f"🟢 <#{s.channel_id}> ({s.mode})" for s in subs if not s.paused_reason]
    if active:
        where = "\n".join(active)
    elif subs:
        where = (
            "Nowhere: every channel is paused. Fix the cause below, then run "
            "`/onair resume channel:` for each channel."
        )
    else:
        where = "Nowhere yet: run `/onair announce` in the channel that should get new tracks."
    builder.field("Announcing in", where, inline=False)
    if paused:  # how to resume, said once: here, or above when every channel is paused
        heading = "Paused (fix the cause, then /onair resume)" if active else "Paused"
        builder.field(heading, "\n".join(paused), inline=False)
    if subs:
        builder.field("Announcements, last 24 hours", delivery_line(deliveries), inline=False)
    scheduled = [
        f"alerts of `{safe(a.station, limit=60)}` in <#{a.channel_id}>"
        + (f", pinging <@&{a.role_id}>" if a.role_id else "")
        for a in alerts
    ]
    if recap is not None:
        day = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
        scheduled.append(
            f"weekly recap of `{safe(recap.station, limit=60)}` in <#{recap.channel_id}>, "
            f"{day[recap.weekday % 7]}s at {recap.hour:02d}:00"
        )
    if scheduled:
        builder.field("Alerts and recap", "\n".join(scheduled), inline=False)
    return builder.build()


def voice_line(voice: VoiceStatus) -> str:
    """``🔊 playing `main` in #radio`` or ``🟡 rejoining #radio``, with why it waits."""
    station = safe(voice.station, limit=60)
    if voice.state == "playing":
        return f"🔊 playing `{station}` in <#{voice.channel_id}>"
    line = f"🟡 rejoining <#{voice.channel_id}> (`{station}`) after a restart or a voice failure"
    if voice.ahead > 1:
        line += (
            f": {voice.ahead} channels wait for Discord's gateway limit (about 100 voice "
            "joins a minute per shard)"
        )
    return line


# What each delivery state means to an admin, in the order shown.
_DELIVERY_WORDS = (
    (SENT, "posted"),
    (PENDING, "waiting to be posted"),
    (DROPPED, "skipped (too late: the track had ended)"),
    (FAILED, "failed (see Paused)"),
)


def delivery_line(deliveries: Mapping[str, int]) -> str:
    """``12 posted · 1 waiting to be posted``: the states that occurred, posted always."""
    parts = [
        f"**{deliveries.get(state, 0)}** {words}"
        for state, words in _DELIVERY_WORDS
        if state == SENT or deliveries.get(state, 0)
    ]
    return " · ".join(parts)


def removed(station: StationConfig) -> str:
    return f"Removed **{safe(station.name, limit=80)}** and its announcements."


def settings_saved(saved: GuildSettings) -> str:
    station = saved.default_station or "none"
    text = f"Time zone: **{saved.timezone}**; default station: **{station}**."
    if saved.language:
        text += f" Language of posts: **{LANGUAGE_NAMES.get(saved.language, saved.language)}**."
    return text


def announcing(station: StationConfig, channel: str, mode: str, style: str | None) -> str:
    """The reply to /onair announce: which station, where, in which mode and style."""
    return (
        f"New tracks of **{safe(station.name, limit=80)}** will be announced in "
        f"{channel} ({mode}, {effective_style(style)})."
    )


def unannounced(channel: str, removed: int) -> str:
    return f"Stopped announcements in {channel}." if removed else f"{channel} had no announcements."


def alerts_on(station: StationConfig, channel: str, role: str | None, offline_after: float) -> str:
    ping = f" (pinging {role})" if role else ""
    return (
        f"Alerts of **{safe(station.name, limit=80)}** go to {channel}: a live show starting"
        f"{ping} and ending, and the station down for more than {spoken(offline_after)} and "
        "back. Stop them with `/onair alerts off:True`."
    )


def alerts_off(station: StationConfig, removed: int) -> str:
    if not removed:
        return f"No alerts of **{safe(station.name, limit=80)}** were set up here."
    return f"Stopped the alerts of **{safe(station.name, limit=80)}**."


def recap_on(station: StationConfig, channel: str, day: str, hour: int, zone: str) -> str:
    return (
        f"Every {day} at {hour:02d}:00 ({safe(zone, limit=60)}), {channel} gets the week on "
        f"**{safe(station.name, limit=80)}**: most played, peak listeners, live shows, busiest "
        "hour. The time zone is this server's (`/onair settings timezone:`)."
    )


def recap_off(removed: bool) -> str:
    return "Stopped the weekly recap." if removed else "No weekly recap was set up here."


def show_events(station: StationConfig, on: bool, changed: bool) -> str:
    """The reply to /onair events: what OnAir will do (or stop doing) for live shows."""
    name = safe(station.name, limit=80)
    if not on:
        if not changed:
            return f"Live shows of **{name}** had no events here."
        return (
            f"No more events for live shows of **{name}**. Events already made stay until "
            "their show ends."
        )
    return (
        f"When **{name}** goes live, I'll make a server event for the show, mark it live "
        "while it runs and end it after (one event per show, at most 10 of mine at a time)."
    )
