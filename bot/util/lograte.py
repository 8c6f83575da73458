"""A log line for something that may happen many times a minute: each one counted, the line
said at most once per interval with how many happened since the last one (none is lost: the
next line includes them)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

Say = Callable[[int, int], None]  # (how many since the last line, how many in all)


class CountedLine:
    """``count`` from any thread; ``flush`` says what is pending once the interval is over
    (call it now and then: a burst's tail is said without waiting for the next event)."""

    def __init__(
        self, say: Say, *, every: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._say = say
        self.every = every
        self._clock = clock
        self._lock = threading.Lock()
        self._last: float | None = None
        self.pending = 0
        self.total = 0

    def count(self) -> None:
        with self._lock:
            self.pending += 1
            self.total += 1
        self.flush()

    def flush(self) -> None:
        with self._lock:
            now = self._clock()
            if not self.pending or (self._last is not None and now - self._last < self.every):
                return
            said, total = self.pending, self.total
            self.pending, self._last = 0, now
        self._say(said, total)
