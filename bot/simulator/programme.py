"""A deterministic, endlessly repeating programme of library items laid on a clock."""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from .library import JINGLES, LIVE_SHOW, LIVE_SHOWS, TRACKS, LibraryItem


@dataclass(frozen=True, slots=True)
class Slot:
    """One place in a programme: an item on air for ``seconds``.

    ``early``: the station reports a length (``len``, ``DURATION``) this much longer than the item
    actually stays on air, as play-out engines do at a crossfade's mix point or a cut outro.
    ``cue``: for a live show, how many seconds before its end the station starts reporting what
    comes next (``nexttrack``); None means it is known all along.
    """

    item: LibraryItem
    seconds: float
    early: float = 0.0
    cue: float | None = None


@dataclass(frozen=True, slots=True)
class Airing(Slot):
    """One play of a slot: the ``number``-th play since the programme's epoch, from ``started``.
    Its ``item`` is the slot's, or the request that replaced it in this play."""

    number: int = field(kw_only=True)
    started: float = field(kw_only=True)

    @property
    def ends(self) -> float:
        return self.started + self.seconds

    @property
    def reported(self) -> float:
        """The length the station reports: the switch comes ``early`` seconds before its end."""
        return self.seconds + self.early

    def next_known(self, moment: float) -> bool:
        """Whether the station reports what comes next at ``moment``."""
        return self.cue is None or self.ends - moment <= self.cue


