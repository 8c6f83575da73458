"""Song searches shared by everyone: one upstream search serves every user and guild typing
the same thing.

Per station and normalised query an answer is cached (about a minute); identical searches in
flight share one request; at most N searches a second go to one station, each taking a token
from ``tokens`` (the storage's ``take_search_token``: counted once for a whole fleet; in memory
by default). Only a keystroke that really needs an upstream search asks for a token, so one
the cache serves costs no round trip; the token is asked for inside the search's single
flight, so identical keystrokes share one token. A keystroke is first answered from a broader
cached answer filtered here (a query each of whose words lies inside a word typed: "harb" or
"lanterns" for "harbour lights by the lanterns"): without an upstream search at all when that
answer is known complete (fewer tracks than the station has answered at once, so no cap cut
it), else when the rate is spent. An autocomplete must answer within Discord's 3 s: past the
rate, or past its wait, it answers from such an answer or with nothing, and a search already
sent still fills the cache for the next keystroke.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from ..station import (
    RequestTrack,
    SearchAnswer,
    StationError,
    normalise_title,
)
from ..station.errors import RequestsUnavailable
from ..storage.search_tokens import MemoryTokens
from .fairness import FairShare, Party

MIN_QUERY = 3  # characters before a search is worth sending (what public clients do)
MAX_KEY = 100
# Characters of titles and ids the cache holds, all stations: an answer may hold 100 tracks of
# 300 characters (a guild's own station can answer every search so), so a bound on answers
# alone let one station's answers take ~350 MB. Ordinary answers (20 tracks of ~50) fill the
# answer bound first.
MAX_CHARS = 8_000_000
FAILURE_TTL = 5.0  # a failed search is not asked again for this long (a failing station)
Clock = Callable[[], float]
Fetch = Callable[[], Awaitable[SearchAnswer]]
# Takes one of a station's search tokens: False when the rate is spent (or storage could not
# say in time: never a search more than allowed).
TokenSource = Callable[[str], Awaitable[bool]]
# Whether the one a search would be sent for may have it (asked only when one is to be sent).
Gate = Callable[[], Awaitable[bool]]
RETRY_STEP = 0.25  # seconds a patient search (a /request) waits between asks for a token


def query_key(text: str) -> str:
    """What makes two searches the same: case, width and spacing folded, bounded."""
    return normalise_title(text[: MAX_KEY * 2])[:MAX_KEY]


@dataclass(frozen=True, slots=True)
class Found:
    """Tracks for a query; ``source``: upstream, cache, prefix (a broader query's answer
    filtered), limited (rate or wait exceeded, nothing cached) or failed."""

    tracks: tuple[RequestTrack, ...]
    source: str


class _Limited(Exception):
    """The station's searches for this window are spent: nothing was sent."""


