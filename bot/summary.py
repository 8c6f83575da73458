"""Plain-text summaries of a station for the terminal (``onair check`` and the demo)."""

from __future__ import annotations

from datetime import datetime

from .render.text import duration
from .station import Playlist, StationInfo, Stats


def now_playing_lines(info: StationInfo) -> list[str]:
    play = info.current_play()
    badge = "LIVE" if info.is_live else "AutoDJ"
    lines = [f"Station:     {info.name or '(unnamed station)'}"]
    if play is None:
        lines.append("Now playing: nothing on air")
    else:
        extra = f" [{play.album}{', ' + play.year if play.year else ''}]" if play.album else ""
        position = info.playback.position if info.playback else None
        lines.append(f"Now playing: {play.display}{extra}")
        lines.append(f"             {duration(position)} / {duration(play.duration)}  ({badge})")
    listeners = info.listener_count
    lines.append(f"Listeners:   {listeners if listeners is not None else '?'}")
    lines.append(f"Next:        {info.next_display or '-'}")
    return lines


def _local(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S") if moment else "?"


def recent_lines(info: StationInfo, count: int = 5) -> list[str]:
    lines = [f"Recent ({min(count, len(info.recent))} of {len(info.recent)}):"]
    for item in info.recent[:count]:
        artist, title = item.artist_and_title
        name = f"{artist} - {title}" if artist else (title or item.title or "?")
        lines.append(f"  {_local(item.started)}  {name}")
    return lines


def playlist_lines(playlist: Playlist, now: datetime, count: int = 3) -> list[str]:
    upcoming = sorted(
        (i for i in playlist.items if not i.played and i.starts_at and i.starts_at > now),
        key=lambda i: i.starts_at or now,
    )
    lines = [f"Playlist:    {len(playlist.items)} items, next {min(count, len(upcoming))}:"]
    for item in upcoming[:count]:
        start = item.starts_at.strftime("%H:%M:%S") if item.starts_at else "?"
        lines.append(f"  {start}  {item.display} ({duration(item.duration)})")
    return lines


def stats_lines(stats: Stats, first_day: str, last_day: str) -> list[str]:
    # `tlh` is read as Total Listening Hours (the spec leaves it open; the name says hours).
    hours = f"{stats.total_tlh} h" if stats.total_tlh is not None else "?"
    return [
        f"Stats {first_day} .. {last_day}:",
        f"  sessions {stats.total_sessions if stats.total_sessions is not None else '?'}, "
        f"unique listeners {stats.total_unique if stats.total_unique is not None else '?'}, "
        f"listening time {hours}",
    ]
