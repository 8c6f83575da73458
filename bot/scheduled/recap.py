"""The weekly recap on plain values: when its slot is, and what the week's plays add up to."""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import Any

from ..station.play import normalise_title
from ..storage import WeekPlay

TOP = 5  # tracks and shows listed


def last_slot(now: datetime, zone: tzinfo, weekday: int, hour: int) -> datetime:
    """The latest moment at or before ``now`` that is ``weekday`` (0 = Monday) at ``hour`` on
    the guild's wall clock (a slot in a skipped DST hour falls where the zone puts it)."""
    local = now.astimezone(zone)
    day = local.date() - timedelta(days=(local.weekday() - weekday) % 7)
    slot = datetime.combine(day, time(hour), tzinfo=zone)
    if slot > now:
        slot = datetime.combine(day - timedelta(days=7), time(hour), tzinfo=zone)
    return slot


def week_before(slot: datetime) -> tuple[datetime, datetime]:
    """[start, end) of the week a slot sums up, in UTC: seven wall-clock days back."""
    start = (slot.replace(tzinfo=None) - timedelta(days=7)).replace(tzinfo=slot.tzinfo)
    return start.astimezone(UTC), slot.astimezone(UTC)


def summarise(
    plays: Sequence[WeekPlay],
    liked: Sequence[tuple[str, str | None, int]],
    *,
    station_name: str,
    start: datetime,
    end: datetime,
    zone: tzinfo,
) -> dict[str, Any]:
    """What the recap shows, as JSON-ready values (stored with the post, so a resumed post
    draws the same numbers): most played (live shows apart), most liked, peak listeners and
    when, the live shows, and the busiest hour (highest mean listener count at play starts,
    on the guild's wall clock)."""
    played: Counter[str] = Counter()
    names: dict[str, tuple[str, str | None]] = {}  # (title, artist) as first seen
    shows: Counter[str] = Counter()
    show_names: dict[str, tuple[str, str | None]] = {}
    hours: defaultdict[tuple[int, int], list[int]] = defaultdict(list)
    peak: tuple[int, float] | None = None
    keys: dict[str, str] = {}  # a week repeats its tracks: each title is normalised once
    for play in plays:
        display = f"{play.artist} - {play.title}" if play.artist else play.title
        key = keys.get(display)
        if key is None:
            key = keys[display] = normalise_title(display)
        if play.live:
            shows[key] += 1
            show_names.setdefault(key, (play.title, play.artist))
        else:
            played[key] += 1
            names.setdefault(key, (play.title, play.artist))
        if play.listeners is not None:
            if peak is None or play.listeners > peak[0]:
                peak = (play.listeners, play.started.timestamp())
            local = play.started.astimezone(zone)
            hours[(local.weekday(), local.hour)].append(play.listeners)
    busiest = None
    if hours:
        (day, hour), counts = max(
            hours.items(), key=lambda item: (sum(item[1]) / len(item[1]), -item[0][0], -item[0][1])
        )
        busiest = [day, hour, round(sum(counts) / len(counts))]
    return {
        "station_name": station_name,
        "start": start.timestamp(),
        "end": end.timestamp(),
        "plays": len(plays),
        # Rows of [title, artist, count] (one stored by an older OnAir holds [display, count]).
        "played": [[*names[k], n] for k, n in _top(played)],
        "liked": [[title, artist, count] for title, artist, count in list(liked)[:TOP]],
        "peak": list(peak) if peak else None,
        "live": [[*show_names[k], n] for k, n in _top(shows)],
        "busiest": busiest,
        "zone": str(zone),
    }


def _top(counts: Counter[str]) -> list[tuple[str, int]]:
    """The most counted, ties by name (the same order in every process); without sorting a
    week's thousands of titles."""
    return heapq.nsmallest(TOP, counts.items(), key=lambda item: (-item[1], item[0]))
