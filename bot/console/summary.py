"""Plain-text summaries of a station for the terminal (``onair check`` and the demo)."""

from __future__ import annotations

from datetime import UTC, datetime

from ..programme.timeline import timeline
from ..station import Playlist, StationInfo, Stats
from ..station.source import KIND_NAMES
from ..util.text import duration


def host_line(kind: str) -> str:
    """Which kind of host answered (``--kind``)."""
    return f"Host:        {KIND_NAMES.get(kind, kind)}"


def not_offered_line(label: str, kind: str) -> str:
    """A part of the summary the station's host does not offer, said as its own line."""
    return f"{label + ':':<13}not offered by {KIND_NAMES.get(kind, kind)} servers"


def now_playing_lines(info: StationInfo) -> list[str]:
    play = info.current_play()
    # Neither when the host does not say (Icecast): a DJ may be on.
    badge = (
        "" if info.live is None and info.autodj is None else "LIVE" if info.is_live else "AutoDJ"
    )
    lines = [f"Station:     {info.name or '(unnamed station)'}"]
    if play is None:
        lines.append("Now playing: nothing on air")
    else:
        extra = f" [{play.album}{', ' + play.year if play.year else ''}]" if play.album else ""
        position = info.playback.position if info.playback else None
        lines.append(f"Now playing: {play.display}{extra}")
        if position is None and play.duration is None:
            # No position or length (a Shoutcast DNAS): when it started, if the host said.
            if play.started is not None:
                lines.append(f"             since {_local(play.started.astimezone(UTC))} UTC")
        else:
            times = f"{duration(position)} / {duration(play.duration)}"
            lines.append(f"             {times}  ({badge})" if badge else f"             {times}")
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


def playlist_lines(
    playlist: Playlist, now: datetime, count: int = 3, info: StationInfo | None = None
) -> list[str]:
    """The next ``count`` items in the order they play (as ``/playlist`` orders them), with a
    day line when they cross midnight."""
    zone = next((i.starts_at.tzinfo for i in playlist.items if i.starts_at), None) or UTC
    slots = timeline(playlist, info.current_play() if info else None, now, zone)
    upcoming = [slot for slot in slots if slot.state == "upcoming"][:count]
    lines = [f"Playlist:    {len(playlist.items)} items, next {len(upcoming)}:"]
    day = now.astimezone(zone).date()
    for slot in upcoming:
        if slot.at is not None and slot.at.date() != day:
            day = slot.at.date()
            lines.append(f"  -- {day:%A %Y-%m-%d} --")
        start = slot.at.strftime("%H:%M:%S") if slot.at else "?"
        lines.append(f"  {start}  {slot.item.display} ({duration(slot.item.duration)})")
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


def requests_line(state: str, waiting: int | None) -> str:
    """Whether the station takes song requests (its public request endpoints)."""
    if state == "on" and waiting is None:
        return "Requests:    taken (its queue is shown to a key only)"
    if state == "on":
        return f"Requests:    taken ({waiting} waiting in its queue)"
    if state == "off":
        return "Requests:    off (the station refuses them)"
    return "Requests:    unknown (the request endpoints did not answer usably)"
