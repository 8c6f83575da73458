"""The stop's rules on an injected clock and exit: a second signal exits at once with 128 + its
number, the watchdog exits with 70 once the budget's hard limit has passed, and not before."""

from __future__ import annotations

import signal

from bot.runtime.stopping import EXIT_OVERRAN, HARD_STOP, Stop, Watchdog


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


async def test_a_second_signal_exits_at_once_with_128_plus_its_number() -> None:
    exits: list[int] = []
    stop = Stop(exit=exits.append)
    stop.signalled(signal.SIGTERM)
    assert stop.is_set()
    assert stop.cause == "SIGTERM"
    assert exits == []
    stop.signalled(signal.SIGINT)
    assert exits == [130]
    stop.signalled(signal.SIGTERM)
    assert exits == [130, 143]


async def test_the_watchdog_exits_past_the_hard_limit_and_not_before() -> None:
    clock = Clock()
    exits: list[int] = []
    stop = Stop(clock=clock, exit=exits.append)
    stop.set("SIGTERM")
    assert stop.left(HARD_STOP) == HARD_STOP
    clock.now += HARD_STOP  # the graceful stop has taken all of it
    watchdog = Watchdog(stop)
    watchdog.start()
    assert watchdog._thread is not None
    watchdog._thread.join(10.0)
    assert exits == [EXIT_OVERRAN]

    finished = Stop(clock=clock, exit=exits.append)
    finished.set("SIGTERM")
    early = Watchdog(finished)
    early.cancel()  # the stop ended first
    early.start()
    assert early._thread is not None
    early._thread.join(10.0)
    assert exits == [EXIT_OVERRAN]
