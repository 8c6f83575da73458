"""The bot's status line: "Listening to <artist - title>" of the station it plays in the most
guilds (or the default station). Presence is one status per shard; it is sent when the text
changes and at most once per ``PRESENCE_INTERVAL`` per shard (Discord rate-limits it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..render.text import one_line
from ..station import StationInfo
from .timers import Timers

PRESENCE_INTERVAL = 15.0
MAX_ACTIVITY = 128  # Discord's limit for an activity name


def presence_station(playing: Iterable[str], default: str) -> str:
    """The station played in the most guilds (ties: the default station, then by name), else
    the default station ("" for none)."""
    counts = Counter(playing)
    if not counts:
        return default
    return max(counts, key=lambda slug: (counts[slug], slug == default, slug))


def presence_text(info: StationInfo | None) -> str | None:
    """``artist - title`` on air as one plain line cut to Discord's limit (station text is
    untrusted: a longer name or a lone surrogate would make Discord or the JSON encoder refuse
    the whole presence); None for none."""
    play = info.current_play() if info is not None else None
    if play is None:
        return None
    return activity_name(play.display)


def activity_name(value: str) -> str | None:
    """One plain line of at most ``MAX_ACTIVITY`` characters, None when nothing is left."""
    return one_line(value, MAX_ACTIVITY) or None


class PresenceGate:
    """Per shard: the text last sent and when. ``due`` says whether to send ``text`` now."""

    def __init__(self, timers: Timers, interval: float = PRESENCE_INTERVAL) -> None:
        self.timers = timers
        self.interval = interval
        self._last: dict[int, tuple[str | None, float]] = {}

    def due(self, shard_id: int, text: str | None) -> bool:
        last = self._last.get(shard_id)
        if last is None:
            return text is not None
        sent_text, sent_at = last
        return text != sent_text and self.timers.now() - sent_at >= self.interval

    def sent(self, shard_id: int, text: str | None) -> None:
        self._last[shard_id] = (text, self.timers.now())

    def current(self, shard_id: int) -> str | None:
        last = self._last.get(shard_id)
        return last[0] if last else None
