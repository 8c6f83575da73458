"""One test's StationBroadcast, closed (its FFmpeg child with it) however the test's block ends."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import aiohttp

from bot.voice import StationBroadcast


@contextlib.asynccontextmanager
async def broadcasting(
    url: str, ffmpeg: str, session: aiohttp.ClientSession, **options: float
) -> AsyncIterator[StationBroadcast]:
    broadcast = StationBroadcast("test-station", url, ffmpeg, session=session, **options)  # type: ignore[arg-type]
    try:
        yield broadcast
    finally:
        await broadcast.close()
