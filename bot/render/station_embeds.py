"""What each command and announcement shows, built with the one :class:`EmbedBuilder`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, tzinfo

import discord

from ..station import Links, Play, Playlist, PlaylistItem, StationInfo, Stats
from .embeds import LIVE, EmbedBuilder, cache_busted, link_view
from .text import duration, flag, progress_bar, safe, timestamp

NO_TITLE = "Nothing on air right now"


def artwork_for(info: StationInfo, play: Play | None) -> str | None:
    """The play's artwork (https, cache-busted per play), else the station logo."""
    key = play.claim_key if play else info.fetched_at.isoformat()
    for candidate in (info.links.artwork, info.recent[0].artwork if info.recent else None):
        busted = cache_busted(candidate, key)
        if busted:
            return busted
    logo = info.links.station_logo
    return logo if logo and logo.lower().startswith("https://") else None


def listen_buttons(links: Links, *, full: bool = True) -> discord.ui.View | None:
    buttons: list[tuple[str, str | None]] = [("Listen", links.listen), ("Web player", links.page)]
    if full:
        buttons += [("M3U", links.m3u_best), ("PLS", links.pls)]
    return link_view(buttons)


def _badge(info: StationInfo) -> str:
    return "🔴 LIVE" if info.is_live else "🎵 AutoDJ"


def _station_name(info: StationInfo, fallback: str) -> str:
    return safe(info.name, limit=200) or safe(fallback, limit=200)


def _play_lines(play: Play) -> tuple[str, str]:
    title = safe(play.title, limit=240, fallback=NO_TITLE)
    details = []
    if play.artist:
        details.append(f"by **{safe(play.artist, limit=300)}**")
    if play.album:
        year = f" ({safe(play.year, limit=8)})" if play.year else ""
        details.append(f"from *{safe(play.album, limit=300)}*{year}")
    return title, "\n".join(details)


Rendered = tuple[discord.Embed, discord.ui.View | None]
# Rendering is pure: one snapshot is rendered once however many users ask for it at the same
# time (500 concurrent /nowplaying share one cached StationInfo, and so one embed and view).
_RENDERED: dict[tuple[int, str, bool], tuple[StationInfo, Rendered]] = {}


def nowplaying(info: StationInfo, station_name: str, *, stale: bool) -> Rendered:
    key = (id(info), station_name, stale)
    hit = _RENDERED.get(key)
    if hit is not None and hit[0] is info:
        return hit[1]
    result = _render_nowplaying(info, station_name, stale=stale)
    if len(_RENDERED) >= 64:
        _RENDERED.clear()
    _RENDERED[key] = (info, result)
    return result


def _render_nowplaying(info: StationInfo, station_name: str, *, stale: bool) -> Rendered:
    play = info.current_play()
    name = _station_name(info, station_name)
    if play is None:
        builder = EmbedBuilder(NO_TITLE, f"{_badge(info)} on {name}")
    else:
        title, details = _play_lines(play)
        builder = EmbedBuilder(
            title, details or None, colour=LIVE if play.live else discord.Colour(0xE0245E)
        )
        playback = info.playback
        length = play.duration if not play.live else None
        if playback and playback.position is not None and length:
            bar = progress_bar(playback.position, length)
            builder.field(
                "Progress",
                f"{bar}\n{duration(playback.position)} / {duration(length)}",
                inline=False,
            )
        elif play.live:
            builder.field("Progress", "Live show, length unknown", inline=False)
        if play.started:
            builder.field("Started", f"{timestamp(play.started, 't')} ({timestamp(play.started)})")
    builder.field("On air", _badge(info))
    if info.listener_count is not None:
        builder.field("Listeners", f"{info.listener_count:,}")
    if info.next_display:
        builder.field("Up next", safe(info.next_display, limit=500), inline=False)
    if stale:
        builder.field(
            "Note", f"Station not answering; as of {timestamp(info.fetched_at)}", inline=False
        )
    builder.author(name, icon_url=info.links.station_logo, url=info.links.page or info.url)
    builder.thumbnail(artwork_for(info, play))
    builder.footer(name, icon_url=info.links.station_logo)
    return builder.build(), listen_buttons(info.links)


