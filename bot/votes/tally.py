"""A finished poll's outcome on plain values: who won, a tie, or nobody voted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

WON, TIE, EMPTY = "won", "tie", "empty"


@dataclass(frozen=True, slots=True)
class Tally:
    """Discord's count of a poll: votes by the answer's place in the poll (0 = first, read
    through Discord's answer ids, never assumed from them; an answer nobody chose may be
    absent), and whether Discord has finished counting (``is_finalized``)."""

    counts: Mapping[int, int]
    final: bool


@dataclass(frozen=True, slots=True)
class Outcome:
    """``WON`` with the winning answer's index (0-based), ``TIE`` with the tied ones, or
    ``EMPTY``."""

    kind: str
    answers: tuple[int, ...] = ()

    @property
    def stored(self) -> str:
        return f"{self.kind}:{','.join(str(a) for a in self.answers)}"


def decide(tally: Tally, answers: int) -> Outcome:
    """The answer with the most votes wins; a shared highest count is a tie; no votes at all
    is empty."""
    counts = [max(0, int(tally.counts.get(index, 0))) for index in range(answers)]
    top = max(counts, default=0)
    if top == 0:
        return Outcome(EMPTY)
    best = tuple(i for i, n in enumerate(counts) if n == top)
    return Outcome(WON, best) if len(best) == 1 else Outcome(TIE, best)
