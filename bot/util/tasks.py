"""Background tasks a service starts and must not lose."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, Self


class BackgroundTasks:
    """Each task is kept referenced until it ends (the loop holds only weak references), and
    its exception is retrieved and handed to ``failed``: none is left for the loop to report.
    Iterating gives the tasks still running (a copy: safe while they end)."""

    def __init__(self, failed: Callable[[BaseException], None]) -> None:
        self._failed = failed
        self._tasks: set[asyncio.Future[Any]] = set()

    def spawn(self, work: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[Any]) -> None:
        self._tasks.discard(task)
        error = None if task.cancelled() else task.exception()
        if error is not None:
            self._failed(error)

    def __iter__(self) -> Iterator[asyncio.Future[Any]]:
        return iter(list(self._tasks))

    def __len__(self) -> int:
        return len(self._tasks)


async def stop_task(task: asyncio.Task[Any] | None) -> None:
    """Cancel ``task`` (none: nothing to do) and wait until it has ended."""
    if task is not None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


class StartStop:
    """``async with`` for a local server that has ``start()`` and ``stop()`` (the simulator, the
    tests' fake Icecast): started on entry, stopped however the block ends."""

    async def start(self) -> Any:
        raise NotImplementedError

    async def stop(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


async def settle(works: Iterable[Awaitable[Any]], within: float) -> int:
    """Run ``works`` together for at most ``within`` seconds; cancel those still running (twice:
    a first cancel may land in a ``finally`` that waits again) and return how many were left
    unfinished. Their errors are the caller's to ignore: none is raised or left unretrieved."""
    tasks = {asyncio.ensure_future(work) for work in works}
    if not tasks:
        return 0
    _, pending = await asyncio.wait(tasks, timeout=max(within, 0.0))
    for _ in range(2):
        for task in pending:
            task.cancel()
        if pending:
            _, pending = await asyncio.wait(pending, timeout=0.1)
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: a goodbye that failed is not worth a traceback
    for task in pending:  # still ending: kept referenced until it has (no "destroyed" task)
        _ENDING.add(task)
        task.add_done_callback(_ENDING.discard)
    return sum(1 for task in tasks if task.cancelled() or not task.done())


_ENDING: set[asyncio.Future[Any]] = set()
