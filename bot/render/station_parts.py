"""The parts every station embed shares: the station's one name, the footer, the title linked
to a search, the byline, artwork, the listen buttons and the "Next" line."""

from __future__ import annotations

from datetime import datetime

import discord

from ..programme.jingles import NO_RULES, SkipRules, is_jingle
from ..station import Links, Play, StationInfo
from ..station.play import normalise_title
from ..util.i18n import ENGLISH, N_, Lang
from ..util.links import EMBED_URL, safe_url
from ..util.text import isolate, safe, search_url, timestamp
from .embeds import BRAND, LIVE, EmbedBuilder, cache_busted, link_view

NO_TITLE = N_("Nothing on air right now")


def artwork_for(info: StationInfo, play: Play | None) -> str | None:
    """The play's artwork (https, cache-busted per play), else the station logo."""
    key = play.claim_key if play else info.fetched_at.isoformat()
    for candidate in (info.links.artwork, info.recent[0].artwork if info.recent else None):
        busted = cache_busted(candidate, key)
        if busted:
            return busted
    logo = info.links.station_logo
    return safe_url(logo, EMBED_URL, https_only=True)


WEB_PLAYER = N_("Web player")
LISTEN = N_("Listen")
LIVE_BADGE = N_("🔴 LIVE")


def listen_buttons(links: Links, lang: Lang = ENGLISH) -> discord.ui.View | None:
    """Listen and Web player: every message's two link buttons (the rest is in /listen)."""
    return link_view([(lang.t(LISTEN), links.listen), (lang.t(WEB_PLAYER), links.page)])


def badge(info: StationInfo, lang: Lang = ENGLISH) -> str:
    """Live or AutoDJ, as the station says; "" for a host that says neither (a Shoutcast DNAS
    knows only a stream, not what feeds it)."""
    if info.live is None and info.autodj is None:
        return ""
    return lang.t(LIVE_BADGE) if info.is_live else "🎵 AutoDJ"


def station_name(info: StationInfo | None, configured: str) -> str:
    """The one name of a station in every message: the name it was configured or added with
    (what the ``station`` option lists), the station's own ``station_name`` only when that is
    empty. Isolated, so a right-to-left name does not reorder the line around it."""
    own = info.name if info is not None else None
    return isolate(safe(configured, limit=200) or safe(own, limit=200))


def footer(
    builder: EmbedBuilder,
    info: StationInfo,
    name: str,
    *,
    when: datetime | None,
    listeners_now: bool = True,
    lang: Lang = ENGLISH,
) -> None:
    """The station once (name and logo), with its listeners (``listeners_now``: the count is
    current; a stale card leaves it out): the footer's useful line."""
    listeners = info.listener_count if listeners_now else None
    text = (
        name
        if listeners is None
        else lang.tn(
            "{name} · {count} listening", "{name} · {count} listening", listeners, name=name
        )
    )
    builder.footer(text, icon_url=info.links.station_logo, when=when)


def track_genre(info: StationInfo, play: Play) -> str | None:
    """The genre of the play on air, when the station's track info describes that play."""
    track = info.current
    if play.live or track is None or not track.genre or not track.title:
        return None
    if normalise_title(track.title) != normalise_title(play.title):
        return None
    return track.genre


def byline(play: Play) -> str:
    """Artist · album (year), on one line."""
    year = safe(play.year, limit=8)
    artist = f"**{isolate(safe(play.artist, limit=300))}**" if play.artist else ""
    album = f"*{isolate(safe(play.album, limit=300))}*" if play.album else ""
    if album and year:
        album += f" ({year})"
    elif year:
        album = f"({year})"
    return " · ".join(part for part in (artist, album) if part)


def next_at(info: StationInfo, play: Play | None) -> datetime | None:
    """When the next item starts: the end of the play on air, when its length is known (from
    the start the station reported, so it agrees with the start shown; else from the position)."""
    if play is None or play.live or not play.duration:
        return None
    playback = info.playback
    if play.started and play.started_exact:
        return play.started + play.duration
    if playback and playback.position is not None:
        return info.fetched_at + play.duration - playback.position
    return play.started + play.duration if play.started else None


def next_is_jingle(info: StationInfo, skip: SkipRules = NO_RULES) -> bool:
    """Whether the item the station names as next is a jingle (:mod:`bot.programme.jingles`)."""
    track = info.next_track
    texts = (info.next_display, track.file_name if track else None)
    return is_jingle(track.duration if track else None, texts, rules=skip)


def next_line(
    info: StationInfo,
    play: Play | None,
    *,
    limit: int = 200,
    skip: SkipRules = NO_RULES,
    lang: Lang = ENGLISH,
) -> str | None:
    """ "Next at 22:15: …" (no-break spaces), left out when what follows is a jingle
    ("Next: Station ID" tells a listener nothing)."""
    if not info.next_display or next_is_jingle(info, skip):
        return None
    at = next_at(info, play)
    title = isolate(safe(info.next_display, limit=limit))
    if at is None:
        return lang.t("Next: {title}", title=title)
    # No-break spaces: "Next at 23:21:" stays together on a phone, the title wraps after it.
    return lang.t("Next\u00a0at\u00a0{time}: {title}", time=timestamp(at, "t"), title=title)


def titled(play: Play, colour: discord.Colour | None = None, lang: Lang = ENGLISH) -> EmbedBuilder:
    title = safe(play.title, limit=240, fallback=lang.t(NO_TITLE))
    colour = colour or (LIVE if play.live else BRAND)
    return EmbedBuilder(title, url=search_url(play.artist, play.title), colour=colour)


def requested_line(names: tuple[str, ...], lang: Lang = ENGLISH) -> str:
    """Who requested the play: display names are listener text (escaped, no mention can form,
    each isolated so a right-to-left name does not turn the line); at most five named."""
    fallback = lang.t("a listener")
    shown = [f"**{isolate(safe(name, limit=40, fallback=fallback))}**" for name in names[:5]]
    listed = ", ".join(shown)
    if len(names) > 5:
        return lang.tn(
            "🙋 Requested by {names} and {count} more",
            "🙋 Requested by {names} and {count} more",
            len(names) - 5,
            names=listed,
        )
    return lang.t("🙋 Requested by {names}", names=listed)
