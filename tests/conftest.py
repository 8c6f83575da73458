"""Shared fixtures only (helpers live in tests/support and are imported explicitly).

Fixture names mean one thing across the suite: ``simulator`` is one station on a manual clock,
``live_simulator`` two stations on the real clock, ``onair`` the real bot against a fresh fake
Discord and ``live_simulator``, ``guild_sim``/``guild_fake``/``dev_bot`` the setting of the
guild-admin tests, ``sim_url`` an ``onair simulate`` child process, ``storage`` each backend
in turn, ``postgres_url`` the fleet tests' database, ``ffmpeg`` the voice tests' decoder.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import aiohttp
import pytest

from bot.simulator import ManualClock, StationSimulator
from bot.voice import find_ffmpeg

from .support.botenv import (
    DEV_OVERRIDE,
    GUILD_KEY,
    SECRET,
    STATION_KEY,
    BotEnv,
    fake_discord_fixture,
    running_bot,
)
from .support.cli import KEY as CLI_KEY
from .support.cli import ONAIR, ROOT
from .support.fakediscord import FakeDiscord
from .support.stations import KEY, serving
from .support.storage_backends import POSTGRES_ENV, open_backend, use_worker_database


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (scripts/test runs `-n 2`), each worker its own PostgreSQL database."""
    worker = getattr(config, "workerinput", {}).get("workerid")
    if worker:
        use_worker_database(worker)


@pytest.fixture(autouse=True, scope="session")
def no_dotenv_from_the_checkout() -> Iterator[None]:
    """`onair` reads .env from its working directory (the checkout, in most tests): a
    developer's own .env there (compose's) must not feed the suite's child processes.
    tests/test_envfile.py reads files of its own."""
    saved = os.environ.get("ONAIR_ENV_FILE")
    os.environ["ONAIR_ENV_FILE"] = ""
    yield
    if saved is None:
        del os.environ["ONAIR_ENV_FILE"]
    else:
        os.environ["ONAIR_ENV_FILE"] = saved


@pytest.fixture(scope="session")
def ffmpeg() -> str:
    """The FFmpeg the voice tests decode with (the bundled one, or the machine's)."""
    binary = find_ffmpeg()
    assert binary is not None, "no FFmpeg: install the imageio-ffmpeg wheel (pip install -e .)"
    return binary.path


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def simulator(clock: ManualClock) -> AsyncIterator[StationSimulator]:
    sim = StationSimulator(clock=clock)
    sim.add_station(1, key=KEY, seed=3)
    async with serving(sim):
        yield sim


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


@pytest.fixture
async def live_simulator() -> AsyncIterator[StationSimulator]:
    """A simulator on the real clock (Discord-level tests run the bot in real time)."""
    sim = StationSimulator()
    berlin = ZoneInfo("Europe/Berlin")  # the zone the test config gives these stations
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=berlin)
    sim.add_station(2, key=STATION_KEY, seed=4, name="Second Station", zone=berlin)
    async with serving(sim):
        yield sim


@pytest.fixture
async def onair(live_simulator: StationSimulator) -> AsyncIterator[BotEnv]:
    async with running_bot(live_simulator) as env:
        yield env


@pytest.fixture
async def guild_sim() -> AsyncIterator[StationSimulator]:
    """The owner's station 1 and station 5, which a guild admin adds with ``GUILD_KEY``."""
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm")
    sim.add_station(5, key=GUILD_KEY, seed=5, name="Guild Radio")
    async with serving(sim):
        yield sim


# A fake Discord with two guilds of two channels (guild isolation needs a second guild).
guild_fake = fake_discord_fixture("guild_fake", guild_count=2, channels_per_guild=2)


@pytest.fixture
def dev_bot(
    guild_sim: StationSimulator, guild_fake: FakeDiscord, caplog: pytest.LogCaptureFixture
) -> Callable[..., AbstractAsyncContextManager[BotEnv]]:
    """Starts the bot on ``guild_fake`` with a secret key and loopback stations allowed."""
    caplog.set_level(logging.DEBUG)

    def start(**kw: Any) -> AbstractAsyncContextManager[BotEnv]:
        return running_bot(
            guild_sim,
            fake=guild_fake,
            env_extra={"ONAIR_SECRET_KEY": SECRET, **kw.pop("env", {})},
            bot_extra=DEV_OVERRIDE,
            **kw,
        )

    return start


@pytest.fixture(scope="module")
def sim_url() -> Iterator[str]:
    """``onair simulate`` as a child process (key ``tests.support.cli.KEY``); its base URL."""
    proc = subprocess.Popen(
        [*ONAIR, "simulate", "--port", "0", "--key", CLI_KEY, "--speed", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+)", line)
        assert match, f"simulate printed {line!r}"
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def postgres_url() -> str:
    """The fleet tests' PostgreSQL (each process of a fleet opens its own connection)."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"the fleet tests need {POSTGRES_ENV} (scripts/start-postgres prints one)")
    return url


@pytest.fixture(params=["sqlite", "postgres"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """Each storage test on both backends (PostgreSQL skipped without ONAIR_TEST_POSTGRES_URL)."""
    store = await open_backend(request.param, tmp_path)
    yield store
    await store.close()
