"""The setup commands' embeds and replies: the guild's stations, settings, announcements, status.

Every reply here is private, so it is said in the admin's own language (``lang``, from
``interaction.locale``); English is the default, and its text is the msgid.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import discord

from .. import errors
from ..announcer.watcher import ELSEWHERE
from ..catalog.registry import HostState, short_slug
from ..config import StationConfig
from ..station.source import KIND_NAMES
from ..storage import (
    DROPPED,
    FAILED,
    PENDING,
    SENT,
    AlertSubscription,
    GuildSettings,
    Recap,
    SongVote,
    Subscription,
)
from ..util.i18n import ENGLISH, LANGUAGE_NAMES, N_, Lang
from ..util.text import plain, safe, timestamp
from .alert_embeds import spoken
from .embeds import EmbedBuilder
from .paused import paused_reason
from .problems import staff_reason
from .station_embeds import effective_style

if TYPE_CHECKING:
    from ..announcer import StationStatus
    from ..voice.players import VoiceStatus

# The reply of /onair preview and /onair template preview when no play can be shown.
NOTHING_ON_AIR = N_("Nothing is on air right now.")
# Also the names of /onair recap's `day` choices, so Discord shows them in the admin's language.
WEEKDAY_NAMES = (
    N_("Monday"),
    N_("Tuesday"),
    N_("Wednesday"),
    N_("Thursday"),
    N_("Friday"),
    N_("Saturday"),
    N_("Sunday"),
)


def weekday(lang: Lang, index: int) -> str:
    """Monday .. Sunday (0-6) in the language."""
    return lang.t(WEEKDAY_NAMES[index % 7])


def station_list(stations: Sequence[StationConfig], lang: Lang = ENGLISH) -> discord.Embed:
    """One field per station: its name and slug, then where it is and how it is set up."""
    builder = EmbedBuilder(
        lang.t("Stations"),
        None if stations else lang.t("No stations yet: add one with `/onair station add`."),
    )
    for s in stations:
        key = lang.t("🔑 key set") if s.key else lang.t("⚠️ no key")
        zone = lang.t("time zone {zone}", zone=getattr(s.timezone, "key", "UTC"))
        lines = [
            where_on_host(s, lang),
            f"{key} · {zone}",
            lang.t("from the bot's config file")
            if not s.owner_guild
            else lang.t("added in this server"),
        ]
        builder.field(
            f"{plain(s.name, limit=80)} ({short_slug(s)})", "\n".join(lines), inline=False
        )
    return builder.build()


# Where a station is on its host, per kind: {ref} is its number, short name, mount or sid.
_WHERE = {
    "azuracast": N_("{server} · AzuraCast station {ref}"),
    "icecast": N_("{server} · Icecast mount {ref}"),
    "shoutcast": N_("{server} · Shoutcast stream #{ref}"),
}


def where_on_host(station: StationConfig, lang: Lang = ENGLISH) -> str:
    """``server · station #N`` (RadioBOSS Cloud), or the mount, short name or sid of the
    station on a host of another kind."""
    text = _WHERE.get(station.kind)
    if text is None:
        return lang.t(
            "{server} · station #{number}", server=station.base_url, number=station.station_id
        )
    ref = station.station_id
    if isinstance(ref, str):  # a name the admin typed: in a code span it cannot leave
        ref = "`" + plain(ref, limit=200).replace("`", "'") + "`"
    return lang.t(text, server=station.base_url, ref=ref)


# Each watch state as an admin reads it: a marker and plain words.
_STATES = {
    "ok": N_("🟢 answering"),
    "starting": N_("🟡 starting"),
    "failing": N_("🟠 failing (retrying)"),
    "unreachable": N_("🔴 unreachable"),
    ELSEWHERE: N_("🟢 polled by another OnAir process"),
}


def status(
    stations: Sequence[StationConfig],
    status_for: Callable[[StationConfig], StationStatus | None],
    subs: Sequence[Subscription],
    deliveries: Mapping[str, int],
    alerts: Sequence[AlertSubscription] = (),
    recap: Recap | None = None,
    voice: VoiceStatus | None = None,
    lang: Lang = ENGLISH,
    *,
    event_stations: Sequence[str] = (),
    may_make_events: bool = True,
    host_of: Callable[[StationConfig], HostState] | None = None,
    song_vote: SongVote | None = None,
    next_vote: float | None = None,
) -> discord.Embed:
    """Per watched station: state, last and next poll, last error; then where it announces
    and what became of the last day's announcements. With nothing set up, that is said once,
    with the command that sets it up. Voice, the live-show events (``event_stations``, and
    whether OnAir may make them here) and the song votes come first: they need no
    announcement."""
    builder = EmbedBuilder(lang.t("OnAir status"))
    if voice is not None:
        builder.field(lang.t("Voice"), voice_line(voice, lang), inline=False)
    if event_stations:
        builder.field(
            lang.t("Live-show events"),
            events_line(event_stations, may_make_events, lang),
            inline=False,
        )
    if song_vote is not None:
        builder.field(
            lang.t("Song votes"), song_vote_line(song_vote, next_vote, lang), inline=False
        )
    watched = [(station, st) for station in stations if (st := status_for(station)) is not None]
    if not watched and not subs:
        builder.description = lang.t(
            "⚪ Nothing is announced in this server yet, so no station is watched.\n"
            "Start with `/onair announce` in the channel that should get new tracks."
        )
        return builder.build()
    for station, st in watched:
        state = lang.t(_STATES[st.state]) if st.state in _STATES else f"⚪ {st.state}"
        lines = [
            state,
            lang.t(
                "last poll {last} · next {next}",
                last=timestamp(st.last_poll),
                next=timestamp(st.next_poll),
            ),
        ]
        if host_of is not None:  # another process follows the pushes of a watch it holds
            lines.append(host_line(host_of(station), lang, here=st.state != ELSEWHERE))
        if st.unreachable_since:
            since = timestamp(st.unreachable_since, "f")  # "since 5 minutes ago" reads wrong
            lines.append(lang.t("unreachable since {since}", since=since))
        if st.failure is not None and st.failed_at is not None:
            # For staff: the cause, the server and when; a green marker never stands beside
            # an error without its time.
            lines.append(
                lang.t(
                    "last error: {reason}, {time}, {ago}",
                    reason=safe(staff_reason(st.failure, lang), limit=200),
                    time=timestamp(st.failed_at, "t"),
                    ago=timestamp(st.failed_at),
                )
            )
        builder.field(plain(station.name, limit=200), "\n".join(lines), inline=False)
    quiet = [plain(station.name, limit=80) for station in stations if status_for(station) is None]
    if quiet and watched:
        builder.field(lang.t("Not announced here"), ", ".join(quiet), inline=False)
    _announcing(builder, subs, deliveries, lang)
    _scheduled(builder, alerts, recap, lang)
    return builder.build()


def host_line(host: HostState, lang: Lang = ENGLISH, *, here: bool = True) -> str:
    """The station's host and, for one that pushes its changes, whether its stream is live
    (known ``here``, in the process that polls the station)."""
    name = KIND_NAMES.get(host.kind, host.kind)
    if not here:
        return lang.t("host: {host}", host=name)
    if host.push_live is None:
        return lang.t("host: {host} (polled)", host=name)
    if host.push_live:
        return lang.t("host: {host} · 🟢 pushes each change", host=name)
    return lang.t("host: {host} · 🟠 push not connected, polling meanwhile", host=name)


def _announcing(
    builder: EmbedBuilder,
    subs: Sequence[Subscription],
    deliveries: Mapping[str, int],
    lang: Lang,
) -> None:
    """Where the guild announces, what is paused and why, and the last day's deliveries."""
    paused = [
        f"🔴 <#{s.channel_id}>: {safe(paused_reason(s.paused_reason, lang), limit=150)}"
        for s in subs
        if s.paused_reason
    ]
    active = [
        f"🟢 <#{s.channel_id}> ({mode_name(s.mode, lang)})" for s in subs if not s.paused_reason
    ]
    if active:
        where = "\n".join(active)
    elif subs:
        where = lang.t(
            "Nowhere: every channel is paused. Fix the cause below, then run "
            "`/onair resume channel:` for each channel."
        )
    else:
        where = lang.t(
            "Nowhere yet: run `/onair announce` in the channel that should get new tracks."
        )
    builder.field(lang.t("Announcing in"), where, inline=False)
    if paused:  # how to resume, said once: here, or above when every channel is paused
        heading = (
            lang.t("Paused (fix the cause, then /onair resume)") if active else lang.t("Paused")
        )
        builder.field(heading, "\n".join(paused), inline=False)
    if subs:
        builder.field(
            lang.t("Announcements, last 24 hours"), delivery_line(deliveries, lang), inline=False
        )


