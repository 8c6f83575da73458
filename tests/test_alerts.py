"""Live and offline alerts and the weekly recap on plain values: which alerts a sequence of polls
makes (flapping makes none), that every evaluation names an event alike, and the recap's slot
and summary."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.scheduled.alerts import Observation, evaluate
from bot.scheduled.recap import last_slot, summarise, week_before
from bot.scheduled.recap_service import recap_key
from bot.station import StationInfo
from bot.storage import AlertState, WeekPlay

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
AFTER = 120.0


def info(
    title: str = "A - B",
    *,
    live: bool = False,
    state: str = "play",
    at: datetime = T0,
    pos: int = 1000,
    started: str = "",
) -> StationInfo:
    """What the station answers at ``at``, ``pos`` ms into the item on air (which started at
    ``started`` by the station's recent list, when given)."""
    raw: dict[str, object] = {
        "nowplaying": title,
        "live": live,
        "playback": {"pos": pos, "len": 0, "state": state},
    }
    if started:
        raw["recent"] = [{"title": title, "started": started}]
    return StationInfo.parse(raw, UTC, at)


def run(polls: list[tuple[float, Observation]], state: AlertState | None = None):  # type: ignore[no-untyped-def]
    state = state or AlertState()
    events = []
    for at, seen in polls:
        state, new = evaluate(state, seen, at, AFTER)
        events += new
    return state, events


UP = Observation(info())
FAILED = Observation(None, "the station is not answering")
STOPPED = Observation(info(state="stop"))


def test_flapping_within_the_window_posts_nothing():
    polls = [(0, UP), (10, FAILED), (60, FAILED), (119, UP), (130, STOPPED), (200, UP)]
    state, events = run(polls)
    assert events == []
    assert state.down_since is None


def test_down_after_the_window_then_back_with_how_long():
    _, events = run([(0, UP), (10, FAILED), (100, FAILED), (131, FAILED), (400, UP)])
    assert [e.kind for e in events] == ["down", "back"]
    down, back = events
    assert down.since == 10
    assert down.at == 131
    assert down.reason == "the station is not answering"
    assert back.since == 10
    assert back.at - back.since == 390
    assert down.key == "down|10.000"
    assert back.key == "back|10.000"


def test_an_outage_seen_only_at_its_ends_still_says_it_is_back():
    """Failures back off: a poll may not fall between offline_after and the recovery."""
    _, events = run([(0, STOPPED), (300, UP)])
    assert [e.kind for e in events] == ["back"]
    assert events[0].since == 0


def test_not_playing_counts_as_down():
    _, events = run([(0, STOPPED), (130, STOPPED)])
    assert [(e.kind, e.reason) for e in events] == [("down", "nothing is playing")]


def test_a_repeated_evaluation_from_the_stored_state_decides_nothing_again():
    """A restart, or another process taking the station over, starts from the stored state."""
    state, events = run([(0, FAILED), (130, FAILED)])
    assert len(events) == 1
    state, again = run([(140, FAILED), (150, FAILED)], state)
    assert again == []
    _, back = run([(160, UP)], state)
    assert [e.key for e in back] == ["back|0.000"]


def test_live_show_start_and_end_once_each_and_next_weeks_airing_is_new():
    show = Observation(info("DJ Nova - Night Shift", live=True))
    state, events = run([(0, UP), (10, show), (20, show), (3600, UP)])
    assert [(e.kind, e.title) for e in events] == [
        ("live_start", "DJ Nova - Night Shift"),
        ("live_end", "DJ Nova - Night Shift"),
    ]
    start, end = events
    assert end.since == 10
    week = timedelta(days=7)
    again = Observation(info("DJ Nova - Night Shift", live=True, at=T0 + week))
    _, next_week = run([(week.total_seconds(), again)], state)
    assert next_week[0].kind == "live_start"
    assert next_week[0].key != start.key  # the same show a week later is a new airing


def test_processes_seeing_a_show_start_at_their_own_times_name_it_alike():
    """A watch handed over mid-poll: two processes evaluate the same show's start from the same
    stored state, each at its own time and from its own poll; the alert's key is the same (the
    show and its start as the station reports them), so the outbox records one."""
    show, started = "DJ Nova - Night Shift", "2026-11-23 11:59:59"
    here = Observation(info(show, live=True, started=started))
    later = T0 + timedelta(seconds=2)
    there = Observation(info(show, live=True, at=later, pos=3000, started=started))
    _, first = run([(10, here)])
    _, second = run([(12.5, there)])
    assert [e.kind for e in first] == [e.kind for e in second] == ["live_start"]
    assert first[0].key == second[0].key


def test_an_undated_show_is_named_by_when_it_was_first_seen():
    """Without a start from the station the same show next week has the same play key: its
    airing is then told apart by when it was first seen (stored with the state)."""
    show = Observation(info("DJ Nova - Night Shift", live=True))
    state, first = run([(10, show), (20, UP)])
    _, again = run([(7 * 86400, show)], state)
    assert first[0].key == "live_start|10.000|dj nova|night shift||"
    assert again[0].key != first[0].key


def test_a_failed_poll_during_a_show_does_not_end_it():
    show = Observation(info("DJ Nova - Night Shift", live=True))
    _, events = run([(0, show), (10, FAILED), (20, show)])
    assert [e.kind for e in events] == ["live_start"]


NOTHING = Observation(info(""))  # the station answers, with no title at all


@pytest.mark.parametrize("dated", [True, False], ids=["start_times", "no_start_times"])
def test_one_poll_blips_mid_show_neither_end_it_nor_start_it_again(dated: bool):
    """Four one-poll blips in one show (stopped, nothing, no answer, stopped): one start, one
    end, whether or not the station dates the show (issue 27: undated, each blip pinged the
    role again; dated, each posted another "Live show ended")."""
    started = "2026-11-23 11:59:59" if dated else ""
    show = Observation(info("DJ Nova - Night Shift", live=True, started=started))
    polls = [(0.0, UP), (10.0, show)]
    for number, blip in enumerate([STOPPED, NOTHING, FAILED, STOPPED]):
        at = 20.0 + number * 40
        polls += [(at, blip), (at + 10, show), (at + 20, show)]
    polls += [(3600.0, UP)]
    state, events = run(polls)
    assert [(e.kind, e.title) for e in events] == [
        ("live_start", "DJ Nova - Night Shift"),
        ("live_end", "DJ Nova - Night Shift"),
    ]
    assert events[1].since == 10
    assert events[1].at == 3600
    assert state.down_since is None


@pytest.mark.parametrize("blip", [STOPPED, NOTHING, FAILED], ids=["stopped", "nothing", "failed"])
def test_a_show_ends_with_an_outage_that_lasts_offline_after(blip: Observation):
    """Down for offline_after during a show: the show ended when the outage began, posted with
    the down alert; the same airing (dated) coming back is not announced or ended again."""
    show = Observation(info("DJ Nova - Night Shift", live=True, started="2026-11-23 11:59:59"))
    polls = [(0.0, show), (10.0, blip), (60.0, blip), (131.0, blip), (400.0, show)]
    state, events = run([*polls, (500.0, show), (900.0, UP)])
    assert [e.kind for e in events] == ["live_start", "live_end", "down", "back"]
    end = events[1]
    assert (end.since, end.at) == (0, 10)  # the show lasted until the outage began
    assert state.live_key == ""


def test_an_undated_show_back_after_a_long_outage_is_a_new_airing():
    """Without a start from the station nothing tells the same airing from a new one: as with
    its Scheduled Event, the show back after an outage that ended it is announced again."""
    show = Observation(info("DJ Nova - Night Shift", live=True))
    _, events = run([(0.0, show), (10.0, STOPPED), (131.0, STOPPED), (400.0, show)])
    assert [e.kind for e in events] == ["live_start", "live_end", "down", "back", "live_start"]
    assert events[0].key != events[-1].key


def test_one_show_following_another_ends_the_first():
    first = Observation(info("DJ Nova - Night Shift", live=True))
    second = Observation(info("Morning Crew - Wake Up", live=True))
    _, events = run([(0, first), (50, second)])
    assert [(e.kind, e.title) for e in events] == [
        ("live_start", "DJ Nova - Night Shift"),
        ("live_end", "DJ Nova - Night Shift"),
        ("live_start", "Morning Crew - Wake Up"),
    ]


BERLIN = ZoneInfo("Europe/Berlin")


def test_last_slot_is_the_latest_chosen_weekday_and_hour_on_the_guilds_clock():
    # Wednesday 2026-11-25 10:30 in Berlin (09:30 UTC)
    now = datetime(2026, 11, 25, 9, 30, tzinfo=UTC)
    assert last_slot(now, BERLIN, 2, 10) == datetime(2026, 11, 25, 10, tzinfo=BERLIN)
    assert last_slot(now, BERLIN, 2, 11) == datetime(2026, 11, 18, 11, tzinfo=BERLIN)
    assert last_slot(now, BERLIN, 0, 9) == datetime(2026, 11, 23, 9, tzinfo=BERLIN)
    assert last_slot(now, UTC, 2, 9) == datetime(2026, 11, 25, 9, tzinfo=UTC)


def test_a_recap_is_keyed_by_the_guilds_week_whatever_its_zone_says_of_the_hour():
    now = datetime(2026, 11, 25, 23, 30, tzinfo=UTC)  # Wednesday night in UTC and New York
    new_york = ZoneInfo("America/New_York")
    berlin = last_slot(now, BERLIN, 2, 18)  # Wednesday 18:00 Berlin (17:00 UTC)
    there = last_slot(now, new_york, 2, 18)  # Wednesday 18:00 New York (23:00 UTC)
    assert berlin != there
    assert recap_key(7, berlin) == recap_key(7, there) == "recap|7|2026-W48"
    # Monday 00:00 in Tokyo is Sunday 15:00 UTC: the guild's week 49, not UTC's week 48.
    tokyo = last_slot(datetime(2026, 11, 30, 12, tzinfo=UTC), ZoneInfo("Asia/Tokyo"), 0, 0)
    assert tokyo.astimezone(UTC) == datetime(2026, 11, 29, 15, tzinfo=UTC)
    assert recap_key(7, tokyo) == "recap|7|2026-W49"


def test_the_recap_week_spans_seven_wall_clock_days_across_a_dst_change():
    slot = datetime(2026, 10, 28, 9, tzinfo=BERLIN)  # summer time ended on 25 October
    start, end = week_before(slot)
    assert start.astimezone(BERLIN) == datetime(2026, 10, 21, 9, tzinfo=BERLIN)
    assert (end - start) == timedelta(days=7, hours=1)


def test_summary_counts_tracks_shows_peak_and_busiest_hour():
    def play(hours: float, title: str, listeners: int | None, *, live: bool = False) -> WeekPlay:
        return WeekPlay(T0 + timedelta(hours=hours), title, "Artist", listeners, live)

    plays = [
        play(0, "One", 10),
        play(1, "Two", 20),
        play(2, "One", 30),
        play(2.5, "one", 50),  # the same track, however it is cased
        play(26, "Show", 90, live=True),
        play(27, "Two", None),
    ]
    summary = summarise(
        plays, [], station_name="Main FM", start=T0, end=T0 + timedelta(days=7), zone=BERLIN
    )
    # Title and artist apart, so the recap's rows are drawn as /top's.
    assert summary["played"] == [["One", "Artist", 3], ["Two", "Artist", 2]]
    assert summary["live"] == [["Show", "Artist", 1]]
    assert summary["peak"] == [90, (T0 + timedelta(hours=26)).timestamp()]
    # Tuesday 15:00 in Berlin (14:00 UTC the next day) has the one play with 90 listening
    assert summary["busiest"] == [1, 15, 90]
    assert summary["liked"] == []
    assert summary["plays"] == 6
