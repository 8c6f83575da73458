"""A deterministic, endlessly repeating programme of library items laid on a clock."""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from .library import JINGLES, LIVE_SHOW, TRACKS, LibraryItem


@dataclass(frozen=True, slots=True)
class Airing:
    """One play of one item: the ``number``-th play since the programme's epoch."""

    number: int
    item: LibraryItem
    started: float
    seconds: float

    @property
    def ends(self) -> float:
        return self.started + self.seconds


class Programme:
    """Items and their (already scaled) lengths, repeated forever from ``epoch`` (unix seconds)."""

    def __init__(self, slots: Sequence[tuple[LibraryItem, float]], epoch: float) -> None:
        if not slots:
            raise ValueError("a programme needs at least one item")
        self.slots = tuple((item, max(0.5, float(seconds))) for item, seconds in slots)
        self.epoch = epoch
        self._offsets: list[float] = []
        total = 0.0
        for _item, seconds in self.slots:
            self._offsets.append(total)
            total += seconds
        self.cycle = total

    def __len__(self) -> int:
        return len(self.slots)

    def airing(self, number: int) -> Airing:
        cycle, slot = divmod(number, len(self.slots))
        item, seconds = self.slots[slot]
        return Airing(number, item, self.epoch + cycle * self.cycle + self._offsets[slot], seconds)

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
    ) -> Programme:
        """Shuffle the library with ``seed``; a jingle every few tracks, one live show a cycle.

        Lengths are the library's divided by ``speed``, or drawn from ``track_seconds`` when given
        (jingles then last half the shortest track, the live show three of the longest).
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
        programme = cls(slots, epoch=0.0)
        # Start part-way into an item at least eleven plays in (so `recent` has ten), both
        # chosen by the seed: stations made with different seeds do not switch in lock-step.
        start = programme.airing(11 + rng.randrange(len(slots)))
        programme.epoch = now - start.started - rng.uniform(0.1, 0.6) * start.seconds
        return programme


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
