"""When each playlist item plays: the playlist put in time order, with the day resolved.

The station lists its playlist in playlist order, and ``STARTTIME`` is a clock time with no date,
so a list that crosses midnight (or wraps round the end of the playlist) cannot be shown in the
order it arrives. Played items (``TRACK_PLAYED``) lie before the item on air; upcoming items are
the other ones after it in playlist order (then, wrapping round, the ones before it), and a
``STARTTIME`` earlier than the previous upcoming one is on the next day. Used by ``/playlist``
and ``onair check`` alike; imports nothing from discord.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo

from ..station import Play, Playlist, PlaylistItem
from ..station.play import normalise_title


@dataclass(frozen=True, slots=True)
class Slot:
    """One playlist item with its state and when it plays (``None`` when the station gave no
    ``STARTTIME``)."""

    item: PlaylistItem
    state: str  # played | playing | upcoming
    at: datetime | None = None


def playing_index(items: Sequence[PlaylistItem], current: Play | None, now: datetime) -> int | None:
    """The item on air: the first not-played item titled like the current play, else the one
    whose start and length span ``now``."""
    if current is not None and current.title:
        wanted = normalise_title(current.title)
        for index, item in enumerate(items):
            if not item.played and item.title and normalise_title(item.title) == wanted:
                return index
    for index, item in enumerate(items):
        if (
            item.starts_at
            and item.duration
            and item.starts_at <= now < item.starts_at + item.duration
        ):
            return index
    return None


def _on_or_before(clock: time, pivot: datetime) -> datetime:
    """``clock`` on the pivot's day, or the day before when that would be after the pivot."""
    moment = datetime.combine(pivot.date(), clock, tzinfo=pivot.tzinfo)
    return moment - timedelta(days=1) if moment > pivot else moment


def _on_or_after(clock: time, previous: datetime) -> datetime:
    """``clock`` on the previous item's day, or the next day when it is earlier."""
    moment = datetime.combine(previous.date(), clock, tzinfo=previous.tzinfo)
    return moment + timedelta(days=1) if moment < previous else moment


def timeline(playlist: Playlist, current: Play | None, now: datetime, zone: tzinfo) -> list[Slot]:
    """Every item once, in the order it plays: played, the one on air, then upcoming."""
    items = playlist.items
    on_air = playing_index(items, current, now)
    local_now = now.astimezone(zone)
    if on_air is not None:
        after = range(on_air + 1, len(items))
        before = range(0, on_air)
    else:  # nothing matched: upcoming starts after the last played item in playlist order
        last_played = max((i for i, item in enumerate(items) if item.played), default=-1)
        after = range(last_played + 1, len(items))
        before = range(0, last_played + 1)
    upcoming = [i for i in (*after, *before) if not items[i].played and i != on_air]
    # Anchor: the item on air (else the first upcoming one) is placed nearest to now.
    anchor_index = on_air if on_air is not None else (upcoming[0] if upcoming else None)
    anchor_item = items[anchor_index] if anchor_index is not None else None
    anchor = (
        anchor_item.starts_at.astimezone(zone)
        if anchor_item is not None and anchor_item.starts_at is not None
        else local_now
    )

    played: list[Slot] = []
    for index, item in enumerate(items):
        if item.played and index != on_air:
            at = _on_or_before(item.start_time, anchor) if item.start_time else None
            played.append(Slot(item, "played", at))
    played.sort(key=lambda slot: (slot.at is not None, slot.at or anchor))

    slots = played
    if on_air is not None:
        slots.append(Slot(items[on_air], "playing", anchor if items[on_air].start_time else None))
    previous = anchor
    for index in upcoming:
        item = items[index]
        when: datetime | None = None
        if item.start_time is not None:
            when = anchor if index == anchor_index else _on_or_after(item.start_time, previous)
            previous = when
        slots.append(Slot(item, "upcoming", when))
    return slots
