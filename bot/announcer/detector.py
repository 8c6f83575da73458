"""Decide which observations of a station are new plays (the announcer's "exactly once")."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

from ..station import Play, StationInfo
from ..station.play import normalise_title

PLACEHOLDER_TITLES = frozenset({"", "n/a", "na", "unknown", "-", "none", "null"})


def is_placeholder(play: Play) -> bool:
    return normalise_title(play.title) in PLACEHOLDER_TITLES


@dataclass(slots=True)
class _Seen:
    play: Play
    last_seen: float


class PlayDetector:
    """Remembers recent plays of one station and reports each new one once.

    A→B→A flaps (a station briefly reporting the previous item again) are not new plays: a play
    that matches one seen within ``flap_window`` seconds is ignored. With exact start times the
    same-play rule already tells a real replay from a flap; the window covers stations that send
    no start time at all.
    """

    def __init__(
        self, last: Play | None = None, *, memory: int = 8, flap_window: float = 180.0
    ) -> None:
        self.flap_window = flap_window
        self._seen: deque[_Seen] = deque(maxlen=memory)
        self.current: Play | None = last
        if last is not None:
            self._seen.append(_Seen(last, time.monotonic()))

    def observe(self, info: StationInfo) -> Play | None:
        """The play on air if it is new, else None."""
        play = info.current_play()
        if play is None or is_placeholder(play):
            return None
        return self.observe_play(play)

    def remember(self, play: Play, now: float | None = None) -> bool:
        """A play that aired before the one on air (recovered from ``recent``): True when it is
        new; it is remembered, and stays off air."""
        now = time.monotonic() if now is None else now
        if any(play.same_as(seen.play) for seen in self._seen):
            return False
        self._seen.append(_Seen(play, now))
        return True

    def observe_play(self, play: Play, now: float | None = None) -> Play | None:
        now = time.monotonic() if now is None else now
        for seen in self._seen:
            if play.same_as(seen.play) and (
                seen.play is self.current or now - seen.last_seen <= self.flap_window
            ):
                seen.last_seen = now
                if seen.play is self.current and play.started_exact and not seen.play.started_exact:
                    seen.play = play  # learn the exact start once the station reports it
                    self.current = play
                return None
        for seen in self._seen:
            if seen.play is self.current:
                seen.last_seen = now  # it stopped being on air just now
        self._seen.append(_Seen(play, now))
        self.current = play
        return play
