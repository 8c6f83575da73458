"""The ``info`` answer (the wire format) as typed, immutable models: the station, what plays
now and next, tune-in links, recent plays. The same-play rule lives in ``play``.

Frozen dataclasses rather than a validation library: every field needs a hand-written coercion
anyway (field notes), the station subpackage stays free of extra dependencies, and construction
is cheap enough to parse on every poll.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, tzinfo
from typing import Any

from ..util.links import BUTTON_URL, safe_url
from . import coerce as c
from .parsing import ParseMemo, memoised, require_object, track_fields
from .play import ESTIMATE_TOLERANCE, Play, normalise_title

ARTID = "ARTID"


@dataclass(frozen=True, slots=True)
class TrackTags:
    """The tags a track-info object and a playlist entry share (parsed by ``track_fields``): both
    models extend this one."""

    artist: str | None = None
    title: str | None = None
    album: str | None = None
    year: str | None = None
    genre: str | None = None
    comment: str | None = None
    filename: str | None = None
    duration: timedelta | None = None
    play_count: int | None = None
    last_played: datetime | None = None
    intro: timedelta | None = None
    outro: timedelta | None = None
    language: str | None = None
    rating: int | None = None
    bpm: str | None = None
    custom: tuple[str | None, ...] = ()
    cast_title: str | None = None

    @property
    def file_name(self) -> str | None:
        """The file's base name for display (no ``~files`` prefix, no folders)."""
        return c.file_base_name(self.filename)


@dataclass(frozen=True, slots=True)
class Track(TrackTags):
    """A track-info object, flattened from ``@attributes``."""

    tags: str | None = None
    listeners: int | None = None
    item_title: str | None = None

    @property
    def is_empty(self) -> bool:
        return not (self.artist or self.title or self.cast_title or self.filename)

    @classmethod
    def parse(cls, value: Any, zone: tzinfo) -> Track | None:
        attrs = c.attributes(value)
        if not attrs:
            return None
        track = cls(
            **track_fields(attrs, zone),
            tags=c.text(attrs.get("TAGS")),
            listeners=c.integer(attrs.get("LISTENERS")),
            item_title=c.text(attrs.get("ITEMTITLE")),
        )
        return None if track.is_empty else track


@dataclass(frozen=True, slots=True)
class Playback:
    """Position and length of the item on air (the API sends milliseconds)."""

    position: timedelta | None = None
    length: timedelta | None = None
    state: str | None = None

    @classmethod
    def parse(cls, value: Any) -> Playback | None:
        raw = c.mapping(value)
        if not raw:
            return None
        length = c.milliseconds(raw.get("len"))
        return cls(
            position=c.milliseconds(raw.get("pos")),
            length=length if length else None,  # 0 during live shows means unknown
            state=c.text(raw.get("state")),
        )


@dataclass(frozen=True, slots=True)
class Mount:
    name: str | None = None
    m3u: str | None = None
    m3u_ssl: str | None = None
    http: str | None = None
    ssl: str | None = None

    @classmethod
    def parse(cls, value: Any) -> Mount | None:
        raw = c.mapping(value)
        if not raw:
            return None
        return cls(
            name=c.text(raw.get("name")),
            m3u=c.text(raw.get("m3u")),
            m3u_ssl=c.text(raw.get("m3u_ssl")),
            http=c.text(raw.get("http")),
            ssl=c.text(raw.get("ssl")),
        )


def _is_https(url: str | None) -> bool:
    return bool(url) and str(url).lower().startswith("https://")


