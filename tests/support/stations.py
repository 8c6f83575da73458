"""The simulator stations the shared fixtures start: their keys (test values, never real
keys) and a station client with fast retries for them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import aiohttp

from bot.simulator import ManualClock, Programme, StationSimulator
from bot.simulator.library import LibraryItem
from bot.station import RetryPolicy, StationClient

KEY = "sekrit-KEY-0123456789"  # the ``simulator`` fixture's station 1 (manual clock)


def make_client(sim: StationSimulator, session: aiohttp.ClientSession, **kw: Any) -> StationClient:
    """A client for station 1 of ``sim`` that retries fast (tests wait on failures)."""
    kw.setdefault("retry", RetryPolicy(tries=3, base_delay=0.01, budget=3.0))
    kw.setdefault("timeout", aiohttp.ClientTimeout(total=1.0, connect=1.0))
    return StationClient(sim.base_url, 1, kw.pop("key", KEY), session=session, **kw)


@contextlib.asynccontextmanager
async def programme_simulator(
    slots: Sequence[tuple[LibraryItem, float]], *, key: str, public_url: str | None = None
) -> AsyncIterator[StationSimulator]:
    """Station 1 playing ``slots`` (item, seconds) from a second ago, on a clock the test moves
    (``sim.clock``): what the bot-level tests of announcements, alerts and shows run against."""
    clock = ManualClock()
    simulator = StationSimulator(clock=clock)
    options: dict[str, Any] = {"public_url": public_url} if public_url else {}
    simulator.add_station(1, key=key, programme=Programme(slots, epoch=clock() - 1.0), **options)
    async with serving(simulator):
        yield simulator


@contextlib.asynccontextmanager
async def serving(simulator: StationSimulator) -> AsyncIterator[StationSimulator]:
    """The simulator answering for the block (its stations added), stopped however it ends."""
    await simulator.start()
    try:
        yield simulator
    finally:
        await simulator.stop()
