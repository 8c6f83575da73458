"""Plays that aired between two polls, recovered from the station's ``recent`` list.

A poll comes once the play before has ended; when an item shorter than the gap between two
polls aired in between (a short track after a live show of unknown length, whose end nothing
predicts), the poll finds the item after it. ``recent`` (newest first, each with its start by
the station's clock) still lists it: each such play is recovered, with the answer as it was
while it was on air (its start, its length up to the next start, what came next, its artwork),
so it is recorded and announced like any other, late and marked as no longer on air.
"""

from __future__ import annotations

from dataclasses import replace

from ..station import Play, Playback, StationInfo

SCANNED = 10  # recent entries looked at (public widgets show 10; station text is untrusted)


def as_aired(info: StationInfo, index: int) -> StationInfo:
    """``info`` as it would have been while ``info.recent[index]`` was on air: that entry is
    the play on air (title, start), its length runs to the next entry's start, the next entry
    is what comes next, and the artwork is the entry's own."""
    entry = info.recent[index]
    newer = info.recent[index - 1] if index > 0 else None
    length = None
    if newer is not None and newer.started is not None and entry.started is not None:
        ran = newer.started - entry.started
        length = ran if ran.total_seconds() > 0 else None
    artist, title = entry.artist_and_title
    cast = entry.title or (f"{artist} - {title}" if artist else title)
    return replace(
        info,
        now_playing=cast,
        autodj_title=None,
        live=False,
        playback=Playback(length=length) if length is not None else None,
        current=None,
        next_title=newer.title if newer is not None else None,
        next_track=None,
        previous_track=None,
        recent=info.recent[index:],
        links=replace(info.links, artwork=None, artwork_next=None),
    )


def aired_between(
    info: StationInfo, previous: Play, current: Play
) -> list[tuple[Play, StationInfo]]:
    """The plays ``info.recent`` lists after ``previous`` (the play on air at the poll before)
    and before ``current`` (the new play on air now), oldest first, each with :func:`as_aired`.

    Empty when ``previous`` is not among the first entries with the start it was seen with
    (nothing then says where the gap begins) or an entry up to it has no start (nothing tells
    a flap from a play)."""
    found: list[tuple[Play, StationInfo]] = []
    for index in range(min(len(info.recent), SCANNED)):
        view = as_aired(info, index)
        play = view.current_play()
        if play is None or info.recent[index].started is None:
            return []
        if play.same_as(previous):
            return found[::-1]
        if index == 0 and play.same_as(current):
            continue  # the play on air now
        found.append((play, view))
    return []
