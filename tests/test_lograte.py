"""A counted log line: said at once the first time, then at most once per interval with how many
happened since the last line (none lost), on an injected clock."""

from __future__ import annotations

from bot.util.lograte import CountedLine


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_said_at_once_then_at_most_once_a_minute_with_the_count_since_the_last_line() -> None:
    clock = Clock()
    said: list[tuple[int, int]] = []
    line = CountedLine(lambda count, total: said.append((count, total)), every=60.0, clock=clock)
    line.count()
    assert said == [(1, 1)]
    for _ in range(5):
        clock.now += 10.0
        line.count()
    assert said == [(1, 1)]  # 50 s after the first line: counted, not said
    clock.now += 9.0
    line.flush()
    assert said == [(1, 1)]  # 59 s
    clock.now += 1.0
    line.flush()
    assert said == [(1, 1), (5, 6)]  # a minute: the five since the last line, six in all
    clock.now += 600.0
    line.flush()
    assert said == [(1, 1), (5, 6)]  # nothing happened: nothing said
    line.count()
    assert said == [(1, 1), (5, 6), (1, 7)]  # quiet for over a minute: said at once
    assert line.pending == 0