class SearchDesk:
    """The shared cache, single flight and per-station rate of searches."""

    def __init__(
        self,
        rate: float,
        *,
        ttl: float = 60.0,
        max_entries: int = 5000,
        max_chars: int = MAX_CHARS,
        clock: Clock = time.monotonic,
        tokens: TokenSource | None = None,
        fair: FairShare | None = None,
    ) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._chars = 0  # what the cached answers hold (see MAX_CHARS)
        self.clock = clock
        self._answers: OrderedDict[tuple[str, str], tuple[float, tuple[RequestTrack, ...]]] = (
            OrderedDict()
        )
        self._inflight: dict[tuple[str, str], asyncio.Task[tuple[RequestTrack, ...]]] = {}
        if tokens is None:
            memory = MemoryTokens(clock)

            async def tokens(station: str) -> bool:
                return memory.take(station, rate)

        self._tokens = tokens
        self.fair = fair or FairShare(rate, clock=clock)
        self._failed_until: dict[tuple[str, str], float] = {}
        # Per station, the most tracks one answer has held: an answer with fewer was not cut
        # by a cap of the station's (whatever it is), so filtering it loses nothing.
        self._most: dict[str, int] = {}
        self.upstream = 0  # searches sent, all stations (the benchmark reports it)
        self.failed = 0
        self.answered: Counter[str] = Counter()  # answers by source (the benchmark reports it)

    def cached(self, station: str, key: str) -> tuple[RequestTrack, ...] | None:
        entry = self._answers.get((station, key))
        if entry is None or entry[0] < self.clock():
            return None
        self._answers.move_to_end((station, key))
        return entry[1]

    def _store(self, station: str, key: str, tracks: tuple[RequestTrack, ...], ttl: float) -> None:
        replaced = self._answers.pop((station, key), None)
        if replaced is not None:
            self._chars -= _size(replaced[1])
        self._answers[(station, key)] = (self.clock() + ttl, tracks)
        self._chars += _size(tracks)
        while len(self._answers) > self.max_entries or (
            self._chars > self.max_chars and len(self._answers) > 1
        ):
            self._chars -= _size(self._answers.popitem(last=False)[1][1])

    def from_prefix(self, station: str, key: str) -> tuple[RequestTrack, ...] | None:
        """The best broader cached answer, filtered to the titles holding every word typed
        (what a search-as-you-type station answers anyway); None when none is cached."""
        found = self._broader(station, key)
        return None if found is None else found[0]

    def _broader(self, station: str, key: str) -> tuple[tuple[RequestTrack, ...], bool] | None:
        """(filtered tracks, complete) of the most specific cached query every title matching
        ``key`` also matches: a shorter prefix of ``key``, or a start of one of its words.
        Complete: that answer held fewer tracks than the station's biggest, so no cap cut it."""
        best: tuple[RequestTrack, ...] | None = None
        for broader in _broader_keys(key):
            tracks = self.cached(station, broader)
            if tracks is not None and (best is None or len(tracks) < len(best)):
                best = tracks
        if best is None:
            return None
        words = key.split()
        kept = tuple(t for t in best if all(w in normalise_title(t.title) for w in words))
        return kept, len(best) < self._most.get(station, 0)

    async def take(self, station: str, party: Party | None) -> bool:
        """One call to ``station`` a listener causes (a search, its queue, a request): within
        ``party``'s fair share (:class:`FairShare`; None: a call no listener caused), then one
        of the station's tokens. False: nothing may be sent now."""
        if party is not None and not self.fair.admit(station, party):
            return False
        return await self._tokens(station)

    async def take_within(self, station: str, party: Party | None, wait: float) -> bool:
        """:meth:`take`, asked again every ``RETRY_STEP`` for up to ``wait`` seconds (a
        command that has deferred waits for the next window rather than failing)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + wait
        while not await self.take(station, party):
            if loop.time() + RETRY_STEP > until:
                return False
            await asyncio.sleep(RETRY_STEP)
        return True

    async def search(
        self,
        station: str,
        text: str,
        fetch: Fetch,
        *,
        wait: float,
        patient: bool = False,
        party: Party | None = None,
        gate: Gate | None = None,
    ) -> Found:
        found = await self._search(
            station, text, fetch, wait=wait, patient=patient, party=party, gate=gate
        )
        self.answered[found.source] += 1
        return found

    async def _search(
        self,
        station: str,
        text: str,
        fetch: Fetch,
        *,
        wait: float,
        patient: bool = False,
        party: Party | None = None,
        gate: Gate | None = None,
    ) -> Found:
        """Tracks for ``text``. ``wait``: how long to wait for upstream before answering from
        what is cached; ``patient``: wait for the rate too (a request, not a keystroke). A
        failure raises only when ``patient`` (the command says why); else nothing is found.
        ``party`` (guild, user): whose fair share a search sent upstream is taken from;
        ``gate``: whether that party may have a search sent at all (asked only then)."""
        key = query_key(text)
        if len(key) < MIN_QUERY:
            return Found((), "short")
        cached = self.cached(station, key)
        if cached is not None:
            return Found(cached, "cache")
        task = self._inflight.get((station, key))
        if task is None and not patient:
            broader = self._broader(station, key)
            if broader is not None and broader[1]:
                return Found(broader[0], "prefix")  # complete: no search needed
        if (
            task is None
            and not patient
            and self._failed_until.get((station, key), 0) > self.clock()
        ):
            return self._fallback(station, key, "failed")
        if task is None:
            task = self._start(station, key, fetch, party, gate)
        loop = asyncio.get_running_loop()
        began = loop.time()
        try:
            tracks = await asyncio.wait_for(asyncio.shield(task), timeout=wait)
        except _Limited:
            left = wait - (loop.time() - began)
            if not patient:
                return await self._shared_prefix(station, key, max(0.0, left))
            if left <= RETRY_STEP:  # no token all along (storage down or slow): not "no match"
                raise RequestsUnavailable() from None
            await asyncio.sleep(RETRY_STEP)  # a /request waits for the next window's token
            return await self._search(
                station, text, fetch, wait=left - RETRY_STEP, patient=True, party=party, gate=gate
            )
        except TimeoutError:
            if patient:
                raise RequestsUnavailable() from None
            return self._fallback(station, key, "limited")
        except StationError:
            if patient:
                raise
            return Found((), "failed")
        return Found(tracks, "upstream")

    async def _shared_prefix(self, station: str, key: str, wait: float) -> Found:
        """Past the rate: a shorter query's answer, cached or on its way (waited for within
        ``wait``, a search already sent), filtered to what was typed; else nothing."""
        found = self._fallback(station, key, "limited")
        if found.source == "prefix":
            return found
        pending = next(
            (
                task
                for end in range(len(key) - 1, MIN_QUERY - 1, -1)
                if (task := self._inflight.get((station, key[:end].rstrip()))) is not None
            ),
            None,
        )
        if pending is None:
            return found
        try:
            await asyncio.wait_for(asyncio.shield(pending), timeout=wait)
        except (TimeoutError, StationError, _Limited):
            return found
        return self._fallback(station, key, "limited")

    def _fallback(self, station: str, key: str, source: str) -> Found:
        tracks = self.from_prefix(station, key)
        return Found(tracks, "prefix") if tracks is not None else Found((), source)

    def _start(
        self, station: str, key: str, fetch: Fetch, party: Party | None, gate: Gate | None
    ) -> asyncio.Task[tuple[RequestTrack, ...]]:
        async def run() -> tuple[RequestTrack, ...]:
            try:
                if gate is not None and not await gate():
                    raise _Limited()
                if not await self.take(station, party):
                    raise _Limited()
                self.upstream += 1
                answer = await fetch()
            except StationError:
                self.failed += 1
                if len(self._failed_until) > self.max_entries:
                    self._failed_until.clear()
                self._failed_until[(station, key)] = self.clock() + FAILURE_TTL
                raise
            finally:
                self._inflight.pop((station, key), None)
            self._store(station, key, answer.tracks, self.ttl)
            self._most[station] = max(self._most.get(station, 0), len(answer.tracks))
            return answer.tracks

        task = asyncio.get_running_loop().create_task(run())
        task.add_done_callback(_consume)
        self._inflight[(station, key)] = task
        return task


def _size(tracks: tuple[RequestTrack, ...]) -> int:
    return sum(len(track.id) + len(track.title) for track in tracks)


def _broader_keys(key: str) -> list[str]:
    """Queries whose answers hold every answer to ``key``, if the station matches each word
    of a query inside a title: ``key``'s shorter prefixes, and the starts (3+ characters) of
    its other words, the longest first."""
    found = [key[:end].rstrip() for end in range(len(key) - 1, MIN_QUERY - 1, -1)]
    for word in key.split()[1:]:
        found += [word[:end] for end in range(len(word), MIN_QUERY - 1, -1)]
    return list(dict.fromkeys(k for k in found if len(k) >= MIN_QUERY))


def _consume(task: asyncio.Task[tuple[RequestTrack, ...]]) -> None:
    """Nobody may be waiting any more: the failure is known (cached), not "never retrieved"."""
    if not task.cancelled():
        with contextlib.suppress(BaseException):
            task.exception()