def recent(info: StationInfo, station_name: str, count: int) -> discord.Embed:
    name = _station_name(info, station_name)
    items = info.recent[:count]
    lines = []
    for index, item in enumerate(items):
        artist, title = item.artist_and_title
        text = safe(
            f"{artist} - {title}" if artist else (title or item.title), limit=180, fallback="?"
        )
        when = timestamp(item.started, "t") if item.started else "—"
        marker = "▶ " if index == 0 else ""
        lines.append(f"{when} {marker}{text}")
    builder = EmbedBuilder(
        f"Recently played on {name}", "\n".join(lines) or "No recent plays reported."
    )
    builder.thumbnail(cache_busted(items[0].artwork, items[0].artwork_id or "") if items else None)
    builder.footer(
        f"{len(items)} of {len(info.recent)} recent plays", icon_url=info.links.station_logo
    )
    return builder.build()


@dataclass(frozen=True, slots=True)
class PlaylistRow:
    item: PlaylistItem
    state: str  # played | playing | upcoming


def playlist_rows(playlist: Playlist, info: StationInfo | None, now: datetime) -> list[PlaylistRow]:
    """Mark each item played, playing or upcoming (kept in playlist order)."""
    current = info.current_play() if info else None
    playing_index: int | None = None
    if current is not None:
        for index, item in enumerate(playlist.items):
            if (
                not item.played
                and item.title
                and current.title
                and item.title.casefold() == current.title.casefold()
            ):
                playing_index = index
                break
    if playing_index is None:
        for index, item in enumerate(playlist.items):
            if (
                item.starts_at
                and item.duration
                and item.starts_at <= now < item.starts_at + item.duration
            ):
                playing_index = index
                break
    rows = []
    for index, item in enumerate(playlist.items):
        if index == playing_index:
            state = "playing"
        elif item.played:
            state = "played"
        else:
            state = "upcoming"
        rows.append(PlaylistRow(item, state))
    return rows


_STATE_MARK = {"played": "✓", "playing": "▶", "upcoming": "·"}


