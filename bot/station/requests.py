"""Client of a station's public song-request endpoints (``/w/songrequest*``, no key).

Not in the vendor's spec: the shapes are what public clients agree on (field notes, "Song
requests"), so every member is optional and any body is possible. One private request function
carries every call: one try (a request sent twice would be asked twice), a total timeout, no
redirects, a size cap while streaming, and every failure translated into the station error
hierarchy. What a listener typed (the query) never reaches a log line or a message: failures
name the endpoint and the server only.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp
from yarl import URL

from ..util.bodies import read_at_most
from ..util.text import one_line
from .errors import (
    Problem,
    RequestRefused,
    RequestsOff,
    RequestsUnavailable,
    StationError,
    StationRefused,
)
from .failures import server_of

_LOGGER = logging.getLogger("onair.requests")

MAX_TRACKS = 100  # search results kept (no paging upstream; Discord shows 25)
MAX_QUEUE = 50
MAX_TITLE = 300  # characters of a title kept (Discord shows 100 in a choice)
MAX_ID = 64  # characters of a track id
MAX_REASON = 200  # characters of a station's refusal shown to a listener
MAX_QUERY = 100  # characters of a search sent upstream
_TRUE_WORDS = frozenset({"1", "true", "yes", "played"})


@dataclass(frozen=True, slots=True)
class RequestTrack:
    """One search result: the station's id (a number or a string upstream: always text here)
    and its one display string (``Artist - Title``; there is no split)."""

    id: str
    title: str


@dataclass(frozen=True, slots=True)
class SearchAnswer:
    """The tracks found; ``refusal`` is the station's reason when it answered ``error: true``
    (nothing found, or not allowed: the search alone cannot tell)."""

    tracks: tuple[RequestTrack, ...] = ()
    refusal: str | None = None


@dataclass(frozen=True, slots=True)
class QueuedSong:
    """One entry of the station's request queue (newest first upstream)."""

    title: str
    played: bool


