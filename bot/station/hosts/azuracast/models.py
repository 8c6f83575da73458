"""AzuraCast's answers as OnAir's station model.

The shapes are AzuraCast's own (``backend/src/Entity/Api/NowPlaying/*.php``: ``Api_NowPlaying``
and its parts; ``Entity/Api/StationSchedule.php``; ``Entity/Api/StationRequest.php``; the
Centrifugo push of ``Service/Centrifugo.php`` as ``frontend/functions/useNowPlaying.ts`` reads
it). Every member is read through the coercions, so a hostile or missing value is an unknown,
never a crash; text is clipped to :data:`MAX_TEXT`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ... import coerce as c
from ...info import Links, Mount, Playback, RecentItem, StationInfo, Track
from ...parsing import require_object
from ...schedule import MAX_SHOWS, PLAYLIST, ScheduledShow

MAX_TEXT = 500  # characters of a station's text kept (titles, names, descriptions)
MAX_URL = 2048  # characters of a URL kept (a longer one is left out)
MAX_HISTORY = 50  # song_history entries read (AzuraCast shows 5 by default)
MAX_MOUNTS = 20
MAX_SCHEDULE = MAX_SHOWS
# The placeholder AzuraCast puts on air while a station is offline (``Entity/Song.php``).
OFFLINE_SONG_ID = "5a6a865199cf5df73b1417326d2ff24f"
_EPOCH_FLOOR = 946_684_800  # 2000-01-01: an earlier played_at is AzuraCast's 0 ("unknown")


def text(value: Any, limit: int = MAX_TEXT) -> str | None:
    """Station text, trimmed and clipped; None for missing markers."""
    found = c.text(value) if isinstance(value, str) else None
    if found is None:
        return None
    return found if len(found) <= limit else found[: limit - 1] + "…"


def url(value: Any) -> str | None:
    """An absolute http(s) URL as AzuraCast resolves them; anything else left out."""
    found = c.text(value) if isinstance(value, str) else None
    if not found or len(found) > MAX_URL or not found.lower().startswith(("http://", "https://")):
        return None
    return found


def moment(value: Any) -> datetime | None:
    """A UNIX timestamp (AzuraCast's ``played_at``, ``cued_at``, ``*_timestamp``), as UTC."""
    seconds = c.integer(value)
    if seconds is None or not _EPOCH_FLOOR <= seconds <= 2**33:
        return None
    return datetime.fromtimestamp(seconds, UTC)


def seconds(value: Any) -> timedelta | None:
    """A duration in seconds (int or float); 0 is AzuraCast's "unknown" (a live show)."""
    amount = c.number(value)
    if amount is None or not 0 < amount <= c.MAX_DURATION.total_seconds():
        return None
    return timedelta(seconds=amount)


@dataclass(frozen=True, slots=True)
class Song:
    """``Api_Song``: ``text`` is usually ``Artist - Title``."""

    id: str | None = None
    text: str | None = None
    artist: str | None = None
    title: str | None = None
    album: str | None = None
    genre: str | None = None
    isrc: str | None = None
    art: str | None = None

    @property
    def display(self) -> str | None:
        """``Artist - Title`` as OnAir shows a play (the request credit matches on it too)."""
        if self.title:
            return f"{self.artist} - {self.title}" if self.artist else self.title
        return self.text

    @property
    def is_empty(self) -> bool:
        return not (self.text or self.title)

    @classmethod
    def parse(cls, value: Any) -> Song:
        raw = c.mapping(value)
        return cls(
            id=text(raw.get("id"), 64),
            text=text(raw.get("text")),
            artist=text(raw.get("artist")),
            title=text(raw.get("title")),
            album=text(raw.get("album")),
            genre=text(raw.get("genre"), 100),
            isrc=text(raw.get("isrc"), 32),
            art=url(raw.get("art")),
        )

    def track(
        self, duration: timedelta | None, played_at: datetime | None, listeners: int | None
    ) -> Track | None:
        if self.is_empty:
            return None
        return Track(
            artist=self.artist,
            title=self.title or self.text,
            album=self.album,
            genre=self.genre,
            duration=duration,
            last_played=played_at,
            cast_title=self.display,
            listeners=listeners,
        )

    def recent(self, started: datetime | None) -> RecentItem | None:
        if self.is_empty:
            return None
        return RecentItem(
            title=self.display,
            track_title=self.title,
            track_artist=self.artist,
            started=started,
            artwork=self.art,
        )


def _mount(value: Any) -> Mount | None:
    """``Api_NowPlaying_StationMount``/``StationRemote``: its URL is https or http."""
    raw = c.mapping(value)
    link = url(raw.get("url"))
    if link is None:
        return None
    secure = link.lower().startswith("https://")
    name = text(raw.get("name"), 100)
    bitrate = c.integer(raw.get("bitrate"))
    fmt = text(raw.get("format"), 16)
    if bitrate and fmt:
        name = f"{name or ''} ({bitrate} kbps {fmt.upper()})".strip()
    return Mount(name=name, http=None if secure else link, ssl=link if secure else None)


def links(station: Mapping[str, Any], art: str | None, next_art: str | None) -> Links:
    """The default mount (``listen_url``) first, then the other mounts and the remote relays;
    ``Links.listen`` prefers https among them."""
    listen = url(station.get("listen_url"))
    raw_mounts = c.as_list(station.get("mounts"))[:MAX_MOUNTS]
    raw_mounts.sort(key=lambda m: not c.boolean(c.mapping(m).get("is_default")))
    mounts = [m for m in map(_mount, raw_mounts) if m]
    mounts += [m for m in map(_mount, c.as_list(station.get("remotes"))[:MAX_MOUNTS]) if m]
    secure = bool(listen) and str(listen).lower().startswith("https://")
    return Links(
        m3u=url(station.get("playlist_m3u_url")),
        pls_uri=url(station.get("playlist_pls_url")),
        http=None if secure else listen,
        ssl=listen if secure else None,
        page=url(station.get("public_player_url")) or url(station.get("url")),
        artwork=art,
        artwork_next=next_art,
        mounts=tuple(mounts),
    )


def is_offline(raw: Mapping[str, Any]) -> bool:
    """``is_online`` false, or the placeholder AzuraCast shows while the station is down
    (``sh_id`` 0 and the offline song): nothing is on air."""
    if c.boolean(raw.get("is_online")) is False:
        live = c.mapping(raw.get("live"))
        return not c.boolean(live.get("is_live"))
    current = c.mapping(raw.get("now_playing"))
    song = c.mapping(current.get("song"))
    return not current or song.get("id") == OFFLINE_SONG_ID


def now_playing(payload: Any, fetched_at: datetime) -> StationInfo:
    """``Api_NowPlaying`` as a ``StationInfo``: the play on air heads ``recent`` with its exact
    start (``played_at``), so each play is announced once; ``song_history`` follows."""
    raw = require_object(payload, "now playing")
    station = c.mapping(raw.get("station"))
    live = c.mapping(raw.get("live"))
    is_live = bool(c.boolean(live.get("is_live")))
    streamer = text(live.get("streamer_name"), 100)
    listeners_raw = c.mapping(raw.get("listeners"))
    listeners = c.integer(listeners_raw.get("current"))
    if listeners is None:
        listeners = c.integer(listeners_raw.get("total"))
    offline = is_offline(raw)

    current_raw = c.mapping(raw.get("now_playing"))
    song = Song.parse(current_raw.get("song"))
    played_at = moment(current_raw.get("played_at"))
    duration = seconds(current_raw.get("duration"))
    elapsed = c.number(current_raw.get("elapsed"))
    on_air: str | None = None
    current: Track | None = None
    head: RecentItem | None = None
    playback: Playback | None = None
    art: str | None = None
    if not offline:
        on_air = song.display or (streamer if is_live else None)
        current = song.track(duration, played_at, listeners)
        head = song.recent(played_at) or (
            RecentItem(title=on_air, track_title=on_air, started=played_at) if on_air else None
        )
        dj_art = url(live.get("art")) if is_live else None
        art = dj_art or song.art
        if elapsed is not None and 0 <= elapsed <= c.MAX_DURATION.total_seconds():
            playback = Playback(position=timedelta(seconds=elapsed), length=duration)
        elif duration is not None:
            playback = Playback(length=duration)

    following = c.mapping(raw.get("playing_next"))
    next_song = Song.parse(following.get("song"))
    history: list[RecentItem] = []
    if not offline:
        for entry in c.as_list(raw.get("song_history"))[:MAX_HISTORY]:
            entry_raw = c.mapping(entry)
            item = Song.parse(entry_raw.get("song")).recent(moment(entry_raw.get("played_at")))
            if item is not None:
                history.append(item)
    recent = ((head,) if head else ()) + tuple(history)
    return StationInfo(
        fetched_at=fetched_at,
        name=text(station.get("name"), 200),
        description=text(station.get("description"), 1000),
        url=url(station.get("url")) or url(station.get("public_player_url")),
        live=is_live,
        now_playing=on_air,
        playback=playback,
        current=current,
        next_title=next_song.display,
        next_track=next_song.track(seconds(following.get("duration")), None, None),
        listeners=listeners,
        links=links(station, art, next_song.art),
        recent=recent,
    )


def shortcode(payload: Any) -> str | None:
    """The station's shortcode in a now-playing answer (its static file and push channel)."""
    station = c.mapping(c.mapping(payload).get("station"))
    found = text(station.get("shortcode"), 100)
    if found and all(ch.isalnum() or ch in "_-" for ch in found):
        return found
    return None


# Scheduled shows ----------------------------------------------------------------------------


def scheduled_show(value: Any) -> ScheduledShow | None:
    """One ``Api_StationSchedule`` (``ScheduleApiGenerator``): a playlist's or a streamer's
    slot. ``id`` is the schedule entry's (the same every day it runs); ``start`` is ISO 8601 in
    the station's zone, whose date names the airing."""
    raw = c.mapping(value)
    start = moment(raw.get("start_timestamp"))
    name = text(raw.get("name"), 200)
    title = text(raw.get("title"), 200) or name
    if start is None or not title:
        return None
    end = moment(raw.get("end_timestamp"))
    local = text(raw.get("start"), 40) or ""
    day = local[:10] if len(local) >= 10 and _is_date(local[:10]) else ""
    return ScheduledShow(
        id=c.integer(raw.get("id")),
        type=(text(raw.get("type"), 20) or PLAYLIST).lower(),
        name=name or title,
        title=title,
        description=text(raw.get("description"), 300),
        start=start,
        end=end if end is not None and end >= start else None,
        is_now=bool(c.boolean(raw.get("is_now"))),
        day=day,
    )


def _is_date(value: str) -> bool:
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def schedule(payload: Any) -> tuple[ScheduledShow, ...]:
    """The entries of a schedule answer, soonest first (the calendar form is unsorted)."""
    items = payload if isinstance(payload, list) else []
    shows = (scheduled_show(v) for v in items[: MAX_SCHEDULE * 2])
    found = [show for show in shows if show is not None][:MAX_SCHEDULE]
    return tuple(sorted(found, key=lambda show: show.start))


# Pushes (Centrifugo's unidirectional SSE) ---------------------------------------------------


def pushed_payloads(data: str, channel: str) -> list[Mapping[str, Any]]:
    """The now-playing payloads in one SSE ``data`` of Centrifugo's unidirectional protocol:
    the ``connect`` reply carries the channel's last publication (the namespace keeps one and
    forces recovery), each ``pub`` push one more; ``{}`` is a ping. The push's channel is
    top-level (``{"channel": ..., "pub": {"data": ...}}``); ``np`` sits in the data."""
    try:
        message = json.loads(data)
    except (ValueError, RecursionError):
        return []
    if not isinstance(message, Mapping):
        return []
    publications: list[Any] = []
    if "connect" in message:
        subs = c.mapping(c.mapping(message.get("connect")).get("subs"))
        publications = c.as_list(c.mapping(subs.get(channel)).get("publications"))
    elif "pub" in message:
        pub = c.mapping(message.get("pub"))
        where = message.get("channel", pub.get("channel"))
        if where is None or where == channel:
            publications = [pub]
    found = []
    for publication in publications[-5:]:
        np = c.mapping(c.mapping(c.mapping(publication).get("data")).get("np"))
        if np:
            found.append(np)
    return found
