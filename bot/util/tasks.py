"""Background tasks a service starts and must not lose."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any


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