def _scheduled(
    builder: EmbedBuilder,
    alerts: Sequence[AlertSubscription],
    recap: Recap | None,
    lang: Lang,
) -> None:
    """The alerts and the weekly recap set up in this guild, one line each."""
    scheduled = []
    for a in alerts:
        station, channel = safe(a.station, limit=60), f"<#{a.channel_id}>"
        if a.role_id:
            scheduled.append(
                lang.t(
                    "alerts of `{station}` in {channel}, pinging {role}",
                    station=station,
                    channel=channel,
                    role=f"<@&{a.role_id}>",
                )
            )
        else:
            scheduled.append(
                lang.t("alerts of `{station}` in {channel}", station=station, channel=channel)
            )
    if recap is not None:
        scheduled.append(
            lang.t(
                "weekly recap of `{station}` in {channel}, {day}s at {time}",
                station=safe(recap.station, limit=60),
                channel=f"<#{recap.channel_id}>",
                day=weekday(lang, recap.weekday),
                time=f"{recap.hour:02d}:00",
            )
        )
    if scheduled:
        builder.field(lang.t("Alerts and recap"), "\n".join(scheduled), inline=False)


def events_line(stations: Sequence[str], allowed: bool, lang: Lang = ENGLISH) -> str:
    """``🟢 an event for each live show of `main` ``; without the permission Discord asks for
    (Create Events), red, and the permission named as the admin's Discord client names it."""
    names = ", ".join(f"`{safe(station, limit=60)}`" for station in stations[:10])
    if allowed:
        return lang.t("🟢 an event for each live show of {stations}", stations=names)
    return (
        lang.t("🔴 no event for the live shows of {stations}", stations=names)
        + "\n⚠️ "
        + lang.t(errors.EVENTS_PERMISSION_MISSING)
    )