def track_id(value: object) -> str | None:
    """A track id as text: a whole number or a short printable string; None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if abs(value) < 10**18 else None
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else None
    if isinstance(value, str):
        text = value.strip()
        if 0 < len(text) <= MAX_ID and text.isprintable():
            return text
    return None


def _reason(payload: Mapping[str, Any]) -> str | None:
    for name in ("message", "errdetail", "error", "msg"):
        text = one_line(payload.get(name), MAX_REASON)
        if text:
            return text
    return None


def _flag(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().casefold() in _TRUE_WORDS
    return bool(value) if isinstance(value, int | float) else False


def _tracks(items: Any) -> tuple[RequestTrack, ...]:
    if isinstance(items, Mapping):  # one track collapsed to a bare object
        items = [items]
    if not isinstance(items, list):
        return ()
    found: list[RequestTrack] = []
    seen: set[str] = set()
    for item in items[: MAX_TRACKS * 4]:
        if not isinstance(item, Mapping):
            continue
        ident = track_id(item.get("id"))
        title = one_line(item.get("title"), MAX_TITLE)
        if ident is None or not title or ident in seen:
            continue
        seen.add(ident)
        found.append(RequestTrack(ident, title))
        if len(found) >= MAX_TRACKS:
            break
    return tuple(found)


def parse_search(payload: Any) -> SearchAnswer:
    if isinstance(payload, list):
        return SearchAnswer(_tracks(payload))
    if not isinstance(payload, Mapping):
        raise RequestsUnavailable()
    tracks = _tracks(payload.get("tracks"))
    if _flag(payload.get("error")) or payload.get("success") is False:
        return SearchAnswer(tracks, _reason(payload) or "")
    return SearchAnswer(tracks)


def parse_made(payload: Any) -> None:
    """Accepted (``error: false`` or ``success: true``), else :class:`RequestRefused`."""
    if not isinstance(payload, Mapping):
        raise RequestsUnavailable()
    error = payload.get("error")
    if isinstance(error, str) and error.strip() and error.strip().casefold() != "false":
        raise RequestRefused(_reason(payload))
    if _flag(error) or payload.get("success") is False:
        raise RequestRefused(_reason(payload))
    if "error" in payload or _flag(payload.get("success")):
        return
    raise RequestsUnavailable()  # neither key: no telling whether it was taken


def parse_queue(payload: Any) -> tuple[QueuedSong, ...]:
    if isinstance(payload, Mapping):
        if _flag(payload.get("error")) or isinstance(payload.get("error"), str):
            raise RequestsOff()
        payload = payload.get("requests", payload.get("list", payload.get("tracks")))
    if not isinstance(payload, list):
        raise RequestsUnavailable()
    songs = []
    for item in payload[:MAX_QUEUE]:
        if isinstance(item, Mapping):
            title = one_line(item.get("title"), MAX_TITLE)
            if title:
                songs.append(QueuedSong(title, _flag(item.get("played"))))
    return tuple(songs)


class RequestsClient:
    """The song-request endpoints of one station, on the injected shared session."""

    def __init__(
        self,
        base_url: str,
        station_id: int | str,
        *,
        session: aiohttp.ClientSession,
        timeout: aiohttp.ClientTimeout | None = None,
        max_bytes: int = 512 * 1024,
        url_guard: Callable[[URL], None] | None = None,
        key: str | None = None,
    ) -> None:
        """``key``: the station's API key, for a host whose request calls take one (never
        logged, never in a URL; RadioBOSS's public endpoints take none)."""
        self.base_url = base_url.rstrip("/")
        self.station_id = str(station_id).strip()
        self._key = key or None
        self._session = session
        self.timeout = timeout or aiohttp.ClientTimeout(total=5, connect=3)
        self.max_bytes = max_bytes
        self.url_guard = url_guard
        self._headers = {"Accept": "application/json"}

    def __repr__(self) -> str:
        return f"RequestsClient({self.base_url!r}, {self.station_id!r})"

    async def search(self, query: str) -> SearchAnswer:
        text = " ".join(query.split())[:MAX_QUERY]
        return parse_search(await self._get("songrequestsearch", {"q": text}))

    async def request(self, track: str) -> None:
        """Ask for ``track``; returns when the station accepted it."""
        parse_made(await self._get("songrequestmake", {"id": track}))

    async def queue(self, count: int = 20) -> tuple[QueuedSong, ...]:
        return parse_queue(await self._get("songrequestlist", {"cnt": str(max(1, count))}))

    async def state(self) -> tuple[str, int | None]:
        """Whether the station takes requests (``onair check``): ("on", songs waiting),
        ("off", None) when it refuses everything, ("unavailable", None) when it cannot tell."""
        try:
            songs = await self.queue(20)
        except RequestsOff:
            return "off", None
        except StationError:
            return "unavailable", None
        return "on", sum(not song.played for song in songs)

    # The one request function ------------------------------------------------------------

    def url(self, endpoint: str, params: Mapping[str, str]) -> URL:
        """The station's own host; every value URL-encoded by yarl (``&``, ``#``, ``=`` too)."""
        return URL(f"{self.base_url}/w/{endpoint}").with_query({"u": self.station_id, **params})

    def _check(self, url: URL, name: str) -> None:
        """StationRefused when the guard refuses ``url`` (logged by server, never the query;
        the refusal kept without its traceback, whose frames hold the URL)."""
        if self.url_guard is None:
            return
        try:
            self.url_guard(url)
        except Exception as error:
            _LOGGER.info("%s on %s refused: %s", name, server_of(url), error)
            raise StationRefused(
                Problem.NO_LONGER_CONTACTED, why=error.with_traceback(None)
            ) from None

    async def _get(self, endpoint: str, params: Mapping[str, str]) -> Any:
        url = self.url(endpoint, params)
        where = server_of(url)
        self._check(url, endpoint)
        cause: str
        try:
            async with self._session.get(
                url, timeout=self.timeout, headers=self._headers, allow_redirects=False
            ) as response:
                status = response.status
                body = await self._read_capped(response) if status == 200 else b""
        except StationError:
            raise
        except TimeoutError:
            cause = "timeout"
        except ValueError:
            cause = "answer too large"
        except (aiohttp.ClientError, OSError) as error:
            cause = type(error).__name__
        else:
            if status != 200:
                cause = f"HTTP {status}"
            else:
                try:
                    return json.loads(body) if body.strip() else _fail("empty answer")
                except (ValueError, RecursionError):
                    cause = "not JSON"
        _LOGGER.info("%s on %s failed: %s", endpoint, where, cause)
        raise RequestsUnavailable()

    async def _read_capped(self, response: aiohttp.ClientResponse) -> bytes:
        body = await read_at_most(response, self.max_bytes)
        if body is None:
            raise ValueError("too large")
        return body


def _fail(why: str) -> Any:
    raise ValueError(why)
