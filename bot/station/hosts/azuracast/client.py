"""AzuraCast as a station source: now playing, recent plays, artwork, the schedule, and each
change pushed the moment AzuraCast publishes it.

Polls read the static now-playing file nginx serves (``/api/nowplaying_static/<shortcode>.json``,
no PHP) when the server has it, else ``/api/nowplaying/<id>``. Pushes come through the
Centrifugo SSE endpoint AzuraCast (0.20 and later) puts at ``/api/live/nowplaying/sse``
(``util/docker/web/nginx/azuracast.conf.tmpl``), subscribed as its own player does
(``frontend/functions/useNowPlaying.ts``). Nothing here needs a key; one given travels in the
``X-API-Key`` header, never the URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

import aiohttp
from yarl import URL

from ...client import StationClient
from ...errors import (
    Problem,
    StationAuthError,
    StationError,
    StationNotFound,
    StationResponseError,
)
from ...failures import server_of
from ...info import Playback, StationInfo
from ...schedule import ScheduledShow
from ...source import Feature
from . import models

_LOGGER = logging.getLogger("onair.station.azuracast")

SSE_PATH = "api/live/nowplaying/sse"


class SseMissing(Exception):
    """The server has no push endpoint (404, or not an event stream): poll instead."""


class AzuraCastClient(StationClient):
    """One AzuraCast station, named by its shortcode or its number."""

    kind: ClassVar[str] = "azuracast"
    features: ClassVar[frozenset[Feature]] = frozenset(
        {Feature.RECENT, Feature.ARTWORK, Feature.REQUESTS, Feature.SCHEDULE, Feature.PUSH}
    )

    # Push stream: the connect and the longest silence (Centrifugo pings every 25 s), the
    # largest event, the reconnect backoff (doubling, jittered) and how long a server without
    # the endpoint is left alone before it is asked again (it may be upgraded).
    push_connect_timeout: float = 10.0
    push_read_timeout: float = 60.0
    push_max_event_bytes: int = 1024 * 1024
    push_backoff: tuple[float, float] = (1.0, 60.0)
    push_missing_retry: float = 900.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        ref = self.station_id
        self.shortcode: str | None = None if ref.isdigit() else ref
        # Whether the static now-playing file answers (None: not asked yet).
        self.static_file: bool | None = None
        self.push_connects = 0  # push connections made (tests and `onair check` read it)

    def _auth_query(self) -> dict[str, str]:
        return {}

    def _auth_headers(self) -> dict[str, str]:
        return {"X-API-Key": self._key} if self._key else {}

    def _checked(self, payload: Any) -> Any:
        """AzuraCast answers an object or a list; an error is ``Api_Error``
        (``{"code", "type", "message", ..., "success": false}``)."""
        if isinstance(payload, list):
            return payload
        if not isinstance(payload, dict):
            raise StationResponseError(Problem.NOT_OBJECT)
        if payload.get("success") is False and "code" in payload:
            code = payload.get("code")
            if code == 404:
                raise StationNotFound()
            if code in (401, 403):
                raise StationAuthError()
            raise StationResponseError(Problem.ERROR_ANSWER)
        return payload

    # Now playing -------------------------------------------------------------------------

    def _build(self, payload: Any, *, static: bool) -> StationInfo:
        fetched = self.fetched_now()
        info = models.now_playing(payload, fetched)
        found = models.shortcode(payload)
        if found and self.shortcode is None:
            self.shortcode = found
        if static:
            info = _elapsed_now(info, fetched)
        return info

    async def _info(self) -> StationInfo:
        if self.shortcode and self.static_file is not False:
            try:
                info = await self._request(
                    f"api/nowplaying_static/{self.shortcode}.json",
                    build=lambda payload: self._build(payload, static=True),
                )
            except (StationNotFound, StationResponseError):
                if self.static_file:
                    raise
                self.static_file = False  # no static file here: the API answers
            else:
                self.static_file = True
                return info
        return await self._request(
            f"api/nowplaying/{self.station_id}",
            build=lambda payload: self._build(payload, static=False),
        )

    # The schedule ------------------------------------------------------------------------

    async def _schedule(self, start: datetime, end: datetime) -> tuple[ScheduledShow, ...]:
        """Every slot between ``start`` and ``end``: the schedule's calendar form
        (``GET /api/station/{id}/schedule?start=&end=``, ``ScheduleAction`` with a date range,
        which AzuraCast caches for 10 minutes); its upcoming form reaches a day ahead only."""

        def stamp(moment: datetime) -> str:
            return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

        query = {"start": stamp(start), "end": stamp(end)}
        return await self._request(
            f"api/station/{self.station_id}/schedule", query, build=models.schedule
        )

    # Pushes ------------------------------------------------------------------------------

    def push_url(self) -> URL:
        channel = f"station:{self.shortcode}"
        subs = json.dumps({"subs": {channel: {"recover": True}}}, separators=(",", ":"))
        return URL(f"{self.base_url}/{SSE_PATH}").with_query({"cf_connect": subs})

    async def changes(self) -> AsyncIterator[StationInfo | None]:
        """Each now-playing AzuraCast publishes, as it is published. Reconnects with backoff;
        a server without the endpoint is polled and asked again after a long while."""
        low, high = self.push_backoff
        delay = low
        try:
            while True:
                if self.shortcode is None:
                    with contextlib.suppress(StationError):
                        await self.info(max_age=0)  # the channel is named by the shortcode
                if self.shortcode is not None:
                    try:
                        async for info in self._stream():
                            delay = low
                            yield info
                    except SseMissing:
                        self.push_live = False
                        where = server_of(URL(self.base_url))
                        _LOGGER.info("%s has no now-playing push; polling", where)
                        await asyncio.sleep(self.push_missing_retry)
                        continue
                    except (aiohttp.ClientError, OSError, TimeoutError, StationError) as error:
                        _LOGGER.debug("now-playing push of %s ended: %s", self.base_url, error)
                self.push_live = False
                await asyncio.sleep(delay * random.uniform(0.75, 1.25))
                delay = min(high, delay * 2)
        finally:
            self.push_live = False

    async def _stream(self) -> AsyncIterator[StationInfo]:
        """One SSE connection: the connect reply's last publication, then each publication."""
        if self._session is None:
            self._session = aiohttp.ClientSession()
            self._own_session = True
        url = self.push_url()
        if self.url_guard is not None:
            why = self._refusal(self.url_guard, url)
            if why is not None:
                raise SseMissing(str(why))
        timeout = aiohttp.ClientTimeout(
            total=None, connect=self.push_connect_timeout, sock_read=self.push_read_timeout
        )
        headers = {**self._headers, "Accept": "text/event-stream", **self._auth_headers()}
        channel = f"station:{self.shortcode}"
        async with self._session.get(
            url, timeout=timeout, headers=headers, allow_redirects=False
        ) as response:
            kind = response.headers.get("Content-Type", "")
            if response.status in (404, 405, 410) or (
                response.status == 200 and not kind.startswith("text/event-stream")
            ):
                raise SseMissing(f"HTTP {response.status} {kind[:40]}")
            if response.status != 200:
                raise StationResponseError(Problem.REJECTED, status=response.status)
            self.push_connects += 1
            self.push_live = True
            async for data in _events(response, self.push_max_event_bytes):
                for payload in models.pushed_payloads(data, channel):
                    try:
                        info = self._build(payload, static=False)
                    except (StationError, ValueError, ArithmeticError, RecursionError):
                        continue
                    self.pushed(info)
                    yield info
        self.push_live = False


