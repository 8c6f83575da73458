"""What each command and announcement shows, built with the one :class:`EmbedBuilder`.

Looked at as a listener sees them in a busy dark channel: the station's name and logo appear
once (the footer), facts go on short description lines rather than narrow inline fields (which
wrap mid-phrase), times are Discord timestamps (each reader's own zone), and a track's title
links to a web search for it. The parts they share (name, footer, byline, artwork, buttons,
the "Next" line) are ``station_parts.py``; ``/stats`` is ``stats_embeds.py``.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Literal

import discord

from ..programme.jingles import NO_RULES, SkipRules, is_jingle
from ..programme.timeline import Slot, timeline
from ..station import Play, Playlist, RecentItem, StationInfo
from ..util.i18n import ENGLISH, N_, Lang
from ..util.links import EMBED_URL, safe_url
from ..util.text import (
    duration,
    isolate,
    masked_link,
    progress_bar,
    safe,
    timestamp,
)
from . import station_parts
from .embeds import BRAND, STALE, EmbedBuilder, cache_busted
from .stream_choices import MORE_STREAMS, more_streams

NO_RECENT = N_("No recent plays reported.")
NBSP = "\u00a0"
# A row this much older than the one above it (or than the answer) carries its date.
DATED_AFTER = timedelta(hours=12)
# 12 segments: the bar fits the text column beside the thumbnail on a 400 px phone screen.
BAR_WIDTH = 12
Style = Literal["compact", "full"]
STYLES: tuple[Style, ...] = ("compact", "full")


Rendered = tuple[discord.Embed, discord.ui.View | None]
# Rendering is pure: one snapshot is rendered once however many users ask for it at the same
# time (500 concurrent /nowplaying share one cached StationInfo, and so one embed and view).
_RENDERED: dict[tuple[int, str, bool, SkipRules, str], tuple[StationInfo, Rendered]] = {}


def nowplaying(
    info: StationInfo,
    station_name: str,
    *,
    stale: bool,
    skip: SkipRules = NO_RULES,
    lang: Lang = ENGLISH,
) -> Rendered:
    """``skip``: the guild's skip settings for the station (what counts as a jingle);
    ``lang``: the reader's language (one render per snapshot and language)."""
    key = (id(info), station_name, stale, skip, lang.code)
    hit = _RENDERED.get(key)
    if hit is not None and hit[0] is info:
        return hit[1]
    result = _render_nowplaying(info, station_name, stale=stale, skip=skip, lang=lang)
    if len(_RENDERED) >= 64:
        _RENDERED.clear()
    _RENDERED[key] = (info, result)
    return result


def _render_nowplaying(
    info: StationInfo, station_name: str, *, stale: bool, skip: SkipRules, lang: Lang
) -> Rendered:
    """What is on air. A stale card (the station does not answer) is grey and keeps only what
    was true then: no frozen bar, no "started … ago", no "Next at" that may have passed, and
    no Listen or Web player: the stream comes from the server that stopped answering, and
    nothing OnAir knows says it still plays."""
    play = info.current_play()
    name = station_parts.station_name(info, station_name)
    lines: list[str] = []
    if play is None:
        builder = EmbedBuilder(lang.t(station_parts.NO_TITLE), colour=STALE if stale else BRAND)
        if station_parts.badge(info, lang):
            lines.append(station_parts.badge(info, lang))
    else:
        builder = station_parts.titled(play, STALE if stale else None, lang)
        byline = station_parts.byline(play)
        if byline:
            lines.append(byline)
        playback = info.playback
        length = play.duration if not play.live else None
        position = playback.position if playback and not stale else None
        meta = [part for part in [station_parts.badge(info, lang)] if part]
        genre = station_parts.track_genre(info, play)
        if genre:
            meta.append(isolate(safe(genre, limit=60)))
        if position is not None and length:
            # The bar alone on its line: with the times beside it, it wraps on a phone.
            lines.append(progress_bar(position, length, width=BAR_WIDTH))
            # No-break spaces: "1:54 / 3:33" stays on one line on a phone.
            meta.append(f"`{duration(position)}{NBSP}/{NBSP}{duration(length)}`")
        elif play.started and not stale:
            meta.append(lang.t("started {ago}", ago=timestamp(play.started)))
        lines.append(" · ".join(part for part in meta if part))
    upcoming = None if stale else station_parts.next_line(info, play, skip=skip, lang=lang)
    if upcoming:
        lines.append(upcoming)
    if stale:
        lines.append(
            lang.t(
                "⚠️ The station is not answering; last updated {when}.",
                when=timestamp(info.fetched_at),
            )
        )
    builder.description = "\n".join(lines)
    builder.thumbnail(station_parts.artwork_for(info, play))
    station_parts.footer(builder, info, name, when=None, listeners_now=not stale, lang=lang)
    return builder.build(), None if stale else station_parts.listen_buttons(info.links, lang)


