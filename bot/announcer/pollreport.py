"""What the owner's log says about a watched station that fails: a WARNING that names the station
as the owner configured it (its ``id``, e.g. ``main``) and the variable its key comes from, once
per cause; the same cause again is DEBUG; a changed cause is a new WARNING; the first good poll
after a failure is one INFO line. Never the watch's job id (a hash nobody can place) and never a
key: only the variable's name and the sanitised cause (no URL, no query)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from ..config import StationConfig
from ..station import StationAuthError, StationError
from ..station.errors import SanitisedCause

_LOGGER = logging.getLogger("onair.watch")


def station_label(stations: Sequence[StationConfig]) -> str:
    """``station main (key from ONAIR_KEY_MAIN)``; a guild's own station says whose it is."""
    if not stations:
        return "a station no longer configured"
    names = ", ".join(s.slug.split("-", 1)[1] if s.owner_guild else s.slug for s in stations)
    first = stations[0]
    noun = "stations" if len(stations) > 1 else "station"
    if first.owner_guild:
        where = f"added by guild {first.owner_guild}; its key is set with /onair station"
    elif first.key_env:
        where = f"key from {first.key_env}"
    else:
        where = "no key configured (key_env is empty)"
    return f"{noun} {names} ({where})"


def cause_of(error: StationError) -> str:
    """In words, for the owner: what failed (the sanitised low-level cause when there is one)."""
    if isinstance(error, StationAuthError):
        return "refused the API key: check the key in that variable"
    cause = error.__cause__
    detail = str(cause) if isinstance(cause, SanitisedCause) else ""
    kind = type(error).__name__.removeprefix("Station")
    words = {
        "Unavailable": "is not answering",
        "NotFound": "is unknown to its server (check station_id)",
        "Refused": "is not contacted (its address is not allowed)",
        "ResponseError": "sent an answer OnAir cannot read",
    }.get(kind, "failed")
    return f"{words} ({detail})" if detail else words


class PollReport:
    """One per watch: says a failure once per cause, and the recovery once."""

    def __init__(self, label: Callable[[], str]) -> None:
        self.label = label
        self._cause: str | None = None  # the cause last said; None while polls succeed
        self._failures = 0

    def failed(self, error: StationError, delay: float) -> None:
        cause = cause_of(error)
        self._failures += 1
        if cause == self._cause:
            _LOGGER.debug("%s: again (%s); next poll in %.0f s", self.label(), cause, delay)
            return
        self._cause = cause
        _LOGGER.warning("%s %s; polling again in %.0f s", self.label(), cause, delay)

    def succeeded(self) -> None:
        if self._cause is None:
            return
        _LOGGER.info(
            "%s answers again (after %d failed poll%s)",
            self.label(),
            self._failures,
            "" if self._failures == 1 else "s",
        )
        self._cause, self._failures = None, 0
