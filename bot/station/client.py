"""HTTP client of the station API, in the style of python-radios.

One private :meth:`StationClient._request` carries every call: timeout, size cap, retries within a
time budget, errors translated by ``failures``. Above it sit ``cache``'s TTL cache and
single-flight, so a thousand concurrent ``/nowplaying`` commands make one upstream request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any, ClassVar, TypeVar

import aiohttp
from yarl import URL

from ..util.bodies import read_at_most
from .cache import SharedAnswers
from .errors import (
    AddressRefused,
    NotOffered,
    Problem,
    SanitisedCause,
    StationError,
    StationNotFound,
    StationRefused,
    StationResponseError,
    StationUnavailable,
)
from .failures import (
    Retry,
    body_error,
    connection_error,
    retry_after_seconds,
    server_of,
    status_error,
)
from .info import StationInfo
from .parsing import ParseMemo
from .playlist import Playlist
from .redact import redact
from .schedule import ScheduledShow
from .source import Feature
from .stats import Stats

_LOGGER = logging.getLogger("onair.station")
T = TypeVar("T")

PLAYLIST_PATHS = ("api/getplaylist/{id}", "api/info/getplaylist/{id}")
# Answers larger than this are decoded and turned into models in a worker thread: a 2 MiB
# answer that changes every poll takes ~200 ms to parse, too long to hold the event loop.
INLINE_PARSE_BYTES = 256 * 1024
SCHEDULE_AHEAD = timedelta(days=7)  # how far ahead ``schedule`` reads by default


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """At most ``tries`` attempts with jittered exponential backoff inside ``budget`` seconds."""

    tries: int = 3
    base_delay: float = 0.3
    max_delay: float = 4.0
    budget: float = 20.0


@dataclass(frozen=True, slots=True)
class CacheTimes:
    """How long answers are reused, in seconds."""

    info: float = 5.0
    playlist: float = 10.0
    stats_current: float = 60.0
    stats_past: float = 3600.0
    schedule: float = 60.0


class StationClient:
    """Read-only client of one station. Shares the injected session; closes only its own.

    This class is RadioBOSS Cloud's source and every other host's base: a host overrides
    ``kind``, ``features``, ``_info`` (and ``_playlist``, ``_stats`` when it has them),
    ``_auth_query``/``_auth_headers`` for its key, ``_decode`` for its answers' shape and, for a
    host that pushes its changes, ``changes``. Everything else (the one request function, the
    cache, the guards, the error translation) is shared.
    """

    kind: ClassVar[str] = "radioboss"
    features: ClassVar[frozenset[Feature]] = frozenset(
        {Feature.PLAYLIST, Feature.STATS, Feature.RECENT, Feature.ARTWORK, Feature.REQUESTS}
    )

    # Which playlist path answered, per base URL (the vendor documents one and uses the other).
    _playlist_path_by_base: ClassVar[dict[str, str]] = {}

    def __init__(
        self,
        base_url: str,
        station_id: int | str,
        key: str | None = None,
        *,
        session: aiohttp.ClientSession | None = None,
        timeout: aiohttp.ClientTimeout | None = None,
        retry: RetryPolicy | None = None,
        cache: CacheTimes | None = None,
        max_bytes: int = 2 * 1024 * 1024,
        zone: tzinfo = UTC,
        user_agent: str = "OnAir/0.1 (+https://github.com/onair-bot)",
        redirect_guard: Callable[[URL], None] | None = None,
        url_guard: Callable[[URL], None] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # When an answer was fetched (``StationInfo.fetched_at``): unix seconds; a test on a
        # simulator's manual clock passes that clock, so positions and fetch times agree.
        self.clock = clock
        self.station_id = str(station_id).strip()
        self._key = key or None
        self._session = session
        self._own_session = session is None
        self.timeout = timeout or aiohttp.ClientTimeout(total=10, connect=5)
        self.retry = retry or RetryPolicy()
        self.cache_times = cache or CacheTimes()
        self.max_bytes = max_bytes
        self.zone = zone
        self._headers = {"User-Agent": user_agent, "Accept": "application/json"}
        self._answers = SharedAnswers()
        self.last_info: StationInfo | None = None
        self._parse_memo: ParseMemo = {}
        # When set, redirects are followed by hand and each target must pass the guard.
        self.redirect_guard = redirect_guard
        # When set, checked before every request (a stored station meets today's policy).
        self.url_guard = url_guard
        self.last_latency: float | None = None
        # Which thread parsed the last answer (the loop's for small ones, a worker's for large).
        self.last_parse_thread: int | None = None
        # Whether the host's push stream is connected now (hosts with ``Feature.PUSH``): the
        # watch then polls only as a safety net.
        self.push_live = False
        # The owner's choice (``push = false``): a pushing host polled only, no stream held.
        self.push_enabled = True
        # Offered each info this client returns (the play history records every poll's plays).
        self.on_info: Callable[[StationInfo], Awaitable[None]] | None = None

    def __repr__(self) -> str:
        key = "***" if self._key else None
        return f"{type(self).__name__}({self.base_url!r}, {self.station_id!r}, key={key})"

    def offers(self, feature: Feature) -> bool:
        """Whether this station's host has ``feature`` (a command lacking it is not offered);
        push only while the owner has not turned it off."""
        if feature is Feature.PUSH and not self.push_enabled:
            return False
        return feature in self.features

    @property
    def identity(self) -> tuple[str, str, str]:
        """What makes two clients the same upstream station (the key is part of it, unseen)."""
        return (self.base_url, self.station_id, self._key or "")

    @property
    def session(self) -> aiohttp.ClientSession | None:
        """The session in use: the injected one, else the client's own (None before its first
        call and after ``close``)."""
        return self._session

    def forget_cached(self) -> None:
        """Drop the cached answers, so the next call of each kind asks the station (``last_info``
        stays: a failing station still shows its last known state)."""
        self._answers.clear()

    @classmethod
    def forget_playlist_path(cls, base_url: str) -> None:
        """Forget which playlist path this server answered on; the next playlist call learns it
        again (a server that was moved or upgraded)."""
        cls._playlist_path_by_base.pop(base_url.rstrip("/"), None)

    async def close(self) -> None:
        if self._own_session and self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> StationClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # Public API -------------------------------------------------------------------------

    async def info(self, *, max_age: float | None = None) -> StationInfo:
        """Now-playing state. ``max_age=0`` asks upstream (still single-flight with others)."""
        ttl = self.cache_times.info if max_age is None else max_age
        info: StationInfo = await self._answers.get(
            ("info",), ttl, self.cache_times.info, self._timed_info
        )
        await self.offer(info)
        return info

    async def offer(self, info: StationInfo) -> None:
        """Hand ``info`` (polled or pushed) to ``on_info``, the play history's recorder."""
        if self.on_info is not None:
            await self.on_info(info)

    async def playlist(self) -> Playlist:
        self._require(Feature.PLAYLIST)
        playlist: Playlist = await self._answers.get(
            ("playlist",), self.cache_times.playlist, self.cache_times.playlist, self._playlist
        )
        return playlist

    async def stats(self, date_from: date, date_to: date) -> Stats:
        self._require(Feature.STATS)
        today = datetime.now(self.zone).date()
        ttl = self.cache_times.stats_past if date_to < today else self.cache_times.stats_current
        key = ("stats", date_from.isoformat(), date_to.isoformat())

        async def fetch() -> Stats:
            return await self._stats(date_from, date_to)

        stats: Stats = await self._answers.get(key, ttl, ttl, fetch)
        return stats

    async def schedule(self, *, within: timedelta = SCHEDULE_AHEAD) -> tuple[ScheduledShow, ...]:
        """The shows on the host's schedule from now until ``within`` ahead (ongoing ones
        included), soonest first; ``NotOffered`` unless the host has ``Feature.SCHEDULE``."""
        self._require(Feature.SCHEDULE)
        now = self.fetched_now()
        ttl = self.cache_times.schedule

        async def fetch() -> tuple[ScheduledShow, ...]:
            shows = await self._schedule(now, now + within)
            return tuple(s for s in shows if (s.end or s.start) >= now)

        shows: tuple[ScheduledShow, ...] = await self._answers.get(
            ("schedule", str(int(within.total_seconds()))), ttl, ttl, fetch
        )
        return shows

    def changes(self) -> AsyncIterator[StationInfo | None]:
        """For a host with ``Feature.PUSH``: each change the host tells of, as it happens (the
        new info when the host sends it, None when it only says that something changed). Runs
        until cancelled, reconnecting by itself; the watch polls as usual meanwhile. Hosts
        without push have no changes to tell."""
        return _no_changes()

    def pushed(self, info: StationInfo) -> None:
        """Keep ``info``, which the host pushed, as the latest answer (``info()`` returns it
        while it is fresh, so a command right after a push asks nobody)."""
        self.last_info = info
        self._answers.put(("info",), info, self.cache_times.info)

    def forget_observed(self) -> None:
        """Forget what this client learned by watching (a host that tells no start times:
        when OnAir saw each title begin). Called when this process takes a station's watch
        over: what its commands saw meanwhile, late, must not become a play's start."""

    def _require(self, feature: Feature) -> None:
        if feature not in self.features:
            raise NotOffered(what=feature.value, kind=self.kind)

    # Fetchers: what a host overrides ----------------------------------------------------

    def fetched_now(self) -> datetime:
        """When an answer arriving now was fetched (``StationInfo.fetched_at``)."""
        return datetime.fromtimestamp(self.clock(), UTC)

    async def _timed_info(self) -> StationInfo:
        started = time.monotonic()
        info = await self._info()
        self.last_latency = time.monotonic() - started
        self.last_info = info
        return info

    async def _info(self) -> StationInfo:
        def build(payload: Any) -> StationInfo:
            return StationInfo.parse(payload, self.zone, self.fetched_now(), memo=self._parse_memo)

        return await self._request(f"api/info/{self.station_id}", build=build)

    async def _schedule(self, start: datetime, end: datetime) -> tuple[ScheduledShow, ...]:
        raise NotOffered(what=Feature.SCHEDULE.value, kind=self.kind)

    async def _stats(self, date_from: date, date_to: date) -> Stats:
        return await self._request(
            f"api/getstats/{self.station_id}",
            {"from": date_from.isoformat(), "to": date_to.isoformat()},
            build=Stats.parse,
        )

    async def _playlist(self) -> Playlist:
        known = self._playlist_path_by_base.get(self.base_url)
        order = [known] if known else []
        order += [path for path in PLAYLIST_PATHS if path != known]
        for path in order:
            try:
                playlist = await self._request(
                    path.format(id=self.station_id),
                    build=lambda payload: Playlist.parse(payload, self.zone, datetime.now(UTC)),
                )
            except StationNotFound:
                continue
            self._playlist_path_by_base[self.base_url] = path
            return playlist
        raise StationNotFound(Problem.NO_PLAYLIST)

    # The one request function ------------------------------------------------------------

    def _auth_query(self) -> dict[str, str]:
        """The key as the host wants it in the query (RadioBOSS: ``key``)."""
        return {"key": self._key} if self._key else {}

    def _auth_headers(self) -> dict[str, str]:
        """The key as the host wants it in a header (none for RadioBOSS)."""
        return {}

    def _url(self, path: str, params: Mapping[str, str] | None) -> URL:
        query = dict(params or {})
        query.update(self._auth_query())
        return URL(f"{self.base_url}/{path}").with_query(query)

    def _describe(self, url: URL) -> str:
        return redact(str(url), self._key)

    async def _request(
        self,
        path: str,
        params: Mapping[str, str] | None = None,
        *,
        build: Callable[[Any], T],
    ) -> T:
        """GET one endpoint and return ``build`` of its JSON, or raise a :class:`StationError`
        that names the server and the cause for staff (``server``, ``cause``)."""
        try:
            return await self._get(path, params, build=build)
        except StationError as error:
            if not error.server:
                error.server = server_of(URL(self.base_url))
            if not error.cause and isinstance(error.__cause__, SanitisedCause):
                error.cause = str(error.__cause__)
            raise

    async def _get(
        self,
        path: str,
        params: Mapping[str, str] | None = None,
        *,
        build: Callable[[Any], T],
    ) -> T:
        if self._session is None:
            self._session = aiohttp.ClientSession()
            self._own_session = True
        url = self._url(path, params)
        if self.url_guard is not None:
            why = self._refusal(self.url_guard, url)
            if why is not None:
                _LOGGER.info(
                    "GET %s refused: %s", self._describe(url), str(why) or type(why).__name__
                )
                raise StationRefused(Problem.NO_LONGER_CONTACTED, why=why)
        policy = self.retry
        deadline = time.monotonic() + policy.budget
        attempt = 0
        while True:
            attempt += 1
            remaining = deadline - time.monotonic()
            try:
                body = await self._attempt(url, remaining)
            except Retry as retry:
                failure = retry
            else:
                return await self._parse(body, build)
            remaining = deadline - time.monotonic()
            if failure.retry_after is not None:
                delay = failure.retry_after
            else:
                delay = min(policy.max_delay, policy.base_delay * 2 ** (attempt - 1))
                delay *= random.uniform(0.5, 1.5)
            if attempt >= policy.tries or delay >= remaining:
                # DEBUG: the watch says a failing station once per cause (WARNING), and a
                # command's user is told; this line would repeat at every poll.
                _LOGGER.debug("GET %s failed: %s", self._describe(url), failure.cause)
                error = failure.error
                if isinstance(error, StationUnavailable) and error.retry_after is None:
                    error.retry_after = failure.retry_after
                raise error from SanitisedCause(failure.cause)
            _LOGGER.debug(
                "GET %s: %s; retrying in %.2fs", self._describe(url), failure.cause, delay
            )
            await asyncio.sleep(delay)

    async def _attempt(self, url: URL, remaining: float) -> bytes:
        """One try: the body of a 2xx answer. Low-level errors are described, never chained:
        they carry the URL."""
        assert self._session is not None
        total = self.timeout.total or remaining
        # One deadline for the try, redirects included: a hop does not get a fresh timeout.
        deadline = time.monotonic() + max(0.01, min(total, remaining))
        failure: str
        named: StationUnavailable | None = None
        guard = self.redirect_guard or self.url_guard
        home = URL(self.base_url).origin()
        try:
            # Redirects are followed by hand, each target checked by the guard (when there is
            # one), and the key goes only to the station's own origin: aiohttp would carry a
            # header key (AzuraCast's X-API-Key) to whatever host a redirect names.
            for _hop in range(4):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                timeout = aiohttp.ClientTimeout(
                    total=left,
                    connect=self.timeout.connect,
                    sock_connect=self.timeout.sock_connect,
                    sock_read=self.timeout.sock_read,
                )
                headers = self._headers
                if url.origin() == home:
                    headers = {**headers, **self._auth_headers()}
                async with self._session.get(
                    url, timeout=timeout, headers=headers, allow_redirects=False
                ) as response:
                    status = response.status
                    if 200 <= status < 300:
                        return await self._read_capped(response)
                    retry_after = retry_after_seconds(response.headers)
                    location = response.headers.get("Location")
                if status not in (301, 302, 303, 307, 308) or not location:
                    break
                why: Exception | str | None
                try:
                    url = url.join(URL(location))
                    why = self._refusal(guard, url) if guard is not None else None
                except (ValueError, UnicodeError):  # a Location no URL parser accepts
                    why = "the redirect target is not a valid URL"
                if why is not None:
                    _LOGGER.info("redirect to %s refused: %s", self._describe(url), why)
                    raise StationRefused(Problem.REDIRECT_REFUSED)
            else:
                raise StationResponseError(Problem.TOO_MANY_REDIRECTS)
        except StationError:
            raise
        except TimeoutError:
            failure = "timeout"
        except (aiohttp.ClientError, OSError) as exc:
            failure = type(exc).__name__
            if isinstance(exc, aiohttp.ClientConnectorError) and isinstance(
                exc.os_error, AddressRefused
            ):
                failure = "address refused"
            named = connection_error(exc, url)
        else:
            status_error(status, retry_after)
        # Outside the except block, so nothing below carries aiohttp's error as __context__.
        if failure == "address refused":
            _LOGGER.info("GET %s refused: internal addresses only", self._describe(url))
            raise StationRefused(Problem.INTERNAL_ADDRESS, server=server_of(url))
        if failure == "timeout":
            raise Retry(StationUnavailable(Problem.TIMEOUT, server=server_of(url)), failure)
        raise Retry(named or StationUnavailable(), failure)

    @staticmethod
    def _refusal(guard: Callable[[URL], None], url: URL) -> Exception | None:
        """Why the guard refuses ``url`` (its message names the host, never the query), without
        its traceback (whose frames hold the URL and its key)."""
        try:
            guard(url)
        except Exception as error:
            return error.with_traceback(None)
        return None

    async def _read_capped(self, response: aiohttp.ClientResponse) -> bytes:
        """Read at most ``max_bytes``: a larger body is refused as it streams in."""
        if response.content_length is not None and response.content_length > self.max_bytes:
            raise StationResponseError(Problem.TOO_LARGE)
        body = await read_at_most(response, self.max_bytes)
        if body is None:
            raise StationResponseError(Problem.TOO_LARGE)
        return body

    async def _parse(self, body: bytes, build: Callable[[Any], T]) -> T:
        """Decode and build models: inline for small answers, in a worker thread for large."""
        if len(body) > INLINE_PARSE_BYTES:
            return await asyncio.to_thread(self._decode_and_build, body, build)
        return self._decode_and_build(body, build)

    def _decode_and_build(self, body: bytes, build: Callable[[Any], T]) -> T:
        self.last_parse_thread = threading.get_ident()
        payload = self._decode(body)
        try:
            return build(payload)
        except (ValueError, ArithmeticError, RecursionError):
            # The coercions read hostile values as unknowns; this is the net beneath them.
            raise StationResponseError(Problem.BAD_VALUES) from None

    def _decode(self, body: bytes) -> Any:
        """The answer's JSON, checked for the host (``_checked``); a host whose answers are not
        JSON overrides this."""
        if not body.strip():
            raise StationResponseError(Problem.EMPTY)
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            raise StationResponseError(Problem.NOT_JSON) from None
        return self._checked(payload)

    def _checked(self, payload: Any) -> Any:
        """RadioBOSS answers an object, or an error message in its place; a host with other
        shapes or error bodies overrides this."""
        error = body_error(payload)
        if error is not None:
            raise error
        if not isinstance(payload, dict):
            raise StationResponseError(Problem.NOT_OBJECT)
        return payload


async def _no_changes() -> AsyncIterator[StationInfo | None]:
    return
    yield  # an async generator that ends at once
