"""Stopping ``onair run`` on SIGTERM (``systemctl stop``, ``docker stop``) or SIGINT (Ctrl+C), at
any stage: one line that says which signal came, at which stage, and how long stopping took.

While the bot is still starting nothing it runs needs a graceful end (no announcement is in
flight before the gateway is ready), so the start-up is cancelled at once instead of waiting
for the stage it is in (a login or a command sync) to finish or time out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Iterator
from typing import Protocol

_LOGGER = logging.getLogger("onair")
STOP_TIMEOUT = 8.0  # seconds the gateway may take to close after the services have stopped
READY = "ready"


class Stoppable(Protocol):
    """What stopping needs of the bot (``OnAirBot``)."""

    def stage(self) -> str: ...

    async def start(self, token: str, *, reconnect: bool = True) -> None: ...

    async def close(self) -> None: ...


class Stop:
    """Set once by the first SIGTERM or SIGINT (or by ``set``); says its line once."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self.cause = ""
        self._received = 0.0
        self._said = False

    def is_set(self) -> bool:
        return self._event.is_set()

    async def wait(self) -> None:
        await self._event.wait()

    def set(self, cause: str = "stop") -> None:
        if not self._event.is_set():
            self.cause, self._received = cause, time.monotonic()
            self._event.set()

    def line(self, stage: str) -> str:
        seconds = time.monotonic() - self._received
        if stage == READY:
            return f"{self.cause} received: stopped in {seconds:.2f} s"
        return f"{self.cause} received while starting ({stage}); stopped in {seconds:.2f} s"

    def say(self, stage: str) -> None:
        """Log the one line, once, when a signal stopped OnAir."""
        if self.is_set() and not self._said:
            self._said = True
            _LOGGER.info("%s", self.line(stage))


@contextlib.contextmanager
def stop_on_signals(stop: Stop) -> Iterator[None]:
    """SIGTERM and SIGINT set ``stop`` (on the event loop: no KeyboardInterrupt mid-await)."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for signum in signals:
        loop.add_signal_handler(signum, stop.set, signal.Signals(signum).name)
    try:
        yield
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)


async def run_until_signalled(bot: Stoppable, token: str, stop: Stop) -> None:
    """Run until the bot stops or ``stop`` is set (a signal). Once ready it stops gracefully:
    polling stops, sends in flight finish or give their delivery back (it stays pending for the
    next run), the gateway and sessions close. While starting, the start-up is cancelled."""
    runner = asyncio.create_task(bot.start(token))
    waiter = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if runner.done():
            runner.result()  # the bot stopped by itself (or failed to log in: raise that)
            return
        stage = bot.stage()
        if stage != READY:
            runner.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(runner, timeout=STOP_TIMEOUT)
            await bot.close()
        else:
            await bot.close()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(runner, timeout=STOP_TIMEOUT)
        stop.say(stage)
    finally:
        waiter.cancel()
