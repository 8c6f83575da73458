"""The simulator stations the shared fixtures start: their keys (test values, never real
keys) and a station client with fast retries for them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import aiohttp
import pytest

from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, ManualClock, Programme, StationSimulator
from bot.simulator.library import LibraryItem
from bot.simulator.programme import Slot
from bot.station import RetryPolicy, StationClient

KEY = "sekrit-KEY-0123456789"  # the ``simulator`` fixture's station 1 (manual clock)
# track 0-20 s, jingle 20-25, track 25-45, live 45-105, track 105-125 (then it repeats).
# Each track is reported 40 s long and cut at 20 s (a play-out's early switch): a track, not a
# jingle (shorter than 30 s), on a clock the tests can step through quickly.
TRACK_EARLY = 20.0
ONE_OF_EACH: list[tuple[LibraryItem, float] | Slot] = [
    Slot(TRACKS[0], 20.0, TRACK_EARLY),
    (JINGLES[0], 5.0),
    Slot(TRACKS[1], 20.0, TRACK_EARLY),
    (LIVE_SHOW, 60.0),
    Slot(TRACKS[2], 20.0, TRACK_EARLY),
]


def make_client(sim: StationSimulator, session: aiohttp.ClientSession, **kw: Any) -> StationClient:
    """A client for station 1 of ``sim`` that retries fast (tests wait on failures)."""
    kw.setdefault("retry", RetryPolicy(tries=3, base_delay=0.01, budget=3.0))
    kw.setdefault("timeout", aiohttp.ClientTimeout(total=1.0, connect=1.0))
    return StationClient(sim.base_url, 1, kw.pop("key", KEY), session=session, **kw)


@contextlib.asynccontextmanager
async def programme_simulator(
    slots: Sequence[tuple[LibraryItem, float] | Slot],
    *,
    key: str,
    public_url: str | None = None,
    clock: ManualClock | None = None,
) -> AsyncIterator[StationSimulator]:
    """Station 1 playing ``slots`` (item, seconds) from a second ago, on a clock the test moves
    (``sim.clock``; ``clock`` when the test has one): what the bot-level tests of announcements,
    alerts and shows run against."""
    clock = clock or ManualClock()
    simulator = StationSimulator(clock=clock)
    options: dict[str, Any] = {"public_url": public_url} if public_url else {}
    simulator.add_station(1, key=key, programme=Programme(slots, epoch=clock() - 1.0), **options)
    async with serving(simulator):
        yield simulator


def programme_sim_fixture(
    name: str,
    slots: Sequence[tuple[LibraryItem, float] | Slot],
    *,
    key: str,
    public_url: str | None = None,
) -> Any:
    """A pytest fixture called ``name`` that yields :func:`programme_simulator` for the test.
    A test module assigns it: ``sim = programme_sim_fixture("sim", SLOTS, key=KEY)``."""

    @pytest.fixture(name=name)
    async def fixture() -> AsyncIterator[StationSimulator]:
        async with programme_simulator(slots, key=key, public_url=public_url) as simulator:
            yield simulator

    return fixture


@contextlib.asynccontextmanager
async def serving(simulator: StationSimulator) -> AsyncIterator[StationSimulator]:
    """The simulator answering for the block (its stations added), stopped however it ends."""
    await simulator.start()
    try:
        yield simulator
    finally:
        await simulator.stop()
