"""When to poll a station next: predictive while a track plays, backoff on failure."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from ..config import PollSettings as PollSettings  # re-exported: where the policy is read
from ..station import StationInfo


class PollPolicy:
    """Computes the delay before the next poll of one station.

    While a track with known position and length plays, the next poll is due at its expected
    end plus a margin. The margin learns from the station: how late a change became visible
    after the predicted end (the new play's ``started`` against the predicted end) and the
    request latency. If nothing changed yet, it re-polls at short, growing steps.
    """

    def __init__(self, settings: PollSettings | None = None, *, rng: random.Random | None = None):
        self.settings = settings or PollSettings()
        self._rng = rng or random.Random()
        self.expected_end: datetime | None = None
        self.offset = 0.0  # learned: change time minus predicted end (seconds, may be negative)
        self.latency = 0.1  # learned: request round trip (seconds)
        self._misses = 0
        self.failures = 0

    # Learning ---------------------------------------------------------------------------

    def learn_latency(self, seconds: float) -> None:
        self.latency = 0.8 * self.latency + 0.2 * max(0.0, min(seconds, 10.0))

    def learn_change(self, started: datetime | None) -> None:
        """A new play began at ``started``: compare with what was predicted."""
        if started is None or self.expected_end is None:
            return
        # ``started`` has whole seconds: the true start lies in [started, started + 1).
        error = (started - self.expected_end).total_seconds() + 0.5
        if abs(error) < 1.0:
            error = 0.0  # within the clock's precision: nothing to learn
        if -60 < error < 60:
            self.offset = 0.7 * self.offset + 0.3 * error

    # Deciding ---------------------------------------------------------------------------

    def after_success(self, info: StationInfo) -> float:
        """Delay after a poll that got an answer (changed or not)."""
        self.failures = 0
        s = self.settings
        playback = info.playback
        if info.is_live or playback is None or playback.length is None or playback.position is None:
            self.expected_end = None
            self._misses = 0
            return self._clamp(s.steady_interval * self._rng.uniform(0.9, 1.1))
        remaining = (playback.length - playback.position).total_seconds()
        self.expected_end = info.fetched_at + timedelta(seconds=remaining)
        until_change = remaining + self.offset
        if until_change > s.max_interval:
            # Poll in between, never so close to the end that the end poll breaks min_interval.
            self._misses = 0
            return self._clamp(min(s.max_interval, until_change - s.min_interval))
        if until_change > 0:
            self._misses = 0
            delay = until_change + s.margin + self.latency / 2 + self._rng.uniform(0, 0.05)
            return self._clamp(delay)
        # Past the predicted end and still the same play: short, growing steps.
        self._misses += 1
        return self._clamp(s.min_interval * 1.5 ** (self._misses - 1))

    def after_failure(self) -> float:
        self.failures += 1
        s = self.settings
        delay: float = s.failure_base * 2.0 ** (self.failures - 1)
        return min(s.max_backoff, delay) * self._rng.uniform(0.75, 1.25)

    @property
    def unreachable(self) -> bool:
        return self.failures >= self.settings.breaker_threshold

    def _clamp(self, delay: float) -> float:
        s = self.settings
        return max(s.min_interval, min(s.max_interval, delay))
