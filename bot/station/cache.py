"""Answers reused for a while, and identical concurrent calls sharing one upstream request
(single-flight), so a thousand concurrent ``/nowplaying`` commands make one request."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
Key = tuple[str, ...]


@dataclass(slots=True)
class _Entry:
    value: Any
    expires: float


class SharedAnswers:
    """A small TTL cache (at most ``size`` answers) with single-flight in front of it."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._cache: dict[Key, _Entry] = {}
        self._inflight: dict[Key, asyncio.Future[Any]] = {}

    def clear(self) -> None:
        self._cache.clear()

    def put(self, key: Key, value: Any, store_for: float) -> None:
        """Keep ``value`` as the answer under ``key`` (one a host pushed) for ``store_for``."""
        self._cache[key] = _Entry(value, time.monotonic() + store_for)

    async def get(
        self, key: Key, max_age: float, store_for: float, fetch: Callable[[], Awaitable[T]]
    ) -> T:
        """The answer stored under ``key`` if younger than ``max_age``, else the one being
        fetched (joined, not asked again), else ``fetch()``'s, kept for ``store_for``. A caller
        cancelled while waiting does not cancel the fetch the others share."""
        now = time.monotonic()
        entry = self._cache.get(key)
        if entry is not None and max_age > 0 and entry.expires - store_for + max_age > now:
            value: T = entry.value
            return value
        future = self._inflight.get(key)
        if future is None:
            future = asyncio.ensure_future(self._fill(key, store_for, fetch))
            self._inflight[key] = future
            future.add_done_callback(lambda done: self._settle(key, done))
        result: T = await asyncio.shield(future)
        return result

    async def _fill(self, key: Key, ttl: float, fetch: Callable[[], Awaitable[T]]) -> T:
        value = await fetch()
        self._cache[key] = _Entry(value, time.monotonic() + ttl)
        if len(self._cache) > self.size:
            oldest = min(self._cache, key=lambda k: self._cache[k].expires)
            del self._cache[oldest]
        return value

    def _settle(self, key: Key, done: asyncio.Future[Any]) -> None:
        self._inflight.pop(key, None)
        if not done.cancelled():
            done.exception()  # retrieved here so an error nobody awaited is not reported twice
