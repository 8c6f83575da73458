"""When to poll a station next: predictive while a track plays, backoff on failure.

Two things are learned per station (one policy per station watch):

- how early switches come against the reported length (crossfades, cut outros): the offsets of
  the last ``switch_window`` switches, from which the first poll after a predicted end is placed;
- how long each live show (or other item of unknown length) usually runs, per title, so that
  its end is polled for only where that end is expected: one poll just in time after the
  earliest expected end, then a short cadence, and before that only the skip checks a track
  gets.

The policy reads no clock of its own: every decision is computed from ``info.fetched_at`` and
the injected random generator, so tests drive it with plain values.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections import OrderedDict, deque
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

from ..config import PollSettings as PollSettings  # re-exported: where the policy is read
from ..station import Play, RecentItem, StationInfo
from ..station.play import normalise_title
from .catchup import SCANNED
from .detector import PLACEHOLDER_TITLES


@dataclass(slots=True)
class _OpenEndedItem:
    """The item of unknown length (a live show) on air: its title key, when it began (on our
    clock), whether that start was seen rather than assumed, the next title announced when it
    began, and whether the station has queued something else since (its end is near)."""

    key: str
    started: datetime
    start_known: bool
    next_at_start: str
    cued: bool = False


class _Switch(NamedTuple):
    """The last play seen to begin: its title key, its start on our clock, and whether that
    start came from its position (exact) rather than from when it was first seen."""

    key: str
    at: datetime
    exact: bool


def switch_moment(info: StationInfo, latency: float = 0.0) -> datetime | None:
    """When the play on air in ``info`` went on air, on OUR clock, or None if unknown.

    The playback position is in milliseconds and counts from the switch; ``latency / 2`` is
    about how stale the answer was on arrival. The station's own ``started`` is not used: it
    has whole seconds and the station's clock and zone, which may be off by hours.
    """
    playback = info.playback
    if not info.is_live and playback is not None and playback.position is not None:
        return info.fetched_at - playback.position - timedelta(seconds=latency / 2)
    return None


class PollPolicy:
    """Computes the delay before the next poll of one station.

    Known length: the first poll after a predicted end goes out when, on the station's recent
    switches, all but ``late_share`` of them would have been found within ``switch_delay`` (see
    :meth:`_plan`); until switches are seen it goes out ``margin`` after the predicted end. If
    nothing changed yet, it re-polls at short, growing steps from ``min_interval``.

    Unknown length (live shows): once the title's lengths are learned and the item was seen to
    begin, the first poll reaches the station ``end_interval`` after the earliest expected end
    (see :meth:`end_window`), then one every ``end_interval`` until the latest; before that one
    every ``max_interval`` (skips). Otherwise every ``steady_interval``, and every
    ``end_interval`` as soon as ``nexttrack`` changes during the item (the station has queued
    what follows).
    """

    def __init__(self, settings: PollSettings | None = None, *, rng: random.Random | None = None):
        self.settings = settings or PollSettings()
        self._rng = rng or random.Random()
        self.expected_end: datetime | None = None
        self.offsets: deque[float] = deque(maxlen=max(1, self.settings.switch_window))
        self._anchor: float | None = None  # the earliest offset the first poll must catch in time
        self.latency = 0.1  # learned: request round trip (seconds)
        self._misses = 0
        self.failures = 0
        self.lengths: OrderedDict[str, deque[float]] = OrderedDict()
        self._open_ended: _OpenEndedItem | None = None
        self._last_switch: _Switch | None = None
        self._answered_at: datetime | None = None  # when the last answer before this one came

    # Learning ---------------------------------------------------------------------------

    def learn_latency(self, seconds: float) -> None:
        self.latency = 0.8 * self.latency + 0.2 * max(0.0, min(seconds, 10.0))

    def learn_change(self, started: datetime | None) -> None:
        """A new play began at ``started`` (whole seconds): compare with what was predicted."""
        if started is None or self.expected_end is None:
            return
        error = (started - self.expected_end).total_seconds() + 0.5
        if abs(error) < 1.0:
            error = 0.0  # within the clock's precision: nothing to learn
        self._learn_offset(error)

    def learn_play(self, play: Play, info: StationInfo) -> None:
        """A new play was detected in ``info``: learn how early the switch came against the
        predicted end, and how long the item of unknown length before it ran."""
        key = _key(play.display)
        at = switch_moment(info, self.latency)
        exact = at is not None
        if at is not None and self.expected_end is not None:
            self._learn_offset((at - self.expected_end).total_seconds())
        if at is None:  # no position (a live show): it began before this answer, at the latest
            at = info.fetched_at - timedelta(seconds=self.latency / 2)
            stamped = self._stamped_start(key, info)
            if stamped is not None:
                at = min(at, stamped)
            elif play.started_exact and play.started is not None:
                at = self._reported_start(play.started, at)
        ended = self._open_ended
        if ended is not None and ended.start_known and ended.key != key:
            gap = _aired_after(ended.key, key, info)
            if gap is not None:
                self._learn_length(ended.key, (at - ended.started).total_seconds() - gap)
        self._open_ended = None
        self._last_switch = _Switch(key, at, exact)

    def _reported_start(self, started: datetime, latest: datetime) -> datetime:
        """The station's own start of a play found after a gap (a host that tells no position:
        a Shoutcast DNAS's ``playedat``), when it lies between the last answer that still showed
        the play before and this one (whole seconds: up to 1 s before it); else ``latest``.
        Outside that window the station's clock is not ours, and it is not used."""
        before = self._answered_at
        if before is None or not before - timedelta(seconds=1) <= started <= latest:
            return latest
        return max(before, started)

    def _stamped_start(self, key: str, info: StationInfo) -> datetime | None:
        """When the play on air in ``info`` began by the station's ``recent`` start times, on
        our clock, if the play before it is the one whose start we timed from its position.

        The station's clock and zone may be hours off, but the difference of two of its start
        times is not: it is how long the play before ran (whole seconds, so within 1 s). After
        a switch found late (a cut outro before a live show) this is the better start; half a
        second is added so that it is about as likely early as late. It is never put before
        the last answer that still showed the play before (start times can be wrong).
        """
        previous = self._last_switch
        if previous is None or not previous.exact or len(info.recent) < 2:
            return None
        now, before = info.recent[0], info.recent[1]
        if now.started is None or before.started is None:
            return None
        if _key(now.title) != key or _key(before.title) != previous.key:
            return None
        ran = (now.started - before.started).total_seconds()
        if not 0 <= ran < 86_400:
            return None
        stamped = previous.at + timedelta(seconds=ran + 0.5)
        if self._answered_at is not None:
            stamped = max(stamped, self._answered_at)
        return stamped

    def observe_offset(self, offset: float) -> None:
        """Record one switch ``offset`` seconds after (negative: before) the predicted end."""
        self._learn_offset(offset)

    def observe_length(self, title: str, seconds: float) -> None:
        """Record that an item of unknown length titled ``title`` ran ``seconds``."""
        self._learn_length(_key(title), seconds)

    def _learn_offset(self, offset: float) -> None:
        # A switch long before the end is a skip (kept: it is the tail); one well after the
        # predicted end means an item went unseen in between, which says nothing about timing.
        if -30.0 < offset < 5.0:
            self.offsets.append(offset)
            self._plan()

    def _learn_length(self, key: str, seconds: float) -> None:
        if not key or not 0 < seconds < 86_400:
            return
        lengths = self.lengths.get(key)
        if lengths is None:
            lengths = self.lengths[key] = deque(maxlen=max(1, self.settings.length_window))
            while len(self.lengths) > self.settings.max_titles:
                self.lengths.popitem(last=False)
        self.lengths.move_to_end(key)
        lengths.append(seconds)

    # Planning ---------------------------------------------------------------------------

    @property
    def offset(self) -> float:
        """The earliest switch (seconds against the predicted end) the plan finds in time."""
        return 0.0 if self._anchor is None else self._anchor

    @property
    def first_poll(self) -> float | None:
        """When the planned first poll reaches the station, against the predicted end."""
        return None if self._anchor is None else self._anchor + self._catch_window()

    def _catch_window(self) -> float:
        """How long before the poll reaches the station a switch may come and still be found
        within ``switch_delay`` (the answer takes half a round trip to come back)."""
        return max(0.1, self.settings.switch_delay - self.latency / 2)

    def _repoll_steps(self) -> list[float]:
        """Gaps between the polls after a planned first poll that found no switch: one catch
        window (so a spread of up to two windows costs two polls, not a late find), then
        ``min_interval`` growing by 1.5."""
        s = self.settings
        return [self._catch_window(), s.min_interval, s.min_interval * 1.5]

    def _plan(self) -> None:
        """Place the first poll after a predicted end, from the recent offsets.

        Candidate polls come ``margin`` after an observed switch (it is found at once) or one
        catch window after it (it is found just in time). For each, the recent switches are
        replayed against that poll and the re-polls after it (see :meth:`_repoll_steps`):
        those found later than ``switch_delay`` are late, and each switch costs the polls up to
        the one that finds it. The plan is the cheapest candidate with at most ``late_share``
        late (and at most ``max_switch_polls`` a switch on average), the quickest to find the
        switches among those within 5 % of that cost; if none qualifies, the one with the
        fewest late. About ten bisections per candidate: well under a millisecond for 64
        offsets, once per play.
        """
        s = self.settings
        ordered = sorted(self.offsets)
        n = len(ordered)
        if not n:
            self._anchor = None
            return
        sums = [0.0]
        for value in ordered:
            sums.append(sums[-1] + value)
        h = self._catch_window()
        steps = self._repoll_steps()
        options: list[tuple[int, int, float, float]] = []  # (late, polls, total delay, poll)
        for poll in sorted({o + h for o in ordered} | {o + s.margin for o in ordered}):
            late = bisect_left(ordered, poll - h)
            caught = bisect_right(ordered, poll)
            polls = caught
            delay = caught * poll - sums[caught]
            moment = poll
            for number, step in enumerate(steps, start=2):
                moment += step
                late += max(0, bisect_left(ordered, moment - h) - caught)
                now = bisect_right(ordered, moment)
                polls += number * (now - caught)
                delay += (now - caught) * moment - (sums[now] - sums[caught])
                caught = now
            beyond = n - caught
            late += beyond
            polls += (len(steps) + 2) * beyond
            delay += beyond * 60.0
            if polls <= s.max_switch_polls * n:
                options.append((late, polls, delay, poll))
        feasible = [o for o in options if o[0] <= s.late_share * n]
        if feasible:
            cheapest = min(o[1] for o in feasible)
            pick = min((o for o in feasible if o[1] <= cheapest * 1.05), key=lambda o: o[2])
            poll = pick[3]
        elif options:
            poll = min(options)[3]
        else:
            poll = ordered[-1] + s.margin
        self._anchor = poll - h
        if n < s.learning_switches:
            # A handful of switches does not show the spread yet: start early enough for
            # switches somewhat earlier than any seen (the re-poll one window later still
            # catches the latest ones).
            self._anchor = min(self._anchor, ordered[0] - s.learning_margin)

    def end_window(self, title: str) -> tuple[float, float] | None:
        """Seconds into an item of unknown length titled ``title`` between which it is expected
        to end, or None before any of its lengths is known.

        The shortest and longest learned lengths, widened by a lead for airings beyond those
        seen: the sample range over ``n - 1`` (about the gap a spread leaves beyond the
        extremes of ``n`` draws), but at least ``end_share`` of the length over the square
        root of ``n`` (a few airings do not show the spread yet) and at least ``end_lead``.
        Past the longest the lead is doubled: polls there are only spent when a show overruns,
        and an end missed there is found at the steady cadence, much later than one before
        the window (which the first poll still finds, if late by as much as it came early).
        """
        lengths = self.lengths.get(_key(title))
        if not lengths:
            return None
        s = self.settings
        n = len(lengths)
        low, high = min(lengths), max(lengths)
        spread = (high - low) / (n - 1) if n > 1 else 0.0
        share = s.end_share / math.sqrt(n)
        return (
            max(0.0, low - max(s.end_lead, share * low, spread)),
            high + 2 * max(s.end_lead, share * high, spread),
        )

    # Deciding ---------------------------------------------------------------------------

    def after_success(self, info: StationInfo, play: Play | None = None) -> float:
        """Delay after a poll that got an answer (changed or not); ``play`` is what is on air."""
        self.failures = 0
        self._answered_at = info.fetched_at
        s = self.settings
        playback = info.playback
        if info.is_live or playback is None or playback.length is None or playback.position is None:
            self.expected_end = None
            self._misses = 0
            return self._unknown_length(info, play)
        self._open_ended = None
        remaining = (playback.length - playback.position).total_seconds()
        self.expected_end = info.fetched_at + timedelta(seconds=remaining)
        until_change = remaining + self.offset
        if until_change > s.max_interval:
            # Poll in between, never so close to the end that the end poll breaks min_interval.
            self._misses = 0
            return self._clamp(min(s.max_interval, until_change - s.min_interval))
        if until_change > 0:
            self._misses = 0
            jitter = self._rng.uniform(0, 0.05)
            if self._anchor is None:
                return self._clamp(remaining + s.margin + self.latency / 2 + jitter)
            # Sent so that it reaches the station ``catch window`` after the anchor switch.
            return self._clamp(
                remaining + self._anchor + self._catch_window() - self.latency / 2 + jitter
            )
        # Past the planned poll and still the same play: short, growing steps.
        self._misses += 1
        if self._anchor is not None and self._misses <= 1:
            # The one poll closer than min_interval: the planned poll came just before the
            # switch, which is then due within one catch window (see _repoll_steps).
            return max(0.1, self._catch_window() + self._rng.uniform(0, 0.05))
        return self._clamp(s.min_interval * 1.5 ** (self._misses - 1 - (self._anchor is not None)))

    def _unknown_length(self, info: StationInfo, play: Play | None) -> float:
        s = self.settings
        title = play.display if play is not None else info.on_air_title or ""
        key = _key(title)
        upcoming = _key(info.next_display)
        item = self._open_ended
        if item is None or item.key != key:
            switch = self._last_switch
            if switch is not None and switch.key == key:
                started, known = switch.at, True  # we saw it begin
            else:
                started, known = info.fetched_at, False  # on air when watching began
            item = self._open_ended = _OpenEndedItem(key, started, known, upcoming)
        if upcoming != item.next_at_start and upcoming not in PLACEHOLDER_TITLES:
            item.cued = True  # the station has queued what follows: the end is near
        fast = self._clamp(s.end_interval * self._rng.uniform(0.95, 1.0))
        window = self.end_window(title) if item.start_known else None
        if window is not None:
            # Reaches the station (half a round trip after it is sent) one end cadence after
            # the earliest expected end: an end in between is found within the cadence.
            elapsed = (info.fetched_at - item.started).total_seconds() + self.latency / 2
            until = window[0] + self._end_catch() - elapsed
            if until > s.max_interval:
                # Skip checks at most max_interval apart, the last one being that first poll.
                return self._clamp(until / math.ceil(until / s.max_interval))
            if until > 0.2:
                return self._clamp(until + self._rng.uniform(0, 0.05))
            if elapsed <= window[1] or item.cued:
                return fast
            # Longer than it has ever run: back to the steady cadence (or the cue) for it.
        elif item.cued:
            return fast
        # Never longer than steady_interval: an end is found within it.
        return self._clamp(s.steady_interval * self._rng.uniform(0.9, 1.0))

    def _end_catch(self) -> float:
        """How long before a poll reaches the station an item of unknown length may end and
        still be found within ``end_interval``."""
        return max(0.1, self.settings.end_interval - self.latency / 2)

    def after_failure(self) -> float:
        self.failures += 1
        s = self.settings
        delay: float = s.failure_base * 2.0 ** (self.failures - 1)
        return min(s.max_backoff, delay) * self._rng.uniform(0.75, 1.25)

    @property
    def unreachable(self) -> bool:
        return self.failures >= self.settings.breaker_threshold

    def _clamp(self, delay: float) -> float:
        s = self.settings
        return max(s.min_interval, min(s.max_interval, delay))


