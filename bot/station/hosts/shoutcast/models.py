"""Shoutcast DNAS answers as OnAir's station model.

Shapes, from the DNAS's own "DNAS Server JSON / JSON-P Responses" document (sections 2.2 General
Server Summary, 2.4 Song History, 2.11 7.html) and from answers of real 2.4.7 and 2.6.1 servers
kept by projects that parse them:

- ``/stats?sid=N&json=1``: one object. Counts are JSON numbers but ``bitrate`` and ``samplerate``
  are strings (``"128"``); ``songtitle`` is ``"Artist - Title"`` as the source sent it, empty when
  unknown; ``streamstatus`` is 1 with a source connected, 0 without one; ``nexttitle``, ``dj``,
  ``songurl``, ``streamuptime`` and ``streamlistederror`` appear only when known.
- ``/played?sid=N&type=json``: a list, newest first, of ``{"playedat": <unix seconds>, "title":
  "Artist - Title"}`` (the document shows ``playedat`` as a string, 2.6 servers send a number; 2.6
  adds a ``metadata`` object). ``[]`` when the history is off or empty.
- ``/7.html`` (1.x, and 2.x for old tools): ``<html><body>currentlisteners,streamstatus,
  peaklisteners,maxlisteners,uniquelisteners,bitrate,songtitle</body></html>``; the song title
  may itself hold commas.
"""

from __future__ import annotations

import html
import itertools
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ... import coerce as c
from ...info import Links, Playback, RecentItem, StationInfo
from ...parsing import require_object

MAX_TEXT = 512  # a title, a name or a genre longer than this is cut (what a post can show anyway)
MAX_PLAYED = 50  # a DNAS keeps 10 by default (``songhistory``); more is not a history we read
MAX_LENGTH = timedelta(hours=6)
_TAGS = re.compile(r"<[^<>]*>")  # no "<" inside: linear, however many are left open


def _text(value: Any) -> str | None:
    raw = c.text(value)
    return raw[:MAX_TEXT] if raw is not None else None


def _moment(value: Any) -> datetime | None:
    """A unix time (number or digits) as an aware datetime; None for anything else."""
    seconds = c.integer(value)
    if seconds is None or seconds <= 0:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class StreamStats:
    """One stream's ``/stats`` answer: what OnAir uses of it."""

    on_air: bool
    title: str | None
    next_title: str | None
    name: str | None
    genre: str | None
    url: str | None
    listeners: int | None
    path: str | None
    dj: str | None

    @classmethod
    def parse(cls, payload: Any) -> StreamStats:
        raw = require_object(payload, "stream stats")
        status = c.integer(raw.get("streamstatus"))
        # A source connected (1), or a backup file playing in its place (backupstatus 1).
        on_air = status == 1 or c.integer(raw.get("backupstatus")) == 1
        if status is None and "streamstatus" not in raw:
            on_air = _text(raw.get("songtitle")) is not None  # a 7.html-like minimal answer
        path = _text(raw.get("streampath"))
        return cls(
            on_air=on_air,
            title=_text(raw.get("songtitle")) if on_air else None,
            next_title=_text(raw.get("nexttitle")) if on_air else None,
            name=_text(raw.get("servertitle")),
            genre=_text(raw.get("servergenre")),
            url=_text(raw.get("serverurl")),
            listeners=c.integer(raw.get("currentlisteners")),
            path=path if path and path.startswith("/") and "//" not in path else None,
            dj=_text(raw.get("dj")),
        )

    @classmethod
    def parse_7html(cls, body: str) -> StreamStats:
        """The 1.x ``/7.html`` line; ValueError when it is not one."""
        line = html.unescape(_TAGS.sub("", body)).strip()
        fields = line.split(",", 6)
        # maxlisteners is "UNLIMITED" when no limit is set
        counts = [f.strip() for i, f in enumerate(fields[:6]) if i != 3]
        if len(fields) < 6 or not all(f.isdigit() and len(f) <= 12 for f in counts):
            raise ValueError("not a 7.html line")
        on_air = fields[1].strip() == "1"
        title = _text(fields[6]) if len(fields) == 7 and on_air else None
        return cls(
            on_air=on_air,
            title=title,
            next_title=None,
            name=None,
            genre=None,
            url=None,
            listeners=c.integer(fields[0]),
            path=None,
            dj=None,
        )


def parse_played(payload: Any) -> tuple[RecentItem, ...]:
    """``/played``'s list, newest first, as recent items with their exact starts."""
    if isinstance(payload, dict):  # some builds wrap it; anything else is no history
        payload = next((v for v in payload.values() if isinstance(v, list)), [])
    items: list[RecentItem] = []
    for entry in c.as_list(payload)[:MAX_PLAYED]:
        raw = c.mapping(entry)
        title = _text(raw.get("title"))
        if title is None:
            continue
        # 2.x sources send tags: TIT2 and TPE1 (lower-cased by the DNAS) are title and artist.
        # A 1.x source's title comes back as TIT2 alone: then the whole title is all there is.
        tags = c.mapping(raw.get("metadata"))
        artist = _text(tags.get("tpe1"))
        items.append(
            RecentItem(
                title=title,
                track_title=_text(tags.get("tit2")) if artist else None,
                track_artist=artist,
                started=_moment(raw.get("playedat")),
            )
        )
    return tuple(items)


def station_info(
    stats: StreamStats,
    recent: tuple[RecentItem, ...],
    links: Links,
    fetched_at: datetime,
) -> StationInfo:
    """OnAir's model of the stream: no playback position, no artwork, no per-track tags (the
    DNAS has none of them); the start of the play on air is ``/played``'s newest ``playedat``
    when its title is the one on air (``StationInfo.current_play`` matches them)."""
    if stats.title is None:
        recent = ()  # nothing (named) on air: the history's head is not a play now
    length = _aired_length(recent)
    return StationInfo(
        fetched_at=fetched_at,
        name=stats.name,
        url=stats.url,
        genre=stats.genre,
        now_playing=stats.title,
        next_title=stats.next_title,
        listeners=stats.listeners,
        playback=Playback(length=length) if length is not None else None,
        links=links,
        recent=recent,
    )


def _aired_length(recent: tuple[RecentItem, ...]) -> timedelta | None:
    """How long the title on air (the history's head) ran the last time the history shows it
    aired: from its start to the next play's. A DNAS tells no lengths; a title's length is the
    same each time (a station ID, a song), so a jingle is known as one from its second airing."""
    if len(recent) < 3:
        return None
    head = recent[0].title
    for newer, older in itertools.pairwise(recent[1:]):  # not the head's own pair
        if older.title == head and newer.started is not None and older.started is not None:
            ran = newer.started - older.started
            return ran if timedelta(0) < ran <= MAX_LENGTH else None
    return None
