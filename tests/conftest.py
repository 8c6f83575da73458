"""Shared fixtures: a station simulator on loopback and one aiohttp session per test."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from zoneinfo import ZoneInfo

import aiohttp
import pytest

from bot.simulator import ManualClock, StationSimulator

KEY = "sekrit-KEY-0123456789"


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


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def simulator(clock: ManualClock) -> AsyncIterator[StationSimulator]:
    sim = StationSimulator(clock=clock)
    sim.add_station(1, key=KEY, seed=3)
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


@pytest.fixture
async def live_simulator() -> AsyncIterator[StationSimulator]:
    """A simulator on the real clock (Discord-level tests run the bot in real time)."""
    sim = StationSimulator()
    berlin = ZoneInfo("Europe/Berlin")  # the zone the test config gives these stations
    sim.add_station(
        1, key="station-key-SECRET-42", seed=3, public_url="https://c9.radioboss.fm", zone=berlin
    )
    sim.add_station(2, key="station-key-SECRET-42", seed=4, name="Second Station", zone=berlin)
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


@pytest.fixture
async def onair(live_simulator: StationSimulator):  # type: ignore[no-untyped-def]
    from .botenv import running_bot

    async with running_bot(live_simulator) as env:
        yield env