@dataclass(frozen=True, slots=True)
class Links:
    """Tune-in and artwork links."""

    m3u: str | None = None
    m3u_ssl: str | None = None
    pls_uri: str | None = None
    http: str | None = None
    ssl: str | None = None
    port80: str | None = None
    port443: str | None = None
    page: str | None = None
    artwork: str | None = None
    artwork_next: str | None = None
    artwork_recent: str | None = None
    station_logo: str | None = None
    mounts: tuple[Mount, ...] = ()
    api: str | None = None

    @property
    def pls(self) -> str | None:
        """``pls_uri`` has no scheme: served over https like the rest of the vendor's pages."""
        if not self.pls_uri:
            return None
        if "://" in self.pls_uri:
            return self.pls_uri
        return "https://" + self.pls_uri.lstrip("/")

    @property
    def listen(self) -> str | None:
        """The best stream a listener can open: https on 443 first, then any https, then http;
        only links Discord accepts in a button (``safe_url``: a broken one is passed over)."""
        secure = [self.port443, self.ssl, *(m.ssl for m in self.mounts)]
        plain = [self.port80, self.http, *(m.http for m in self.mounts)]
        candidates = [u for u in secure if _is_https(u)] + plain
        return next((url for link in candidates if (url := safe_url(link, BUTTON_URL))), None)

    @property
    def m3u_best(self) -> str | None:
        return self.m3u_ssl if _is_https(self.m3u_ssl) else self.m3u

    def recent_artwork(self, artwork_id: str | None) -> str | None:
        """Substitute ``ARTID`` in ``artwork_recent`` with a recent item's ``artworkid``."""
        if not artwork_id or not self.artwork_recent or ARTID not in self.artwork_recent:
            return None
        return self.artwork_recent.replace(ARTID, artwork_id)

    @classmethod
    def parse(cls, value: Any) -> Links:
        raw = c.mapping(value)
        mounts = tuple(m for m in (Mount.parse(v) for v in c.as_list(raw.get("mounts"))) if m)
        return cls(
            m3u=c.text(raw.get("m3u")),
            m3u_ssl=c.text(raw.get("m3u_ssl")),
            pls_uri=c.text(raw.get("pls_uri")),
            http=c.text(raw.get("http")),
            ssl=c.text(raw.get("ssl")),
            port80=c.text(raw.get("port80")),
            port443=c.text(raw.get("port443")),
            page=c.text(raw.get("page")),
            artwork=c.text(raw.get("artwork")),
            artwork_next=c.text(raw.get("artwork_next")),
            artwork_recent=c.text(raw.get("artwork_recent")),
            station_logo=c.text(raw.get("stationlogo")),
            mounts=mounts,
            api=c.text(raw.get("api")),
        )


def split_cast_title(value: str | None) -> tuple[str | None, str | None]:
    """``<artist> - <title>`` into (artist, title); no separator means a bare title."""
    if not value:
        return None, None
    artist, sep, title = value.partition(" - ")
    if not sep:
        return None, value.strip() or None
    return artist.strip() or None, title.strip() or None


@dataclass(frozen=True, slots=True)
class RecentItem:
    title: str | None = None
    track_title: str | None = None
    track_artist: str | None = None
    started: datetime | None = None
    artwork_id: str | None = None
    artwork: str | None = None

    @property
    def artist_and_title(self) -> tuple[str | None, str | None]:
        if self.track_title or self.track_artist:
            return self.track_artist, self.track_title
        return split_cast_title(self.title)

    @classmethod
    def parse(cls, value: Any, zone: tzinfo, links: Links) -> RecentItem | None:
        raw = c.mapping(value)
        if not raw:
            return None
        artwork_id = c.text(raw.get("artworkid"))
        item = cls(
            title=c.text(raw.get("title")),
            track_title=c.text(raw.get("tracktitle")),
            track_artist=c.text(raw.get("trackartist")),
            started=c.local_datetime(raw.get("started"), zone),
            artwork_id=artwork_id,
            artwork=links.recent_artwork(artwork_id),
        )
        if not (item.title or item.track_title):
            return None
        return item


def _plausible_start(
    last_played: datetime,
    estimate: datetime | None,
    fetched_at: datetime,
    length: timedelta | None,
) -> bool:
    """Whether ``LASTPLAYED`` is this play's start (and not the time of an earlier play)."""
    if last_played > fetched_at + ESTIMATE_TOLERANCE:
        return False
    if estimate is not None:
        return abs(last_played - estimate) <= ESTIMATE_TOLERANCE
    if length is not None:
        return fetched_at - last_played <= length + ESTIMATE_TOLERANCE
    return False


