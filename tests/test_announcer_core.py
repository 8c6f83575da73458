"""Change detection and poll scheduling against the simulator, driven by a manual clock."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest

from bot.announcer import Announcement, PlayDetector, PollPolicy, PollSettings, StationWatch
from bot.simulator import LIVE_SHOW, TRACKS, ManualClock
from bot.simulator.library import JINGLES
from bot.station import Play, RetryPolicy, StationClient, StationInfo

from .support.stations import KEY, ONE_OF_EACH, programme_simulator

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def play(title: str, minute: int | None = None, exact: bool = True) -> Play:
    started = T0 + timedelta(minutes=minute) if minute is not None else None
    return Play(title, "Artist", started=started, started_exact=exact and started is not None)


def test_detector_reports_each_play_once_and_replays_as_new():
    detector = PlayDetector()
    assert detector.observe_play(play("A", 0), now=0) is not None
    assert detector.observe_play(play("A", 0), now=5) is None
    assert detector.observe_play(play("B", 3), now=180) is not None
    assert detector.observe_play(play("A", 0), now=181) is None  # A→B→A flap
    assert detector.observe_play(play("B", 3), now=182) is None
    assert detector.observe_play(play("A", 30), now=1800) is not None  # played again later


def test_detector_without_start_times_uses_flap_window():
    detector = PlayDetector(flap_window=60)
    assert detector.observe_play(play("A"), now=0)
    assert detector.observe_play(play("B"), now=200)
    assert detector.observe_play(play("A"), now=210) is None  # flap within the window
    assert detector.observe_play(play("B"), now=220) is None
    assert detector.observe_play(play("A"), now=400) is not None  # a real replay


def test_detector_starts_from_last_announced_play():
    detector = PlayDetector(play("A", 0))
    assert detector.observe_play(play("A", 0)) is None
    assert detector.observe_play(play("B", 4)) is not None


def test_placeholder_titles_are_ignored():
    detector = PlayDetector()
    info = StationInfo.parse({"nowplaying": "n/a"}, UTC, T0)
    assert detector.observe(info) is None
    info = StationInfo.parse({"nowplaying": "Unknown"}, UTC, T0)
    assert detector.observe(info) is None


def _info(pos: float | None, length: float | None, live: bool = False) -> StationInfo:
    playback = {} if pos is None else {"pos": int(pos * 1000), "len": int((length or 0) * 1000)}
    return StationInfo.parse({"nowplaying": "A - B", "live": live, "playback": playback}, UTC, T0)


def test_policy_predicts_track_end_and_clamps():
    policy = PollPolicy(PollSettings(), rng=random.Random(1))
    delay = policy.after_success(_info(100, 110))
    assert 10.2 <= delay <= 10.5  # remaining 10 s + margin + half the latency + jitter
    assert policy.after_success(_info(0, 240)) == pytest.approx(30.0)  # max interval
    # 31 s left: poll at 29 s so that the end poll keeps the 2 s minimum.
    assert policy.after_success(_info(0, 31)) == pytest.approx(29.0)
    assert policy.after_success(_info(109.5, 110)) == 2.0  # minimum interval
    live = policy.after_success(_info(5, 0, live=True))
    assert 9.0 <= live <= 11.0
    unknown = policy.after_success(_info(None, None))
    assert 9.0 <= unknown <= 11.0


def test_policy_grows_steps_past_the_end_and_backs_off_on_failure():
    policy = PollPolicy(PollSettings(), rng=random.Random(1))
    steps = [policy.after_success(_info(111, 110)) for _ in range(4)]
    assert steps == sorted(steps)
    assert steps[0] == 2.0
    assert steps[-1] > 2.0
    backoff = [policy.after_failure() for _ in range(12)]
    assert backoff[0] < backoff[3]
    assert max(backoff) <= 300 * 1.25
    assert policy.unreachable
    policy.after_success(_info(1, 100))
    assert not policy.unreachable


def test_policy_learns_an_early_change():
    policy = PollPolicy(PollSettings(), rng=random.Random(1))
    for _ in range(10):
        policy.after_success(_info(100, 110))
        assert policy.expected_end is not None
        policy.learn_change(policy.expected_end - timedelta(seconds=4))  # crossfade 4 s early
    assert -4.5 < policy.offset < -3.0
    # The next poll reaches the station switch_delay after the learned early switch (less the
    # half round trip the answer takes back), plus up to 50 ms of jitter.
    delay = policy.after_success(_info(100, 110))
    expected = 10 + policy.offset + policy.settings.switch_delay - policy.latency
    assert expected <= delay <= expected + 0.05
    assert delay < 7.5


@pytest.fixture
async def short_sim(clock: ManualClock):
    async with programme_simulator(ONE_OF_EACH, key=KEY, clock=clock) as sim:
        yield sim


async def test_watch_announces_each_play_once_through_faults(short_sim, clock, session):
    client = StationClient(
        short_sim.base_url,
        1,
        KEY,
        session=session,
        retry=RetryPolicy(tries=1),
        # Cuts the 2 s "delay" fault; the polls meant to succeed have room on a loaded machine.
        timeout=aiohttp.ClientTimeout(total=1.0),
    )
    watch = StationWatch(client)
    seen: list[Announcement] = []

    async def listener(a: Announcement) -> None:
        seen.append(a)

    watch.listeners.append(listener)
    await watch.poll()
    assert [a.play.title for a in seen] == [TRACKS[0].title]
    await watch.poll()
    assert len(seen) == 1  # same play polled again

    for fault in (
        {"kind": "status", "status": 500},
        {"kind": "delay", "seconds": 2},
        {"kind": "truncated"},
        {"kind": "status", "status": 403},
    ):
        short_sim.inject(**fault, times=1)
        clock.advance(2)
        await watch.poll()
        assert watch.status.state in {"failing", "unreachable"}
    assert watch.status.state == "unreachable"
    assert watch.status.unreachable_since is not None
    clock.advance(12)  # t = 21 s: the jingle is on air when the station answers again
    await watch.poll()
    assert watch.status.state == "ok"
    assert watch.status.unreachable_since is None
    assert [a.play.title for a in seen] == [TRACKS[0].title, JINGLES[0].title]
    clock.advance(6)  # t = 27 s: second track
    await watch.poll()
    clock.advance(20)  # t = 47 s: live show
    await watch.poll()
    await watch.poll()
    assert [a.play.title for a in seen][2:] == [TRACKS[1].title, LIVE_SHOW.title]
    assert seen[-1].play.live