def _dated(rows: list[tuple[datetime | None, str]], reference: datetime) -> list[str]:
    """Rows of "<t:…> text" (newest first), every time on the reader's own clock: Discord
    draws ``<t:…>`` in each reader's zone, which the bot does not know, so it draws no line at a
    midnight (the station's is not the reader's, and a day line in the station's zone landed
    inside the reader's morning). Times alone read as the last hours; a row more than 12 hours
    older than ``reference`` (the first row) or than the row above it carries its date too
    (``<t:…:f>``, still the reader's), so no row's day is left to guess."""
    lines: list[str] = []
    newer = reference
    for moment, text in rows:
        if moment is None:
            lines.append(f"— {text}")
            continue
        style = "f" if newer - moment > DATED_AFTER else "t"
        lines.append(f"{timestamp(moment, style)} {text}")
        newer = moment
    return lines


def recent_tracks(info: StationInfo, skip: SkipRules = NO_RULES) -> list[RecentItem]:
    """The recent plays without jingles (as "Next" and /playlist leave them out): an item
    that played for under 30 s (up to the start of the one after it) or that the guild's
    skip patterns match. The item on air is always kept."""
    kept: list[RecentItem] = []
    newer: datetime | None = None
    for index, item in enumerate(info.recent):
        played = newer - item.started if item.started and newer else None
        texts = (item.title, item.track_title)
        if index == 0 or not is_jingle(played, texts, rules=skip):
            kept.append(item)
        newer = item.started
    return kept


def recent(
    info: StationInfo,
    station_name: str,
    count: int,
    *,
    skip: SkipRules = NO_RULES,
    lang: Lang = ENGLISH,
) -> discord.Embed:
    """The last plays, on the reader's clock (see :func:`_dated`)."""
    name = station_parts.station_name(info, station_name)
    tracks = recent_tracks(info, skip)
    items = tracks[:count]
    rows: list[tuple[datetime | None, str]] = []
    for index, item in enumerate(items):
        artist, title = item.artist_and_title
        shown = f"{artist} - {title}" if artist else (title or item.title)
        text = isolate(safe(shown, limit=180, fallback="?"))
        rows.append((item.started, f"**▶ {text}**" if index == 0 else text))
    builder = EmbedBuilder(
        lang.t("Recently played on {name}", name=name),
        "\n".join(_dated(rows, info.fetched_at)) or lang.t(NO_RECENT),
    )
    builder.thumbnail(cache_busted(items[0].artwork, items[0].artwork_id or "") if items else None)
    footer = lang.tn(
        "{shown} of {count} recent track · ▶ on air now",
        "{shown} of {count} recent tracks · ▶ on air now",
        len(tracks),
        shown=lang.number(len(items)),
    )
    builder.footer(footer)
    return builder.build()


def playlist_rows(
    playlist: Playlist, info: StationInfo | None, now: datetime, zone: tzinfo = UTC
) -> list[Slot]:
    """The playlist in the order it plays (see :mod:`bot.programme.timeline`)."""
    return timeline(playlist, info.current_play() if info else None, now, zone)


_SECTION = {"played": N_("Played"), "playing": N_("On air"), "upcoming": N_("Up next")}


def day_heading(day: date, lang: Lang = ENGLISH) -> str:
    """``── Tuesday 25 November, station time ──``: the date itself (a "Yesterday" is wrong
    once the message is a day old), on the station's clock, written as the language writes it.
    Each rule is bound to the word beside it by a no-break space, so a line that wraps on a
    phone never leaves a "──" alone on the last line."""
    text = lang.t("── {day}, station time ──", day=lang.day(day))
    return text.replace("── ", "──" + NBSP).replace(" ──", NBSP + "──")


