"""Waiting on a condition with a deadline: the suite's only way to synchronise with the bot."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


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
