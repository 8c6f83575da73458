"""Waiting on a condition with a deadline: the suite's only way to synchronise with the bot."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.announcer.service import AnnouncerService


async def wait_for(
    condition: Callable[[], bool | Awaitable[bool]], within: float = 10.0, step: float = 0.01
) -> None:
    """Poll ``condition`` until it holds; fail the test after ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        result = condition()
        if not isinstance(result, bool):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {within}s")
        await asyncio.sleep(step)


async def poll_watch(announcer: AnnouncerService) -> None:
    """Run the station's watch job now and wait until that poll has finished (its announcement,
    if any, is enqueued and its fan-out started: ``announcer.idle()`` then waits for it). The
    count of polls goes up as a poll starts, so it alone returned before the station answered
    (a loaded machine then announced the jingle after the test had moved on)."""
    watch = announcer.watched()[0]
    await wait_for(lambda: not watch.busy)
    before = watch.status.polls
    announcer.poll_now(watch)
    await wait_for(lambda: watch.status.polls > before and not watch.busy)
