"""Search tokens: at most N song searches a second go to one station, whichever process asks.

The rule is a fixed window per station: time is cut into windows of ``max(1, 1/N)`` seconds
and each window holds ``max(1, floor(N * window))`` tokens (N = 2: two a second; N = 0.5: one
every two seconds). A single process (SQLite: a second ``onair run`` on the same file is
refused) counts in memory: no database round trip. A fleet (PostgreSQL) counts in one
``search_tokens`` row per station, taken by one statement (``INSERT ... ON CONFLICT ... DO
UPDATE ... WHERE``): the row lock makes concurrent takers queue, and each re-reads the count
the one before it left, so two processes never both take the last token. The database's clock
is the one clock, so hosts whose clocks disagree still share one window.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

MEMORY_STATIONS = 10_000  # stations a process remembers windows for (each is ~100 bytes)


def token_window(per_second: float) -> tuple[float, int]:
    """(window seconds, tokens per window) for ``per_second`` searches a second."""
    window = max(1.0, 1.0 / per_second)
    return window, max(1, math.floor(per_second * window + 1e-9))


def window_start(now: float, window: float) -> float:
    return math.floor(now / window) * window


class MemoryTokens:
    """The same window rule in one process's memory (SQLite, and a desk with no storage)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._windows: dict[str, tuple[float, int]] = {}  # station: (window start, taken)

    def take(self, station: str, per_second: float, *, at: float | None = None) -> bool:
        window, tokens = token_window(per_second)
        start = window_start(self.clock() if at is None else at, window)
        known, taken = self._windows.get(station, (start, 0))
        if known > start or (known == start and taken >= tokens):
            return False  # spent (or a window ahead of this clock: refused, as in SQL)
        if len(self._windows) >= MEMORY_STATIONS and station not in self._windows:
            self._windows.clear()  # a bounded memory; forgetting only frees tokens early
        self._windows[station] = (start, taken + 1 if known == start else 1)
        return True


# One statement: a row per station (created by the first take); the update happens, and a row
# comes back, only while the row's window is this one with tokens left, or an older one. A row
# whose window is ahead of this statement's clock (another taker's statement started later
# and committed first) refuses: never more than the window's tokens. $1 station, $2 tokens per
# window, $3 window seconds, $4 the time to use (NULL: the database's clock; tests set it).
TAKE_TOKEN_SQL = """
WITH now AS (
    SELECT floor(COALESCE($4::float8, EXTRACT(EPOCH FROM clock_timestamp())) / $3::float8)
        * $3::float8 AS start
)
INSERT INTO search_tokens (station, window_start, taken)
SELECT $1, start, 1 FROM now
ON CONFLICT (station) DO UPDATE SET
    taken = CASE WHEN search_tokens.window_start = excluded.window_start
        THEN search_tokens.taken + 1 ELSE 1 END,
    window_start = excluded.window_start
WHERE search_tokens.window_start < excluded.window_start
    OR (search_tokens.window_start = excluded.window_start AND search_tokens.taken < $2)
RETURNING taken
"""