def song_vote_line(vote: SongVote, next_at: float | None, lang: Lang = ENGLISH) -> str:
    """``🟢 every 30 min in #votes, next <t:…:R>``; paused, red with the reason and what the
    admin does about it (votes resume when /onair vote is run again)."""
    channel = f"<#{vote.channel_id}>"
    if vote.paused_reason:
        return lang.t(
            "🔴 paused in {channel}: {reason}.\nOnAir needs View Channel, Send Messages and "
            "Create Polls there (or choose another channel); then run `/onair vote` again.",
            channel=channel,
            reason=safe(paused_reason(vote.paused_reason, lang), limit=150),
        )
    every = lang.number(int(vote.every // 60))
    if next_at is None:
        return lang.t("🟢 every {every} min in {channel}", every=every, channel=channel)
    return lang.t(
        "🟢 every {every} min in {channel}, next {next}",
        every=every,
        channel=channel,
        next=timestamp(datetime.fromtimestamp(next_at, UTC)),
    )


def voice_line(voice: VoiceStatus, lang: Lang = ENGLISH) -> str:
    """``🔊 playing `main` in #radio`` or ``🟡 rejoining #radio``, with why it waits."""
    station = safe(voice.station, limit=60)
    channel = f"<#{voice.channel_id}>"
    if voice.state == "playing":
        return lang.t("🔊 playing `{station}` in {channel}", station=station, channel=channel)
    line = lang.t(
        "🟡 rejoining {channel} (`{station}`) after a restart or a voice failure",
        station=station,
        channel=channel,
    )
    if voice.ahead > 1:
        line += lang.t(
            ": {count} channels wait for Discord's gateway limit (about 100 voice "
            "joins a minute per shard)",
            count=lang.count(voice.ahead),
        )
    return line


def _delivered(lang: Lang, state: str, n: int) -> str:
    """One delivery state as an admin reads it (English: the same words for one and many)."""
    count = lang.count(n)
    if state == SENT:
        return lang.tn("**{count}** posted", "**{count}** posted", n, count=count)
    if state == PENDING:
        return lang.tn(
            "**{count}** waiting to be posted", "**{count}** waiting to be posted", n, count=count
        )
    if state == DROPPED:
        return lang.tn(
            "**{count}** skipped (too late: the track had ended)",
            "**{count}** skipped (too late: the track had ended)",
            n,
            count=count,
        )
    return lang.tn(
        "**{count}** failed (see Paused)", "**{count}** failed (see Paused)", n, count=count
    )


def delivery_line(deliveries: Mapping[str, int], lang: Lang = ENGLISH) -> str:
    """``12 posted · 1 waiting to be posted``: the states that occurred, posted always."""
    parts = [
        _delivered(lang, state, deliveries.get(state, 0))
        for state in (SENT, PENDING, DROPPED, FAILED)
        if state == SENT or deliveries.get(state, 0)
    ]
    return " · ".join(parts)


def removed(station: StationConfig, lang: Lang = ENGLISH) -> str:
    return lang.t(
        "Removed **{station}** and its announcements.", station=safe(station.name, limit=80)
    )


def settings_saved(saved: GuildSettings, lang: Lang = ENGLISH) -> str:
    station = saved.default_station or lang.t("none")
    text = lang.t(
        "Time zone: **{zone}**; default station: **{station}**.",
        zone=saved.timezone,
        station=station,
    )
    if saved.language:
        name = LANGUAGE_NAMES.get(saved.language, saved.language)
        text += " " + lang.t("Language of posts: **{language}**.", language=name)
    if not saved.song_links:
        text += " " + lang.t('The "Find this song" button is hidden here.')
    return text


# The announcement modes and styles as people read them (the command's values stay English).
MODE_NAMES = {"post": N_("post"), "card": N_("card")}
STYLE_NAMES = {"compact": N_("compact"), "full": N_("full")}


def mode_name(mode: str, lang: Lang = ENGLISH) -> str:
    """``post`` or ``card`` in the reader's language (one word each, wherever shown)."""
    return lang.t(MODE_NAMES[mode]) if mode in MODE_NAMES else mode


def announcing(
    station: StationConfig, channel: str, mode: str, style: str | None, lang: Lang = ENGLISH
) -> str:
    """The reply to /onair announce: which station, where, in which mode and style."""
    shape = effective_style(style)
    return lang.t(
        "New tracks of **{station}** will be announced in {channel} ({mode}, {style}).",
        station=safe(station.name, limit=80),
        channel=channel,
        mode=mode_name(mode, lang),
        style=lang.t(STYLE_NAMES[shape]) if shape in STYLE_NAMES else shape,
    )


def unannounced(channel: str, removed: int, lang: Lang = ENGLISH) -> str:
    if removed:
        return lang.t("Stopped announcements in {channel}.", channel=channel)
    return lang.t("{channel} had no announcements.", channel=channel)


def resumed(channel: str, count: int, lang: Lang = ENGLISH) -> str:
    """The reply to /onair resume (in English: "Resumed 2 announcement(s) in #x.")."""
    return lang.tn(
        "Resumed {count} announcement(s) in {channel}.",
        "Resumed {count} announcement(s) in {channel}.",
        count,
        count=lang.count(count),
        channel=channel,
    )


def alerts_on(
    station: StationConfig,
    channel: str,
    role: str | None,
    offline_after: float,
    lang: Lang = ENGLISH,
) -> str:
    name, after = safe(station.name, limit=80), spoken(offline_after)
    if role:
        return lang.t(
            "Alerts of **{station}** go to {channel}: a live show starting (pinging {role}) "
            "and ending, and the station down for more than {after} and back. Stop them with "
            "`/onair alerts off:True`.",
            station=name,
            channel=channel,
            role=role,
            after=after,
        )
    return lang.t(
        "Alerts of **{station}** go to {channel}: a live show starting and ending, and the "
        "station down for more than {after} and back. Stop them with `/onair alerts off:True`.",
        station=name,
        channel=channel,
        after=after,
    )


def alerts_off(station: StationConfig, removed: int, lang: Lang = ENGLISH) -> str:
    name = safe(station.name, limit=80)
    if not removed:
        return lang.t("No alerts of **{station}** were set up here.", station=name)
    return lang.t("Stopped the alerts of **{station}**.", station=name)


def recap_on(
    station: StationConfig, channel: str, day: int, hour: int, zone: str, lang: Lang = ENGLISH
) -> str:
    return lang.t(
        "Every {day} at {time} ({zone}), {channel} gets the week on **{station}**: most "
        "played, peak listeners, live shows, busiest hour. The time zone is this server's "
        "(`/onair settings timezone:`).",
        day=weekday(lang, day),
        time=f"{hour:02d}:00",
        zone=safe(zone, limit=60),
        channel=channel,
        station=safe(station.name, limit=80),
    )


def recap_off(removed: bool, lang: Lang = ENGLISH) -> str:
    if removed:
        return lang.t("Stopped the weekly recap.")
    return lang.t("No weekly recap was set up here.")


def show_events(station: StationConfig, on: bool, changed: bool, lang: Lang = ENGLISH) -> str:
    """The reply to /onair events: what OnAir will do (or stop doing) for live shows."""
    name = safe(station.name, limit=80)
    if not on:
        if not changed:
            return lang.t("Live shows of **{station}** had no events here.", station=name)
        return lang.t(
            "No more events for live shows of **{station}**. Events already made stay until "
            "their show ends.",
            station=name,
        )
    return lang.t(
        "When **{station}** goes live, I'll make a server event for the show, mark it live "
        "while it runs and end it after (one event per show, at most 10 of mine at a time).",
        station=name,
    )
