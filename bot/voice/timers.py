"""Timers behind a small interface, so the voice logic's waits are deterministic in tests.

The service asks a :class:`Timers` to call it back later (empty-channel leaves) and reads the
time from it (presence rate limit). :class:`LoopTimers` is the event loop's; tests drive a
:class:`ManualTimers` by hand (``advance``) instead of sleeping.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol


class Cancellable(Protocol):
    def cancel(self) -> None: ...


class Timers(Protocol):
    def now(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable: ...


class LoopTimers:
    """The running event loop's clock and ``call_later``."""

    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        return asyncio.get_running_loop().call_later(delay, callback)


class _Manual:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualTimers:
    """A clock that moves only when told to; due callbacks run in ``advance``, in time order."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._queue: list[tuple[float, int, _Manual, Callable[[], None]]] = []
        self._order = itertools.count()

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Cancellable:
        handle = _Manual()
        heapq.heappush(self._queue, (self._now + delay, next(self._order), handle, callback))
        return handle

    @property
    def pending(self) -> int:
        return sum(not entry[2].cancelled for entry in self._queue)

    def advance(self, seconds: float) -> None:
        until = self._now + seconds
        while self._queue and self._queue[0][0] <= until:
            when, _, handle, callback = heapq.heappop(self._queue)
            self._now = when
            if not handle.cancelled:
                callback()
        self._now = until