def _key(title: str | None) -> str:
    return normalise_title(title)


def _entry_is(entry: RecentItem, key: str) -> bool:
    artist, title = entry.artist_and_title
    return key in (_key(entry.title), _key(f"{artist} - {title}" if artist else title))


def _aired_after(show: str, key: str, info: StationInfo) -> float | None:
    """Seconds between the end of the item ``show`` and the start of the play ``key`` on air
    in ``info``: 0 when nothing aired in between (or ``recent`` does not say), else what the
    plays ``recent`` lists in between ran, by the difference of the station's start times (its
    clock and zone cancel out). None when something aired in between and its start is not
    known: a length measured up to this play would be too long, so none is learned.

    A show's learned length ends where the show ended: a play after it shorter than the
    cadence its end is polled at can air between two polls, so the first play seen after the
    show is the one after that; counted in, it would make the next airing's end expected (and
    polled for) seconds too late."""
    recent = info.recent[:SCANNED]  # as many as catchup looks at
    if not recent or not _entry_is(recent[0], key):
        return 0.0
    for index in range(1, len(recent)):
        if _entry_is(recent[index], show):
            if index == 1:
                return 0.0
            now, after = recent[0].started, recent[index - 1].started
            if now is None or after is None:
                return None
            gap = (now - after).total_seconds()
            return gap if 0 <= gap < 86_400 else None
    return 0.0
