"""Who else follows the announcer's watches, given to it whole when it is built."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from ..station import StationError, StationInfo
from .fanout import Credit
from .watcher import Announcement

# (the watch's stations, the poll's info or None, its error or None) -> the work it starts
PollObserver = Callable[
    [list[str], StationInfo | None, StationError | None], Coroutine[Any, Any, None]
]
# (a station's slug, its new play) -> the work it starts; told once per station, not per channel
ChangeListener = Callable[[str, Announcement], Coroutine[Any, Any, None]]
# The stations a service needs watched though no channel announces them
FollowedStations = Callable[[], Awaitable[set[str]]]


@dataclass(frozen=True)
class Followers:
    """The services that hang on the watches: the alerts and the shows judge each poll; the shows
    hear of each new play; alerts, recaps and shows name stations to watch beyond the announced
    ones; the requests name who asked for a play (decided where plays are fanned out, so every
    process of a fleet credits the same way)."""

    poll_observers: tuple[PollObserver, ...] = ()
    change_listeners: tuple[ChangeListener, ...] = ()
    followed: tuple[FollowedStations, ...] = ()
    credit: Credit | None = None

    async def followed_stations(self) -> set[str]:
        stations: set[str] = set()
        for followed in self.followed:
            stations |= await followed()
        return stations
