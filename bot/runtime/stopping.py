"""Stopping ``onair run`` on SIGTERM (``systemctl stop``, ``docker stop``) or SIGINT (Ctrl+C), at
any stage: one line that says which signal came, at which stage, and how long stopping took.

While the bot is still starting nothing it runs needs a graceful end (no announcement is in
flight before the gateway is ready), so the start-up is cancelled at once instead of waiting
for the stage it is in (a login or a command sync) to finish or time out.

Once running, the stop has one budget, whatever Discord does: what must be kept is already in
storage (stored voice sessions, the outbox, the play log), sends in flight get ``SENDS_GRACE``
seconds from the signal, goodbyes to Discord (voice disconnects, the gateway's close) get what
is left of ``STOP_BUDGET``. A Discord that stopped answering cannot hold the process: past
``HARD_STOP`` seconds it exits anyway, and a second signal exits at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Protocol

_LOGGER = logging.getLogger("onair")
SENDS_GRACE = 2.5  # seconds from the signal that announcements and posts in flight may take
STOP_BUDGET = 6.0  # seconds from the signal to a graceful end, Discord's goodbyes included
HARD_STOP = 9.0  # seconds from the signal after which the process exits whatever still runs
EXIT_OVERRAN = 70  # the graceful stop overran HARD_STOP: something hung (a bug to report)
READY = "ready"

Exit = Callable[[int], object]


class Stoppable(Protocol):
    """What stopping needs of the bot (``OnAirBot``)."""

    def stage(self) -> str: ...

    async def start(self, token: str, *, reconnect: bool = True) -> None: ...

    async def close(self) -> None: ...

    def stop_by(self, sends: float, goodbyes: float) -> None: ...


def exit_now(code: int) -> None:
    """End the process at once (no clean-up can hang): the log written first."""
    for handler in logging.getLogger().handlers:
        with contextlib.suppress(Exception):
            handler.flush()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


class Stop:
    """Set once by the first SIGTERM or SIGINT (or by ``set``); says its line once. A second
    signal ends the process at once (``again``) with 128 + the signal's number, as a shell
    reports a process a signal ended."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, exit: Exit = exit_now) -> None:
        self._event = asyncio.Event()
        self.cause = ""
        self._clock = clock
        self._exit = exit
        self.received = 0.0
        self._said = False

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()

    def set(self, cause: str = "stop") -> None:
        if not self._event.is_set():
            self.cause, self.received = cause, self._clock()
            self._event.set()

    def signalled(self, signum: int) -> None:
        """A signal came: the first stops gracefully, the next ends the process at once."""
        name = signal.Signals(signum).name
        if self.is_set():
            self.again(signum)
            return
        self.set(name)

    def again(self, signum: int) -> None:
        code = 128 + signum
        _LOGGER.warning(
            "%s received again while stopping: exiting at once (exit %d)",
            signal.Signals(signum).name,
            code,
        )
        self._exit(code)

    def overran(self) -> None:
        """Still running ``HARD_STOP`` seconds after the signal: exit with ``EXIT_OVERRAN``."""
        _LOGGER.error(
            "%s received %.0f s ago and still not done: exiting now (exit %d)",
            self.cause,
            self._clock() - self.received,
            EXIT_OVERRAN,
        )
        self._exit(EXIT_OVERRAN)

    def left(self, within: float) -> float:
        """Seconds left until ``within`` seconds after the signal (0 when past)."""
        return max(0.0, self.received + within - self._clock())

    def line(self, stage: str) -> str:
        seconds = self._clock() - self.received
        if stage == READY:
            return f"{self.cause} received: stopped in {seconds:.2f} s"
        return f"{self.cause} received while starting ({stage}); stopped in {seconds:.2f} s"

    def say(self, stage: str) -> None:
        """Log the one line, once, when a signal stopped OnAir."""
        if self.is_set() and not self._said:
            self._said = True
            _LOGGER.info("%s", self.line(stage))


class Watchdog:
    """After the first signal, a daemon thread that ends the process if the graceful stop is
    not over ``HARD_STOP`` seconds later (a thread: an event loop that is stuck cannot miss
    it)."""

    def __init__(self, stop: Stop, after: float = HARD_STOP) -> None:
        self._stop = stop
        self._after = after
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="onair-stop-watchdog")
            self._thread.daemon = True
            self._thread.start()

    def _run(self) -> None:
        if not self._done.wait(self._stop.left(self._after)):
            self._stop.overran()

    def cancel(self) -> None:
        self._done.set()


@contextlib.contextmanager
def stop_on_signals(stop: Stop, *, hard_stop: float = HARD_STOP) -> Iterator[None]:
    """SIGTERM and SIGINT set ``stop`` (on the event loop: no KeyboardInterrupt mid-await) and
    start the watchdog; a second one exits at once, also after the loop has let go of them."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    watchdog = Watchdog(stop, hard_stop)

    def signalled(signum: int) -> None:
        stop.signalled(signum)
        watchdog.start()

    for signum in signals:
        loop.add_signal_handler(signum, signalled, signum)
    try:
        yield
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)
        if stop.is_set():
            # What is left (the loop's own end) stays under the watchdog and the second signal.
            for signum in signals:
                signal.signal(signum, lambda number, _frame: stop.again(number))


async def run_until_signalled(bot: Stoppable, token: str, stop: Stop) -> None:
    """Run until the bot stops or ``stop`` is set (a signal). Once ready it stops gracefully
    within ``STOP_BUDGET``: polling stops, sends in flight finish or give their delivery back
    (it stays pending for the next run), the gateway and sessions close. While starting, the
    start-up is cancelled."""
    runner = asyncio.create_task(bot.start(token))
    waiter = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if runner.done():
            runner.result()  # the bot stopped by itself (or failed to log in: raise that)
            return
        stage = bot.stage()
        bot.stop_by(stop.received + SENDS_GRACE, stop.received + STOP_BUDGET)
        if stage != READY:
            runner.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(runner, timeout=stop.left(STOP_BUDGET))
            await bot.close()
        else:
            _LOGGER.info(
                "%s received: closing within %.0f s (a second signal exits at once)",
                stop.cause,
                STOP_BUDGET,
            )
            await bot.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                # (a floor: the runner ends on the gateway's close, which has just happened)
                await asyncio.wait_for(runner, timeout=max(stop.left(STOP_BUDGET), 0.5))
        stop.say(stage)
    finally:
        waiter.cancel()
