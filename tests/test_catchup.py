"""Plays that aired between two polls, recovered from ``recent`` (issue 27), on plain values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot.announcer import PlayDetector
from bot.announcer.catchup import aired_between
from bot.station import Play, StationInfo

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SHOW = "DJ Nova - Friday Night Live Mix"


def answer(at: float, recent: list[tuple[str, int | None]], **extra: Any) -> StationInfo:
    """The station at ``at`` s: ``recent`` newest first as (title, start in s past 13:00 by the
    station's clock, an hour off ours), the newest on air; its artwork id is its title."""
    body: dict[str, Any] = {
        "nowplaying": recent[0][0],
        "playback": {"pos": 1000, "len": 9000, "state": "play"},
        "links": {
            "artwork": "https://a.example/now.png",
            "artwork_recent": "https://a.example/ARTID.png",
        },
        "recent": [
            {"title": title, "artworkid": str(number)}
            | ({"started": f"2026-11-20 13:00:{start:02d}"} if start is not None else {})
            for number, (title, start) in enumerate(recent)
        ],
        **extra,
    }
    return StationInfo.parse(body, UTC, T0 + timedelta(seconds=at))


def current(info: StationInfo) -> Play:
    play = info.current_play()
    assert play is not None
    return play


def test_the_plays_between_the_last_seen_and_the_one_on_air_oldest_first():
    before = answer(1.0, [(SHOW, 0)])
    now = answer(21.0, [("A - Later", 19), ("A - Short", 15), ("A - Shorter", 12), (SHOW, 0)])
    found = aired_between(now, current(before), current(now))
    assert [play.display for play, _ in found] == ["A - Shorter", "A - Short"]
    shorter, view = found[0]
    # Each is what the station said of it: its start, its length up to the next start, what
    # came next, its own artwork (not the one of the play on air now).
    assert shorter.started == datetime(2026, 11, 20, 13, 0, 12, tzinfo=UTC)
    assert shorter.started_exact
    assert shorter.duration == timedelta(seconds=3)
    assert not shorter.live
    assert view.next_display == "A - Short"
    assert view.artwork == "https://a.example/2.png"
    assert view.current_play() == shorter


def test_nothing_is_recovered_without_a_place_to_begin_or_a_start_time():
    before = answer(1.0, [(SHOW, 0)])
    # The play seen last is not in the list: nothing says where the gap begins.
    far = answer(99.0, [("A - Later", 19), ("A - Short", 12)])
    assert aired_between(far, current(before), current(far)) == []
    # A play in between without a start: nothing tells a play from a flap.
    blind = answer(21.0, [("A - Later", 19), ("A - Short", None), (SHOW, 0)])
    assert aired_between(blind, current(before), current(blind)) == []
    # Nothing in between, or `recent` lagging behind what is on air: nothing.
    next_one = answer(13.0, [("A - Short", 12), (SHOW, 0)])
    assert aired_between(next_one, current(before), current(next_one)) == []
    lagging = answer(13.0, [(SHOW, 0)], nowplaying="A - Short")
    assert aired_between(lagging, current(before), current(lagging)) == []


def test_a_recovered_play_is_remembered_once_and_stays_off_air():
    detector = PlayDetector()
    before = answer(1.0, [(SHOW, 0)])
    assert detector.observe(before) is not None
    now = answer(21.0, [("A - Later", 19), ("A - Short", 12), (SHOW, 0)])
    assert detector.observe(now) is not None
    ((short, _),) = aired_between(now, current(before), current(now))
    assert detector.remember(short)
    assert not detector.remember(short)  # a second look finds it known
    assert detector.current == current(now)
    assert detector.observe(now) is None