async def _events(response: aiohttp.ClientResponse, limit: int) -> AsyncIterator[str]:
    """The ``data`` of each server-sent event; an event past ``limit`` bytes ends the stream
    (its end cannot be trusted), a half-sent one at the end is dropped. Each chunk is split
    once (linear in what arrives, however short its lines), and every line counts towards
    the bound, comments and other fields too: a flood of them is no cheaper than data."""
    pending = bytearray()  # the line begun and not ended yet
    data: list[bytes] = []
    size = 0
    async for chunk in response.content.iter_any():
        pending += chunk
        if len(pending) > limit:
            raise StationResponseError(Problem.TOO_LARGE)
        if b"\n" not in chunk:
            continue
        *lines, rest = bytes(pending).split(b"\n")
        pending = bytearray(rest)
        for raw in lines:
            line = raw.rstrip(b"\r")
            if not line:
                if data:
                    yield b"\n".join(data).decode("utf-8", "replace")
                data, size = [], 0
                continue
            size += len(line)
            if size > limit:
                raise StationResponseError(Problem.TOO_LARGE)
            if line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)


def _elapsed_now(info: StationInfo, fetched: datetime) -> StationInfo:
    """The static file's ``elapsed`` is as old as the file: the position again from the
    play's exact start, as AzuraCast's own player computes it."""
    head = info.recent[0] if info.recent else None
    if head is None or head.started is None or info.playback is None:
        return info
    position = max(timedelta(0), fetched - head.started)
    length = info.playback.length
    if length is not None:
        position = min(position, length)
    return replace(info, playback=Playback(position=position, length=length))