def page_span(total: int, page: int, per_page: int, origin: int = 0) -> tuple[int, int, int]:
    """(first row, end, page count) of ``page`` (clamped) when pages break at ``origin`` plus
    a multiple of ``per_page``: with an ``origin`` the first page is the short one, so a row
    can keep its place on its page when rows are added or taken away above it."""
    origin %= per_page
    head = 1 if origin else 0
    pages = max(1, head + -(-(total - origin) // per_page)) if total > origin else 1
    page = max(0, min(page, pages - 1))
    if head and page == 0:
        return 0, origin, pages
    first = origin + (page - head) * per_page
    return first, min(total, first + per_page), pages


def playlist_page(
    rows: list[Slot],
    page: int,
    per_page: int,
    station_name: str,
    zone: tzinfo,
    today: date | None = None,
    *,
    hidden: int = 0,
    origin: int = 0,
    lang: Lang = ENGLISH,
) -> discord.Embed:
    """One page: section headings (Played, On air, Up next) and a day line at each midnight,
    so no legend is needed and no list jumps backwards. ``hidden``: jingles left out;
    ``origin``: where pages break (:func:`page_span`)."""
    first, end, pages = page_span(len(rows), page, per_page, origin)
    page = max(0, min(page, pages - 1))
    chunk = rows[first:end]
    if today is None:
        today = datetime.now(zone).date()
    lines: list[str] = []
    previous = rows[first - 1] if first else None
    for row in chunk:
        item = row.item
        local = row.at.astimezone(zone) if row.at else None
        day = local.date() if local else None
        before = previous.at.astimezone(zone).date() if previous and previous.at else None
        top = row is chunk[0]
        # A day line at each midnight, and at the top of a page that is not about today.
        changed = day != before if not top else day != today or before not in (None, day)
        if day is not None and changed:
            lines.append(f"-# {day_heading(day, lang)}")
        if top or previous is None or previous.state != row.state:
            lines.append(f"**{lang.t(_SECTION[row.state])}**")
        start = timestamp(row.at, "t") if row.at else "`--:--`"
        text = isolate(safe(item.display, limit=200, fallback=lang.t("(untitled)")))
        line = f"{start} {text} ({duration(item.duration)})"
        if row.state == "playing":
            line = f"▶ **{line}**"
        elif row.state == "played":
            line = f"-# {line}"
        lines.append(line)
        previous = row
    builder = EmbedBuilder(
        lang.t("Playlist of {name}", name=station_parts.station_name(None, station_name)),
        "\n".join(lines) or lang.t("The playlist is empty."),
    )
    footer = lang.tn(
        "Page {page}/{pages} · {count} item",
        "Page {page}/{pages} · {count} items",
        len(rows),
        page=page + 1,
        pages=pages,
        count=lang.count(len(rows)),
    )
    if hidden:
        footer += " · " + lang.tn(
            "{count} jingle hidden", "{count} jingles hidden", hidden, count=lang.count(hidden)
        )
    builder.footer(footer)
    return builder.build()


def listen_embed(
    info: StationInfo, station_name: str, lang: Lang = ENGLISH
) -> tuple[str | None, discord.Embed | None, discord.ui.View | None]:
    """(content, embed, view): two buttons (Listen, Web player); the other links go in the
    "More streams" menu that ``bot.ui.streams`` adds (:func:`more_streams`). An embed only when
    it has something to say (links past the menu's 25 options, or none at all); else one line
    of text, not a near-empty box."""
    links = info.links
    name = station_parts.station_name(info, station_name)
    view = station_parts.listen_buttons(links, lang)
    choices = more_streams(links, lang)
    lines = [
        link
        for c in choices[MORE_STREAMS:]
        if (link := masked_link(safe(c.label, limit=100), c.url))
    ]
    if view is None and not choices:
        lines.append(lang.t("This station publishes no tune-in links."))
    if not lines:
        return lang.t("Tune in to **{name}**:", name=name), None, view
    builder = EmbedBuilder(lang.t("Tune in to {name}", name=name), "\n".join(lines))
    builder.thumbnail(links.station_logo)
    return None, builder.build(), view


def station_embed(info: StationInfo, station_name: str, lang: Lang = ENGLISH) -> discord.Embed:
    name = station_parts.station_name(info, station_name)
    lines = []
    description = safe(info.description, limit=2000)
    if description:
        lines.append(description)
    meta = [safe(info.genre, limit=200), station_parts.badge(info, lang)]
    if info.listener_count is not None:
        count = info.listener_count
        meta.append(lang.tn("{count} listening", "{count} listening", count))
    lines.append(" · ".join(part for part in meta if part))
    website = masked_link(lang.t("Website"), info.url)
    player = masked_link(lang.t("Web player"), info.links.page)
    links = " · ".join(link for link in (website, player) if link)
    if links:
        lines.append(links)
    builder = EmbedBuilder(
        name, "\n".join(lines), url=safe_url(info.url, EMBED_URL) or info.links.page
    )
    builder.thumbnail(info.links.station_logo)
    return builder.build()


def effective_style(style: str | None) -> Style:
    """The admin's choice, else compact for both modes: the full card's big artwork made it
    the tallest message in a channel (495 px at desktop width) for one track's facts."""
    return "full" if style == "full" else "compact"


def announcement(
    info: StationInfo,
    play: Play,
    station_name: str,
    *,
    style: Style = "compact",
    skip: SkipRules = NO_RULES,
    card: bool = False,
    requested_by: tuple[str, ...] = (),
    voted_in: str | None = None,
    lang: Lang = ENGLISH,
) -> tuple[discord.Embed, discord.ui.View | None]:
    """The track announcement posted by the announcer (and shown by `/onair preview`).

    One fact layout for every mode and style: title, one artist/album line, one small line of
    length, genre and what plays next. ``compact``: the artwork as a thumbnail beside it (a
    small message; a small card); ``full``: the artwork big below it. The station and its
    listeners in the footer, one row of buttons. ``card``: the one message kept up to date, so
    the footer also says when the track started; a post's own time says that already.
    """
    name = station_parts.station_name(info, station_name)
    builder = station_parts.titled(play, lang=lang)
    meta: list[str] = []
    if play.live:
        meta.append(lang.t(station_parts.LIVE_BADGE))
    elif play.duration:
        meta.append(duration(play.duration))
    genre = station_parts.track_genre(info, play)
    if genre:
        meta.append(isolate(safe(genre, limit=60)))
    upcoming = station_parts.next_line(
        info, play, limit=120 if style == "compact" else 300, skip=skip, lang=lang
    )
    if upcoming:
        meta.append(upcoming)
    lines = [station_parts.byline(play)]
    if meta:
        lines.append("-# " + " · ".join(meta))
    if requested_by:
        lines.append(station_parts.requested_line(requested_by, lang))
    if voted_in is not None:
        lines.append(station_parts.voted_line(voted_in, lang))
    if style == "compact":
        builder.thumbnail(station_parts.artwork_for(info, play))
    else:
        builder.image(station_parts.artwork_for(info, play))
    builder.description = "\n".join(line for line in lines if line) or None
    station_parts.footer(builder, info, name, when=play.started if card else None, lang=lang)
    return builder.build(), station_parts.listen_buttons(info.links, lang)


def moment_line(moment: datetime, lang: Lang = ENGLISH) -> str:
    """/history's asked moment, as a Discord timestamp (each reader's own zone)."""
    return lang.t("At {when}:", when=timestamp(moment, "f"))


def history_embed(
    rows: list[tuple[datetime, str, str | None]],
    heading: str,
    reference: datetime,
    *,
    since: datetime | None = None,
    mark_first: bool = False,
    lead: tuple[str, ...] = (),
    lang: Lang = ENGLISH,
) -> discord.Embed:
    """History rows (newest first) on the reader's clock (:func:`_dated`; ``reference``: the
    asked moment, else now); ``mark_first``: the first row is the one on air at the asked
    moment. Says from when history is available."""
    entries: list[tuple[datetime | None, str]] = []
    for index, (started, title, artist) in enumerate(rows):
        text = isolate(safe(f"{artist} - {title}" if artist else title, limit=200, fallback="?"))
        entries.append((started, f"**▶ {text}**" if mark_first and index == 0 else text))
    lines = [*lead] if lead else []
    lines += _dated(entries, reference)
    if not entries:
        lines.append(lang.t("Nothing found in the play history."))
    if since is not None:
        lines.append("-# " + lang.t("History since {when}", when=timestamp(since, "f")))
    else:
        lines.append(
            "-# " + lang.t("No plays recorded yet: history starts with the first play OnAir sees.")
        )
    builder = EmbedBuilder(heading, "\n".join(lines))
    builder.footer(lang.t("Times in your time zone"))
    return builder.build()
