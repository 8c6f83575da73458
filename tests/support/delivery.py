"""What the crash-safe delivery tests use, and the fleet and alert-crash tests share: ``onair run``
in a child process (``Child``), a Discord that holds posts (``Gate``), a station on one long
track, the 20-channel subscriptions, and what was delivered.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.simulator import TRACKS, ManualClock, Programme, StationSimulator
from bot.simulator.library import LibraryItem
from bot.simulator.programme import Slot

from .botenv import (
    STATION_KEY,
    subscription_config,
)
from .fakediscord import FakeDiscord, Recorded
from .onair_child import OnAirChild
from .stations import serving
from .waiting import poll_watch

BERLIN = ZoneInfo("Europe/Berlin")  # the zone tests/support/botenv.py gives the station
CHANNELS = 20
POST = re.compile(r"^/channels/(\d+)/messages$")
# One long track, so the play on air stays the same across kills and restarts; between the two,
# BETWEEN on air for 5 s (reported at its own length, cut early: a track, not a jingle).
BETWEEN = TRACKS[2]
SLOTS: list[tuple[LibraryItem, float] | Slot] = [
    (TRACKS[0], 3600.0),
    Slot(BETWEEN, 5.0, BETWEEN.seconds - 5.0),
    (TRACKS[1], 3600.0),
]


@pytest.fixture(name="programme_sim")
async def programme_sim_fixture() -> AsyncIterator[StationSimulator]:
    clock = ManualClock()
    simulator = StationSimulator(clock=clock)
    simulator.add_station(
        1, key=STATION_KEY, programme=Programme(SLOTS, epoch=clock() - 1.0), seed=3, zone=BERLIN
    )
    async with serving(simulator):
        yield simulator


def subscriptions(fake: FakeDiscord, count: int = CHANNELS) -> str:
    guild = fake.guilds[0]
    return "".join(subscription_config(guild.id, channel) for channel in guild.channels[:count])


def is_post(record: Recorded) -> bool:
    return record.method == "POST" and POST.match(record.route) is not None


def messages_with(fake: FakeDiscord, title: str) -> dict[int, int]:
    """Messages Discord holds per channel whose embed shows ``title``."""
    counts = {}
    for channel in fake.guilds[0].channels:
        counts[channel] = sum(
            1
            for mid in fake.channel_messages[channel]
            if any(e.get("title") == title for e in fake.messages[mid].get("embeds") or [])
        )
    return counts


class Gate:
    """Holds message posts after the first ``allow`` until ``open()``: a Discord slowed down."""

    def __init__(self, allow: int) -> None:
        self.allow = allow
        self.arrived = 0
        self.released = asyncio.Event()

    async def __call__(self, record: Recorded) -> None:
        if is_post(record):
            self.arrived += 1
            if self.arrived > self.allow:
                await self.released.wait()

    def open(self) -> None:
        self.released.set()


class Child(OnAirChild):
    """``onair run`` in a child process, through tests/support/run_against_fake.py; each start
    writes its own log (run-1.log, run-2.log, ...)."""

    def __init__(self, tmp_path: Path, fake: FakeDiscord, config: str) -> None:
        path = tmp_path / "onair.toml"
        path.write_text(config, encoding="utf-8")
        super().__init__(tmp_path, fake, path, name="run-0")
        self.tmp_path = tmp_path
        self.runs = 0

    async def start(self) -> None:
        self.runs += 1
        self.log = self.tmp_path / f"run-{self.runs}.log"
        await super().start()

    async def stop(self, signum: int, within: float = 20.0) -> tuple[int, float]:
        """Send ``signum``; return the exit code and the seconds the process took to exit."""
        return await self.signal(signum, within)


def delivery_states(db: Path) -> dict[str, int]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
        try:
            rows = conn.execute("SELECT state, COUNT(*) FROM deliveries GROUP BY state").fetchall()
        except sqlite3.OperationalError:
            return {}  # not created yet
    return {str(state): int(count) for state, count in rows}


async def all_sent(db: Path) -> bool:
    return await asyncio.to_thread(delivery_states, db) == {"sent": CHANNELS}


async def poll(env: Any) -> None:
    """Run the station's watch job now and wait until that poll has finished (its announcement,
    if any, is enqueued and its fan-out started: ``announcer.idle()`` then waits for it). The
    count of polls goes up as a poll starts, so it alone returned before the station answered
    (a loaded machine then announced the jingle after the test had moved on)."""
    await poll_watch(env.bot.announcer)
