"""PollPolicy on its own: learned early switches and live-show cadence, on a virtual clock.

The policy reads no clock: every StationInfo here carries the virtual ``fetched_at``, and the
random generator is seeded, so each test is exact and instant.

Here: learned early switches and the polling plan. Live shows are in test_policy_shows.py.
"""

from __future__ import annotations

import random

import pytest

from bot.announcer import PlayDetector, PollPolicy, PollSettings

from .support.policy_clock import info


def replay(policy: PollPolicy, offsets: list[float], poll: float) -> tuple[int, int, float]:
    """Late switches, polls and total delay if the first poll reaches the station at ``poll``
    against the predicted end (a plain loop, independent of the policy's bisections)."""
    s = policy.settings
    window = s.switch_delay - policy.latency / 2
    steps = [window, s.min_interval, s.min_interval * 1.5]
    late = polls = 0
    delay = 0.0
    for offset in offsets:
        moment, count = poll, 1
        while moment < offset and count <= len(steps):
            moment, count = moment + steps[count - 1], count + 1
        found = moment >= offset
        polls += count if found else count + 1
        late += not found or moment - offset > window
        delay += moment - offset if found else 60.0
    return late, polls, delay


def test_first_poll_catches_all_but_the_tail_in_time():
    rng = random.Random(5)
    policy = PollPolicy(rng=random.Random(1))
    crossfades = [-rng.uniform(0.8, 1.6) for _ in range(60)]
    tail = [-8.0, -6.5]
    for offset in crossfades[:30] + tail + crossfades[30:]:
        policy.observe_offset(offset)
    poll = policy.first_poll
    assert poll is not None
    # The plan gives up on the two long-tail switches (3 %) and finds every crossfade in time.
    late, polls, _ = replay(policy, list(policy.offsets), poll)
    assert late == 2
    assert polls / 62 < 1.25
    assert policy.offset <= min(crossfades)
    # 10 s before the predicted end: the poll is sent half a round trip before it is due.
    delay = policy.after_success(info(0, "A - B", 100, 110))
    assert 10 + poll - policy.latency / 2 <= delay <= 10 + poll - policy.latency / 2 + 0.05


def test_exact_switches_are_polled_just_after_the_end():
    policy = PollPolicy(rng=random.Random(1))
    for offset in [0.0, 0.02, -0.03, 0.01] * 5:
        policy.observe_offset(offset)
    # As cheap as any plan (one poll a switch, after the latest) and the quickest.
    assert policy.first_poll is not None
    assert 0.02 <= policy.first_poll <= 0.02 + policy.settings.margin
    assert replay(policy, list(policy.offsets), policy.first_poll)[:2] == (0, 20)


def test_plan_is_the_cheapest_within_the_late_share_then_the_quickest():
    rng = random.Random(9)
    for spread in (0.3, 1.0, 1.6, 4.0):
        policy = PollPolicy(rng=random.Random(1))
        offsets = [-rng.uniform(0, spread) for _ in range(64)]
        for offset in offsets:
            policy.observe_offset(offset)
        window = policy.settings.switch_delay - policy.latency / 2
        candidates = {o + window for o in offsets} | {o + policy.settings.margin for o in offsets}
        options = [(*replay(policy, offsets, c), c) for c in candidates]
        options = [o for o in options if o[1] <= 2 * 64]
        assert policy.first_poll is not None
        chosen = replay(policy, offsets, policy.first_poll)
        feasible = [o for o in options if o[0] <= 0.03 * 64]
        if feasible:
            cheapest = min(o[1] for o in feasible)
            best = min(o[2] for o in feasible if o[1] <= cheapest * 1.05)
            assert chosen[0] <= 0.03 * 64
            assert chosen[1] <= cheapest * 1.05
            assert chosen[2] == pytest.approx(best)
        else:
            assert chosen[0] == min(o[0] for o in options)


def test_offsets_window_is_bounded_and_forgets():
    policy = PollPolicy(PollSettings(switch_window=16), rng=random.Random(1))
    for _ in range(16):
        policy.observe_offset(-5.0)
    assert policy.first_poll == pytest.approx(-5.0 + policy.settings.margin)
    for _ in range(16):
        policy.observe_offset(-1.0)
    assert len(policy.offsets) == 16
    assert policy.first_poll == pytest.approx(-1.0 + policy.settings.margin)
    policy.observe_offset(40.0)  # an item went unseen in between: not a timing sample
    assert len(policy.offsets) == 16
    assert policy.offsets[-1] == -1.0


def test_switch_is_learned_from_the_new_plays_position():
    policy = PollPolicy(rng=random.Random(1))
    policy.latency = 0.0
    policy.after_success(info(0, "A - One", 50, 60))  # predicted end: T0 + 10 s
    new = info(9.5, "A - Two", 0.7, 60)  # the switch came at T0 + 8.8 s
    play = new.current_play()
    assert play is not None
    policy.learn_play(play, new)
    assert abs(policy.offsets[-1] - (-1.2)) < 1e-6


def run_programme(
    policy: PollPolicy, items: list[tuple[str, float, float | None]]
) -> tuple[list[float], int]:
    """Drive ``policy`` and a real PlayDetector over ``items`` (title, seconds on air, reported
    length or None for live) on a virtual clock. Returns the delays of every switch after the
    first and the number of polls."""
    starts = [0.0]
    for _, seconds, _ in items:
        starts.append(starts[-1] + seconds)
    detector = PlayDetector()
    policy.latency = 0.0
    delays: list[float] = []
    at, polls = 0.5, 0
    while at < starts[-1]:
        index = max(i for i in range(len(items)) if starts[i] <= at)
        title, _, reported = items[index]
        current = info(at, title, at - starts[index], reported, recent=[])
        polls += 1
        play = detector.observe(current)
        if play is not None:
            if index:
                delays.append(at - starts[index])
            policy.learn_play(play, current)
        at += policy.after_success(current, detector.current)
    return delays, polls


def test_crossfaded_programme_meets_the_goals_on_a_virtual_clock():
    rng = random.Random(3)
    items: list[tuple[str, float, float | None]] = []
    for number in range(300):
        seconds = rng.uniform(150, 300)
        early = rng.uniform(5, 10) if rng.random() < 0.03 else rng.uniform(0.8, 1.6)
        items.append((f"Artist - Track {number}", seconds, seconds + early))
    policy = PollPolicy(rng=random.Random(1))
    delays, polls = run_programme(policy, items)
    delays.sort()
    assert len(delays) == 299
    assert delays[round(0.95 * 298)] <= 1.0
    # Tracks of 2.5-5 minutes also get a poll every 30 s in between (skips); the switch itself
    # costs about one request.
    in_between = sum(int((s - 2) // 30) for _, s, _ in items)
    assert (polls - in_between) / len(items) <= 1.2