def playlist_page(
    rows: list[PlaylistRow], page: int, per_page: int, station_name: str, zone: tzinfo
) -> discord.Embed:
    pages = max(1, -(-len(rows) // per_page))
    page = max(0, min(page, pages - 1))
    chunk = rows[page * per_page : (page + 1) * per_page]
    lines = []
    for row in chunk:
        item = row.item
        start = item.starts_at.astimezone(zone).strftime("%H:%M") if item.starts_at else "--:--"
        text = safe(item.display, limit=200, fallback="(untitled)")
        line = f"`{start}` {_STATE_MARK[row.state]} {text} ({duration(item.duration)})"
        lines.append(f"**{line}**" if row.state == "playing" else line)
    builder = EmbedBuilder(
        f"Playlist of {safe(station_name, limit=200)}",
        "\n".join(lines) or "The playlist is empty.",
    )
    played = sum(1 for r in rows if r.state == "played")
    builder.footer(
        f"Page {page + 1}/{pages} · {len(rows)} items, {played} played"
        " · ✓ played ▶ playing · upcoming"
        f" · times in {getattr(zone, 'key', str(zone))}"
    )
    return builder.build()


def stats_embed(
    stats: Stats, first: date, last: date, station_name: str, *, chart_name: str | None
) -> discord.Embed:
    days = stats.days_between(first, last)
    sessions = (
        stats.total_sessions if stats.total_sessions is not None else sum(d.sessions for d in days)
    )
    unique = stats.total_unique if stats.total_unique is not None else sum(d.unique for d in days)
    span = "" if first == last else f" – {last.isoformat()}"
    builder = EmbedBuilder(
        f"Listeners of {safe(station_name, limit=200)}", f"{first.isoformat()}{span}"
    )
    builder.field("Sessions", f"{sessions:,}")
    builder.field("Unique listeners", f"{unique:,}")
    if stats.total_tlh is not None:
        builder.field("Listening hours", f"{stats.total_tlh:,} h")
    peak = max(days, key=lambda d: d.sessions, default=None)
    if peak is not None and peak.sessions > 0:
        builder.field("Peak day", f"{peak.day.isoformat()} ({peak.sessions:,} sessions)")
    top = sorted(stats.countries, key=lambda c: -c.value)[:10]
    total = sum(c.value for c in stats.countries) or 1
    if top:
        lines = [
            f"{flag(c.iso)} {safe(c.country or (c.iso or '?').upper(), limit=60)}: "
            f"{c.value:,} ({c.value / total:.0%})"
            for c in top
        ]
        builder.field("Top countries", "\n".join(lines), inline=False)
    if chart_name:
        builder.image(f"attachment://{chart_name}")
    return builder.build()


def listen_embed(
    info: StationInfo, station_name: str
) -> tuple[discord.Embed, discord.ui.View | None]:
    links = info.links
    name = _station_name(info, station_name)
    builder = EmbedBuilder(f"Tune in to {name}")
    entries: list[tuple[str, str | None]] = [
        ("Listen (best)", links.listen),
        ("Web player", links.page),
        ("HTTPS stream", links.port443 or links.ssl),
        ("HTTP stream", links.port80 or links.http),
        ("M3U", links.m3u_best),
        ("PLS", links.pls),
    ]
    for mount in links.mounts:
        label = safe(mount.name, limit=40, fallback="mount")
        entries.append((f"Mount {label}", mount.ssl or mount.http))
        entries.append((f"Mount {label} M3U", mount.m3u_ssl or mount.m3u))
    shown: list[tuple[str, str | None]] = []
    for label, url in entries:
        if (
            url
            and url.lower().startswith(("http://", "https://"))
            and all(url != u for _, u in shown)
        ):
            builder.field(label, url[:1000])
            shown.append((label, url))
    if not shown:
        builder.description = "This station publishes no tune-in links."
    builder.thumbnail(links.station_logo)
    return builder.build(), link_view(shown)


def station_embed(info: StationInfo, station_name: str) -> discord.Embed:
    name = _station_name(info, station_name)
    builder = EmbedBuilder(
        name, safe(info.description, limit=2000) or None, url=info.url or info.links.page
    )
    builder.field("Genre", safe(info.genre, limit=200))
    builder.field(
        "Website", info.url if info.url and info.url.startswith(("http://", "https://")) else None
    )
    builder.field("On air", _badge(info))
    if info.listener_count is not None:
        builder.field("Listeners", f"{info.listener_count:,}")
    builder.thumbnail(info.links.station_logo)
    return builder.build()


def announcement(
    info: StationInfo, play: Play, station_name: str
) -> tuple[discord.Embed, discord.ui.View | None]:
    """The track announcement posted by the announcer (and shown by `/onair preview`)."""
    title, details = _play_lines(play)
    name = _station_name(info, station_name)
    builder = EmbedBuilder(
        title, details or None, colour=LIVE if play.live else discord.Colour(0xE0245E)
    )
    builder.author(
        f"{'🔴 LIVE on' if play.live else 'Now on'} {name}",
        icon_url=info.links.station_logo,
        url=info.links.page,
    )
    if play.duration and not play.live:
        builder.field("Length", duration(play.duration))
    if play.started:
        builder.field("Started", timestamp(play.started, "t"))
    if info.listener_count is not None:
        builder.field("Listeners", f"{info.listener_count:,}")
    if info.next_display:
        builder.field("Up next", safe(info.next_display, limit=500), inline=False)
    builder.image(artwork_for(info, play))
    builder.footer(name, icon_url=info.links.station_logo)
    return builder.build(), listen_buttons(info.links, full=False)


def history_embed(
    rows: list[tuple[datetime, str, str | None]], heading: str, zone: tzinfo
) -> discord.Embed:
    lines = []
    for started, title, artist in rows:
        text = safe(f"{artist} - {title}" if artist else title, limit=200, fallback="?")
        lines.append(f"{timestamp(started, 'f')} {text}")
    builder = EmbedBuilder(heading, "\n".join(lines) or "Nothing found in the play history.")
    builder.footer(
        f"Times shown in your own time zone · station zone {getattr(zone, 'key', str(zone))}"
    )
    return builder.build()