class Programme:
    """Items and their (already scaled) lengths, repeated forever from ``epoch`` (unix seconds)."""

    def __init__(self, slots: Sequence[tuple[LibraryItem, float] | Slot], epoch: float) -> None:
        if not slots:
            raise ValueError("a programme needs at least one item")
        self._slots = tuple(
            Slot(s.item, max(0.5, float(s.seconds)), max(0.0, s.early), s.cue)
            if isinstance(s, Slot)
            else Slot(s[0], max(0.5, float(s[1])))
            for s in slots
        )
        self.slots = tuple((slot.item, slot.seconds) for slot in self._slots)
        self.epoch = epoch
        self._offsets: list[float] = []
        total = 0.0
        for slot in self._slots:
            self._offsets.append(total)
            total += slot.seconds
        self.cycle = total
        # Airings whose item was replaced (a listener's request plays in that slot).
        self.overrides: dict[int, LibraryItem] = {}

    def __len__(self) -> int:
        return len(self.slots)

    def airing(self, number: int) -> Airing:
        cycle, index = divmod(number, len(self.slots))
        slot = self._slots[index]
        started = self.epoch + cycle * self.cycle + self._offsets[index]
        item = self.overrides.get(number, slot.item)
        return Airing(item, slot.seconds, slot.early, slot.cue, number=number, started=started)

    def insert(self, item: LibraryItem, after: int) -> int:
        """Play ``item`` in the first slot after airing ``after`` that is neither a live show
        nor already replaced (what a station does with an accepted request); its number."""
        number = after + 1
        while number in self.overrides or self.airing(number).item.kind == "live":
            number += 1
        self.overrides[number] = item
        return number

    def at(self, moment: float) -> Airing:
        elapsed = moment - self.epoch
        cycle = math.floor(elapsed / self.cycle)
        within = elapsed - cycle * self.cycle
        slot = max(0, bisect.bisect_right(self._offsets, within) - 1)
        return self.airing(cycle * len(self.slots) + slot)

    @classmethod
    def generate(
        cls,
        *,
        seed: int,
        now: float,
        speed: float = 1.0,
        track_seconds: tuple[float, float] | None = None,
        tracks_per_jingle: int = 3,
        with_live: bool = True,
        library: Sequence[LibraryItem] = TRACKS,
        crossfade: tuple[float, float] | None = None,
        tail: float = 0.0,
    ) -> Programme:
        """Shuffle the library with ``seed``; a jingle every few tracks, one live show a cycle.

        Lengths are the library's divided by ``speed``, or drawn from ``track_seconds`` when given
        (jingles then last half the shortest track, the live show three of the longest).
        ``crossfade`` (seconds, low-high) makes every switch come that much before the reported
        length predicts, and ``tail`` is the share of switches that come 5-10 s early (cut
        outros). Both are drawn from their own generator: without them a seed gives exactly the
        programme it always gave.
        """
        rng = random.Random(seed)
        tracks = list(library)
        rng.shuffle(tracks)
        slots: list[tuple[LibraryItem, float]] = []
        for position, track in enumerate(tracks, start=1):
            slots.append((track, _length(track, rng, speed, track_seconds)))
            if tracks_per_jingle and position % tracks_per_jingle == 0:
                jingle = JINGLES[(position // tracks_per_jingle) % len(JINGLES)]
                slots.append((jingle, _length(jingle, rng, speed, track_seconds)))
            if with_live and position == len(tracks) // 2:
                slots.append((LIVE_SHOW, _length(LIVE_SHOW, rng, speed, track_seconds)))
        laid: list[tuple[LibraryItem, float] | Slot] = list(slots)
        if crossfade is not None or tail:
            early = _EarlySwitches(seed, crossfade or (0.0, 0.0), tail)
            laid = [
                Slot(item, seconds, 0.0 if item.kind == "live" else early.draw())
                for item, seconds in slots
            ]
        programme = cls(laid, epoch=0.0)
        # Start part-way into an item at least eleven plays in (so `recent` has ten), both
        # chosen by the seed: stations made with different seeds do not switch in lock-step.
        start = programme.airing(11 + rng.randrange(len(slots)))
        programme.epoch = now - start.started - rng.uniform(0.1, 0.6) * start.seconds
        return programme

    @classmethod
    def crossfaded(
        cls,
        *,
        seed: int,
        epoch: float,
        plays: int,
        track_seconds: tuple[float, float] = (5.0, 12.0),
        jingle_seconds: tuple[float, float] = (3.0, 5.0),
        crossfade: tuple[float, float] = (0.8, 1.6),
        tail: float = 0.03,
        jingle_every: int = 4,
        live_every: int = 7,
        shows: Sequence[tuple[LibraryItem, float, float | None]] = (
            (LIVE_SHOWS[0], 30.0, 10.0),
            (LIVE_SHOWS[1], 20.0, None),
        ),
        variance: float = 0.1,
        after_live: float = 13.0,
    ) -> Programme:
        """A programme recorded the way play-out engines behave, starting at ``epoch``.

        Every switch but a live show's end comes ``crossfade`` seconds (uniform) before the
        reported length predicts, a ``tail`` share of them 5-10 s early. Every ``live_every``-th
        play is a live show (``len`` 0), the ``shows`` taking turns: each is ``(item, usual
        length, cue)`` and lasts its usual length ± ``variance`` (uniform), announcing what comes
        next ``cue`` seconds before its end (None: never before it ends). The item after a live
        show lasts at least ``after_live`` seconds.
        """
        rng = random.Random(seed)
        early = _EarlySwitches(seed, crossfade, tail)
        slots: list[Slot] = []
        tracks = list(TRACKS[:-1])  # the hour-long mix does not fit a compressed programme
        rng.shuffle(tracks)
        aired_live = 0
        for index in range(plays):
            if index and index % live_every == 0:
                item, usual, cue = shows[aired_live % len(shows)]
                aired_live += 1
                seconds = usual * rng.uniform(1 - variance, 1 + variance)
                slots.append(Slot(item, seconds, cue=cue))
            elif index and index % jingle_every == 0:
                jingle = JINGLES[index % len(JINGLES)]
                slots.append(Slot(jingle, rng.uniform(*jingle_seconds), early.draw()))
            else:
                track = tracks[index % len(tracks)]
                slots.append(Slot(track, rng.uniform(*track_seconds), early.draw()))
        # Real items are minutes long; these are compressed. An item shorter than a 5-10 s cut
        # before it, or than the steady cadence of a live show before it, would be an artefact
        # of the compression that no poller without a reason to poll faster can see: the item
        # after a cut outlasts the cut, the item after a live show lasts ``after_live``.
        for index, slot in enumerate(slots[:-1]):
            after = slots[index + 1]
            least = after_live if slot.item.kind == "live" else slot.early + 3.0
            if after.seconds < least:
                slots[index + 1] = Slot(after.item, least, after.early, after.cue)
        return cls(slots, epoch=epoch)


def _length(
    item: LibraryItem, rng: random.Random, speed: float, window: tuple[float, float] | None
) -> float:
    if window is None:
        return item.seconds / max(speed, 1e-6)
    low, high = window
    if item.kind == "jingle":
        return max(2.5, low / 2)
    if item.kind == "live":
        return high * 3
    return rng.uniform(low, high)


class _EarlySwitches:
    """How much earlier than its reported length each item leaves the air (seeded)."""

    def __init__(self, seed: int, crossfade: tuple[float, float], tail: float) -> None:
        self._rng = random.Random(seed * 7919 + 17)
        self.crossfade = crossfade
        self.tail = tail

    def draw(self) -> float:
        if self._rng.random() < self.tail:
            return self._rng.uniform(5.0, 10.0)
        return self._rng.uniform(*self.crossfade)
