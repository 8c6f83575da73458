"""The Shoutcast DNAS as a station source: ``/stats`` for what is on air, ``/played`` for when
it started. Both are public pages of the DNAS (no key); the stream is a sid on it."""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar

from yarl import URL

from ...client import StationClient
from ...errors import Problem, StationNotFound, StationResponseError
from ...info import Links, RecentItem, StationInfo
from ...source import Feature
from .models import StreamStats, parse_played, station_info

_LOGGER = logging.getLogger("onair.station")


class _Page(str):
    """An answer that is not JSON (an HTML page, 7.html, XML): its text."""


class _NotDnas2(StationResponseError):
    """``/stats`` answered as a 1.x DNAS answers what it does not have."""


# /played is read again when the last poll is older than this, even for the same title: the
# title may have aired again meanwhile (after an outage, or a jingle between sparse polls).
# Polls come at most 30 s apart (``max_interval``) while a station answers.
HISTORY_REUSE_SECONDS = 45.0


class ShoutcastClient(StationClient):
    """One stream (``sid``) of a Shoutcast DNAS 2.x, or a 1.x DNAS through its ``/7.html``.

    A poll asks ``/stats``; ``/played`` only when the title on air changed since the last poll,
    or that poll is long past (its newest ``playedat`` is that play's exact start, which holds
    for the whole play), so a poll between two changes costs one request."""

    kind: ClassVar[str] = "shoutcast"
    features: ClassVar[frozenset[Feature]] = frozenset({Feature.RECENT})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # A 1.x DNAS sends the stream itself, not the page, to a client whose User-Agent lacks
        # "Mozilla"; a 2.x DNAS answers the same pages to any.
        self._headers["User-Agent"] = f"Mozilla/5.0 (compatible; {self._headers['User-Agent']})"
        self.legacy = False  # a 1.x DNAS: /7.html, no history, no stream path
        self._played_for: str | None = None  # the title /played was last read for
        self._played: tuple[RecentItem, ...] = ()
        self._polled_at: float | None = None  # when /stats last answered with a title

    def _auth_query(self) -> dict[str, str]:
        """None: a DNAS's public pages take no key, and a configured one is never sent."""
        return {}

    def _decode(self, body: bytes) -> Any:
        if not body.strip():
            raise StationResponseError(Problem.EMPTY)
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            return _Page(body.decode("utf-8", errors="replace"))

    async def _info(self) -> StationInfo:
        sid = self.station_id
        stats: StreamStats | None = None
        if not self.legacy:
            try:
                stats = await self._request("stats", {"sid": sid, "json": "1"}, build=_stats)
            except _NotDnas2:
                stats = await self._request("7.html", build=_seven)
                self.legacy = True
                _LOGGER.info("%s answers as a Shoutcast 1.x DNAS (7.html)", self._describe_base())
        if stats is None:
            stats = await self._request("7.html", build=_seven)
        recent = await self._history(stats.title)
        return station_info(stats, recent, self._links(stats), self.fetched_now())

    async def _history(self, title: str | None) -> tuple[RecentItem, ...]:
        """``/played`` when the title on air changed since it was last read, else what it said
        then. A DNAS whose history is off, or a 1.x one, has none: no starts, not a failure."""
        now, before = self.clock(), self._polled_at
        self._polled_at = now
        if self.legacy or title is None:
            self._played_for = None
            return ()
        recent = before is not None and now - before <= HISTORY_REUSE_SECONDS
        if title == self._played_for and recent:
            return self._played
        try:
            played = await self._request(
                "played", {"sid": self.station_id, "type": "json"}, build=_played
            )
        except (StationNotFound, StationResponseError) as error:
            _LOGGER.debug("no song history from %s: %s", self._describe_base(), error.problem.value)
            played = ()
        if not played or played[0].title == title:
            # Kept for the play: its history changes only when the title does. A head that is
            # not yet this title (the DNAS caches each page for a second) is asked again.
            self._played_for, self._played = title, played
        return played

    def _links(self, stats: StreamStats) -> Links:
        """The stream at its path on the DNAS and the DNAS's playlist file for players; the
        station's own website as its page."""
        base = URL(self.base_url)
        prefix = base.path.rstrip("/")  # a DNAS behind a proxy's path
        path = prefix + (stats.path or "/")
        # A path ending in "/" is also the DNAS's HTML page for browsers; with ";" it is always
        # the stream (the DNAS's own public links add it the same way).
        stream = str(base.with_path(path + ";" if path.endswith("/") else path))
        pls = None
        if not self.legacy:
            pls = str(base.with_path(f"{prefix}/listen.pls").with_query(sid=self.station_id))
        secure = base.scheme == "https"
        return Links(
            http=None if secure else stream,
            ssl=stream if secure else None,
            pls_uri=pls,
            page=stats.url,
        )

    def _describe_base(self) -> str:
        return self._describe(URL(self.base_url))


def _stats(payload: Any) -> StreamStats:
    if isinstance(payload, _Page):
        # A 1.x DNAS has no /stats: "Invalid resource", as for any page it does not have.
        # Any other page (a proxy's error, a DNAS hiding its statistics) is not an answer.
        if "invalid resource" in payload[:200].lower():
            raise _NotDnas2(Problem.NOT_JSON)
        raise StationResponseError(Problem.NOT_JSON)
    return StreamStats.parse(payload)


def _seven(payload: Any) -> StreamStats:
    if not isinstance(payload, _Page):
        raise StationResponseError(Problem.NOT_OBJECT)
    try:
        return StreamStats.parse_7html(payload)
    except ValueError:
        raise StationResponseError(Problem.UNREADABLE) from None


def _played(payload: Any) -> tuple[RecentItem, ...]:
    if isinstance(payload, _Page):
        raise StationResponseError(Problem.NOT_JSON)
    return parse_played(payload)
