"""AzuraCast's public song requests (``Controller/Api/Stations/Requests/*``).

``GET /api/station/{id}/requests`` lists the requestable songs (AzuraCast's Paginator: with
``rowCount``/``current`` an object ``{page, per_page, total, total_pages, links, rows}``, else a
bare list; ``searchPhrase`` matches title, artist and album); ``POST
/api/station/{id}/request/{request_id}`` asks for one: ``Api_Status`` ``{"success": true,
"message": ...}`` when taken, else an ``Api_Error`` (HTTP 500 from
``CannotCompleteActionException``: "Cannot submit request: <reason>"). The queue needs a key.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import aiohttp
from yarl import URL

from ....util.bodies import read_at_most
from ....util.text import one_line
from ... import coerce as c
from ...errors import (
    RequestRefused,
    RequestsOff,
    RequestsUnavailable,
    StationError,
)
from ...failures import server_of
from ...requests import (
    MAX_QUERY,
    MAX_REASON,
    MAX_TITLE,
    QueuedSong,
    RequestsClient,
    RequestTrack,
    SearchAnswer,
    track_id,
)
from . import models

_LOGGER = logging.getLogger("onair.requests")

PAGE_ROWS = 25  # AzuraCast's most rows per page for a caller without a key
# AzuraCast refuses a request from a crawler (its DeviceDetector reads the User-Agent): OnAir
# names itself without "bot" in it.
USER_AGENT = "OnAir/0.1 (Discord radio companion)"
_PREFIX = "cannot submit request:"
# The errors whose message is a refusal meant for the listener (any other is a fault).
_REFUSING = ("CannotCompleteActionException", "StationUnsupportedException")
_OFF_WORDS = ("does not currently accept requests", "does not currently support")

# AzuraCast's refusals (SubmitAction) in the words OnAir's reasons are told by
# (``bot.errors.request_refused``): "already requested", "played recently", a limit with its
# minutes; any other is quoted.
_KNOWN = (
    ("already requested", "This song was already requested and will play soon."),
    ("played too recently", "This song or artist has been played too recently."),
)


def refusal_reason(message: object) -> str | None:
    """AzuraCast's message without its "Cannot submit request:" prefix, in the form whose
    meaning OnAir recognises; None when it gave none."""
    text = one_line(message, MAX_REASON * 2)
    if text.casefold().startswith(_PREFIX):
        text = text[len(_PREFIX) :].strip()
    folded = text.casefold()
    for needle, reason in _KNOWN:
        if needle in folded:
            return reason
    if any(words in folded for words in _OFF_WORDS):
        return "This station is not accepting requests."
    return one_line(text, MAX_REASON) or None


def _is_off(payload: Any) -> bool:
    message = c.mapping(payload).get("message")
    folded = message.casefold() if isinstance(message, str) else ""
    return any(words in folded for words in _OFF_WORDS)


def parse_requestable(payload: Any) -> SearchAnswer:
    """``Api_StationRequest`` rows (a bare list or a page's ``rows``)."""
    if isinstance(payload, Mapping):
        if payload.get("success") is False:
            if _is_off(payload):
                raise RequestsOff()
            return SearchAnswer((), refusal_reason(payload.get("message")) or "")
        payload = payload.get("rows")
    if not isinstance(payload, list):
        raise RequestsUnavailable()
    found: list[RequestTrack] = []
    seen: set[str] = set()
    for row in payload[: PAGE_ROWS * 4]:
        raw = c.mapping(row)
        ident = track_id(raw.get("request_id"))
        song = models.Song.parse(raw.get("song"))
        title = one_line(song.display, MAX_TITLE)
        if ident is None or not title or ident in seen:
            continue
        seen.add(ident)
        found.append(RequestTrack(ident, title))
    return SearchAnswer(tuple(found))


def parse_submitted(payload: Any) -> None:
    """Taken (``success: true``), else :class:`RequestRefused` with AzuraCast's reason."""
    if not isinstance(payload, Mapping):
        raise RequestsUnavailable()
    if payload.get("success") is True:
        return
    if payload.get("success") is False:
        raise RequestRefused(refusal_reason(payload.get("message")))
    raise RequestsUnavailable()


def parse_queue(payload: Any) -> tuple[QueuedSong, ...]:
    """``GET /api/station/{id}/queue`` (``Api_StationQueueDetailed``): what the AutoDJ has cued,
    soonest first; requests are flagged ``is_request``. None of it has played yet."""
    if not isinstance(payload, list):
        raise RequestsUnavailable()
    songs = []
    for row in payload[:50]:
        raw = c.mapping(row)
        title = one_line(models.Song.parse(raw.get("song")).display, MAX_TITLE)
        if title and c.boolean(raw.get("is_request")):
            songs.append(QueuedSong(title, False))
    return tuple(songs)


class AzuraCastRequests(RequestsClient):
    """The request endpoints of one AzuraCast station, on the injected shared session."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self._key:
            self._headers["X-API-Key"] = self._key

    def __repr__(self) -> str:
        return f"AzuraCastRequests({self.base_url!r}, {self.station_id!r})"

    async def search(self, query: str) -> SearchAnswer:
        text = " ".join(query.split())[:MAX_QUERY]
        params = {"searchPhrase": text, "rowCount": str(PAGE_ROWS), "current": "1"}
        status, payload = await self._call("GET", "requests", params)
        if status != 200 and not _is_off(payload):
            raise RequestsUnavailable()
        return parse_requestable(payload)

    async def request(self, track: str) -> None:
        ident = track_id(track)
        if ident is None:
            raise RequestRefused("This track is not requestable.")
        status, payload = await self._call("POST", f"request/{ident}", {})
        if status == 404:
            raise RequestRefused("This track is not requestable.")
        if status == 429:
            raise RequestRefused("Too many requests: please wait a minute.")
        kind = c.mapping(payload).get("type")
        if status >= 500 and kind not in _REFUSING:
            raise RequestsUnavailable()  # a fault, not a refusal
        parse_submitted(payload)

    async def queue(self, count: int = 20) -> tuple[QueuedSong, ...]:
        if not self._key:
            raise RequestsUnavailable()  # AzuraCast shows its queue to a key only
        status, payload = await self._call("GET", "queue", {})
        if status != 200:
            raise RequestsUnavailable()
        return parse_queue(payload)[: max(1, count)]

    async def state(self) -> tuple[str, int | None]:
        """On when the requestable list answers (the songs waiting are known with a key)."""
        try:
            await self.search("")
        except RequestsOff:
            return "off", None
        except StationError:
            return "unavailable", None
        try:
            return "on", len(await self.queue())
        except StationError:
            return "on", None

    # The one request function ------------------------------------------------------------

    def url(self, endpoint: str, params: Mapping[str, str]) -> URL:
        base = URL(f"{self.base_url}/api/station/{self.station_id}/{endpoint}")
        return base.with_query(dict(params)) if params else base

    async def _call(self, method: str, endpoint: str, params: Mapping[str, str]) -> tuple[int, Any]:
        """(status, JSON) of one call; RequestsUnavailable when nothing usable came back. An
        ``Api_Error`` body is returned with its status (a refusal is HTTP 500)."""
        url = self.url(endpoint, params)
        where = server_of(url)
        name = endpoint.split("/", 1)[0]
        self._check(url, name)
        cause: str
        try:
            async with self._session.request(
                method, url, timeout=self.timeout, headers=self._headers, allow_redirects=False
            ) as response:
                status = response.status
                body = await read_at_most(response, self.max_bytes)
        except TimeoutError:
            cause = "timeout"
        except (aiohttp.ClientError, OSError) as error:
            cause = type(error).__name__
        else:
            if body is None:
                cause = "answer too large"
            else:
                try:
                    payload = json.loads(body) if body.strip() else None
                except (ValueError, RecursionError):
                    payload = None
                if payload is not None and (status == 200 or isinstance(payload, Mapping)):
                    return status, payload
                cause = f"HTTP {status}" if status != 200 else "not JSON"
        _LOGGER.info("%s on %s failed: %s", name, where, cause)
        raise RequestsUnavailable()
