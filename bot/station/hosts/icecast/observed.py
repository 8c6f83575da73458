"""A mount's info whose play start is the moment OnAir saw its title replace another."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...info import StationInfo
from ...play import Play


@dataclass(frozen=True, slots=True)
class IcecastInfo(StationInfo):
    """``playback.position`` counts from the moment OnAir saw this title replace another (on
    the ICY stream or between two polls). The client holds that moment for the whole play, so
    every observation of the play carries the very same start: it is compared to the second
    (``started_exact``), and a claim key is not rounded to five minutes, where a title aired
    again three minutes later (a live show back after an advert) would share the first
    play's key and never be posted."""

    def current_play(self) -> Play | None:
        play = StationInfo.current_play(self)
        if play is None or play.started is None:
            return play
        return dataclasses.replace(play, started_exact=True)