@dataclass(frozen=True, slots=True)
class StationInfo:
    """The response of ``info``, plus when it was fetched."""

    fetched_at: datetime
    name: str | None = None
    description: str | None = None
    url: str | None = None
    genre: str | None = None
    autodj_title: str | None = None
    autodj: bool | None = None
    live: bool | None = None
    now_playing: str | None = None
    playback: Playback | None = None
    current: Track | None = None
    next_title: str | None = None
    next_track: Track | None = None
    previous_track: Track | None = None
    listeners: int | None = None
    links: Links = field(default_factory=Links)
    recent: tuple[RecentItem, ...] = ()

    @property
    def on_air_title(self) -> str | None:
        """What is on air: ``nowplaying`` (holds the live title) before ``autodj_title``."""
        return (
            self.now_playing
            or self.autodj_title
            or (self.current.cast_title if self.current else None)
            or (self.recent[0].title if self.recent else None)
        )

    @property
    def is_live(self) -> bool:
        return bool(self.live)

    @property
    def listener_count(self) -> int | None:
        if self.listeners is not None:
            return self.listeners
        return self.current.listeners if self.current else None

    @property
    def artwork(self) -> str | None:
        """Artwork of the play on air: ``links.artwork``, else the newest recent item's."""
        if self.links.artwork:
            return self.links.artwork
        return self.recent[0].artwork if self.recent else None

    @property
    def next_display(self) -> str | None:
        if self.next_title:
            return self.next_title
        track = self.next_track
        if track:
            if track.cast_title:
                return track.cast_title
            if track.title:
                return f"{track.artist} - {track.title}" if track.artist else track.title
        return None

    def _current_recent(self, artist: str | None, title: str) -> RecentItem | None:
        if not self.recent:
            return None
        head = self.recent[0]
        head_artist, head_title = head.artist_and_title
        same_title = normalise_title(head_title) == normalise_title(title)
        same_artist = (
            not head_artist
            or not artist
            or (normalise_title(head_artist) == normalise_title(artist))
        )
        whole = normalise_title(head.title) == normalise_title(self.on_air_title)
        return head if (same_title and same_artist) or whole else None

    def current_play(self) -> Play | None:
        """The play on air, or None when nothing (or ``n/a``) is on air."""
        track = self.current
        on_air = self.on_air_title
        artist, title = split_cast_title(on_air)
        if self.live and on_air:
            track = None  # currenttrack_info describes the AutoDJ item, not the live show
        elif track and track.title:
            artist, title = track.artist, track.title
            if on_air and normalise_title(on_air) not in {
                normalise_title(track.cast_title),
                normalise_title(f"{track.artist} - {track.title}"),
                normalise_title(track.title),
            }:
                # nowplaying moved on while currenttrack_info lags: trust nowplaying.
                artist, title = split_cast_title(on_air)
                track = None
        if not title:
            return None
        started: datetime | None = None
        exact = False
        head = self._current_recent(artist, title)
        estimate: datetime | None = None
        if self.playback and self.playback.position is not None and not self.live:
            estimate = self.fetched_at - self.playback.position
        if head and head.started:
            started, exact = head.started, True
        elif (
            track
            and track.last_played
            and _plausible_start(track.last_played, estimate, self.fetched_at, track.duration)
        ):
            started, exact = track.last_played, True
        else:
            started = estimate
        length = self.playback.length if self.playback else None
        return Play(
            title=title,
            artist=artist,
            album=track.album if track else None,
            year=track.year if track else None,
            started=started,
            started_exact=exact,
            file=track.filename if track else None,
            duration=(track.duration if track and track.duration else length),
            live=self.is_live,
        )

    @classmethod
    def parse(
        cls, payload: Any, zone: tzinfo, fetched_at: datetime, *, memo: ParseMemo | None = None
    ) -> StationInfo:
        """``memo`` (one dict per station, kept by the client) reuses the parts of the previous
        answer that did not change: between two polls of a track only position and listeners
        usually move, so most of the ~0.4 ms parse is skipped."""
        raw = require_object(payload, "station info")
        raw_links = raw.get("links")
        links: Links = memoised(memo, "links", raw_links, lambda: Links.parse(raw_links))
        raw_recent = raw.get("recent")
        recent: tuple[RecentItem, ...] = memoised(
            memo,
            "recent",
            (raw_recent, raw_links),
            lambda: tuple(
                item
                for item in (RecentItem.parse(v, zone, links) for v in c.as_list(raw_recent))
                if item
            ),
        )

        def track(name: str) -> Track | None:
            value = raw.get(name)
            parsed: Track | None = memoised(memo, name, value, lambda: Track.parse(value, zone))
            return parsed

        return cls(
            fetched_at=fetched_at,
            name=c.text(raw.get("station_name")),
            description=c.text(raw.get("station_description")),
            url=c.text(raw.get("station_url")),
            genre=c.text(raw.get("station_genre")),
            autodj_title=c.text(raw.get("autodj_title")),
            autodj=c.boolean(raw.get("autodj")),
            live=c.boolean(raw.get("live")),
            now_playing=c.text(raw.get("nowplaying")),
            playback=Playback.parse(raw.get("playback")),
            current=track("currenttrack_info"),
            next_title=c.text(raw.get("nexttrack")),
            next_track=track("nexttrack_info"),
            previous_track=track("prevtrack_info"),
            listeners=c.integer(raw.get("listeners")),
            links=links,
            recent=recent,
        )
