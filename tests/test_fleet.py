"""A fleet: three real ``onair run`` processes on one PostgreSQL, each running one of three
shards, all following one station. One process polls it (the watch lease holder), every play is
published to the others, and each channel gets each play once, also when the poller is killed
(kill -9) mid-programme and another process takes the station over."""

from __future__ import annotations

import asyncio
import os
import time
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from bot.simulator import TRACKS, Programme, StationSimulator
from bot.simulator.library import LibraryItem

from .botenv import STATION_KEY, config_text
from .conftest import wait_for
from .fakediscord import DISCORD_EPOCH_MS, FakeDiscord
from .storage_backends import POSTGRES_ENV, reset_postgres
from .test_delivery import BERLIN, Child

SHARDS = 3
CHANNELS = 2  # per guild; one guild per shard
TRACK_SECONDS = 6.0  # longer than a takeover (watch lease 2 s + a tick + a poll)
ORDER = [t.title for t in TRACKS[:16]]
FLEET_CONFIG = "[announcer]\ndelivery_lease = 3\nwatch_lease = 2\n"


@pytest.fixture
def postgres_url() -> str:
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"the fleet test needs {POSTGRES_ENV} (scripts/start-postgres prints one)")
    return url


@pytest.fixture
async def sim() -> AsyncIterator[StationSimulator]:
    """Tracks of 6 s in real time (the processes cannot share a manual clock)."""
    simulator = StationSimulator()
    slots: list[tuple[LibraryItem, float]] = [(t, TRACK_SECONDS) for t in TRACKS[:16]]
    simulator.add_station(
        1,
        key=STATION_KEY,
        programme=Programme(slots, epoch=time.time() - 1.0),
        seed=3,
        zone=BERLIN,
    )
    await simulator.start()
    yield simulator
    await simulator.stop()


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    """One guild on each shard: guild ids chosen so that ``(id >> 22) % 3`` is 0, 1, 2."""
    server = FakeDiscord(guild_count=SHARDS, channels_per_guild=CHANNELS)
    base = int(time.time() * 1000) - DISCORD_EPOCH_MS
    for shard, guild in enumerate(server.guilds):
        stamp = base - (base % SHARDS) + shard
        guild.id = (stamp << 22) | 7
        guild.roles[0] = guild.id  # @everyone has the guild's id
    await server.start()
    yield server
    await server.stop()


def subscriptions(fake: FakeDiscord) -> str:
    return "".join(
        f'[[subscriptions]]\nguild = {g.id}\nchannel = {c}\nstation = "main"\n'
        for g in fake.guilds
        for c in g.channels
    )


def titles(fake: FakeDiscord, channel: int) -> list[str]:
    """Announced titles in one channel, in posting order."""
    out = []
    for mid in fake.channel_messages[channel]:
        for embed in fake.messages[mid].get("embeds") or []:
            if embed.get("title"):
                out.append(str(embed["title"]))
    return out


async def lease_owner(url: str) -> str | None:
    import asyncpg

    connection = await asyncpg.connect(url, timeout=5)
    try:
        row = await connection.fetchrow(
            "SELECT owner FROM watch_leases WHERE lease_until >= "
            "EXTRACT(EPOCH FROM clock_timestamp())"
        )
    finally:
        await connection.close()
    return str(row[0]) if row else None


def pid_of(owner: str) -> int:
    return int(owner.split(":")[1])


async def test_three_processes_poll_once_and_survive_the_pollers_kill(
    postgres_url, sim, fake, tmp_path
):
    await reset_postgres(postgres_url)
    channels = [c for g in fake.guilds for c in g.channels]
    children = []
    for shard in range(SHARDS):
        home = tmp_path / f"shard{shard}"
        home.mkdir()
        config = config_text(
            sim,
            fake,
            extra=FLEET_CONFIG + subscriptions(fake),
            bot_extra=f"shard_count = {SHARDS}\nshard_ids = [{shard}]",
        )
        child = Child(home, fake, config)
        child.env["ONAIR_DATABASE_URL"] = postgres_url
        children.append(child)
    try:
        await asyncio.gather(*(child.start() for child in children))
        # Every channel of every shard gets the play on air.
        await fake.wait_for(lambda: all(titles(fake, c) for c in channels), within=45)

        def played() -> int:
            """Plays every channel has."""
            return min(len(titles(fake, c)) for c in channels)

        # Upstream info requests over two plays, counted from a play boundary.
        start = played()
        await fake.wait_for(lambda: played() > start, within=20)
        requests_before = sim.counters["info"]
        await fake.wait_for(lambda: played() >= start + 3, within=30)
        per_play = (sim.counters["info"] - requests_before) / 2
        print(f"fleet of {SHARDS}: {per_play:.2f} upstream info requests per play")
        # Three processes polling on their own would make at least 3 per play.
        assert per_play <= 2.0

        owner = await lease_owner(postgres_url)
        assert owner is not None
        (victim,) = [c for c in children if c.process and c.process.pid == pid_of(owner)]
        killed_at = time.monotonic()
        assert victim.process is not None
        victim.process.kill()
        await victim.process.wait()
        at_kill = played()

        async def taken_over() -> bool:
            current = await lease_owner(postgres_url)
            return current is not None and current != owner

        await wait_for(taken_over, within=20, step=0.05)
        takeover = time.monotonic() - killed_at
        new_owner = await lease_owner(postgres_url)
        assert new_owner is not None
        assert pid_of(new_owner) in {c.process.pid for c in children if c is not victim}
        print(f"takeover {takeover:.2f}s after kill -9 (watch lease 2 s)")

        # A play comes while the killed process's shard is down: its channels get it from the
        # outbox when the process is back.
        victim_shard = children.index(victim)
        living = [c for i, g in enumerate(fake.guilds) if i != victim_shard for c in g.channels]
        await fake.wait_for(lambda: min(len(titles(fake, c)) for c in living) > at_kill, within=20)
        await victim.start()
        await fake.wait_for(lambda: played() >= at_kill + 3, within=45)
        # Settle: every channel holds the same plays.
        await fake.wait_for(lambda: len({len(titles(fake, c)) for c in channels}) == 1, within=20)
    finally:
        for child in children:
            await child.kill_quietly()

    for channel in channels:
        seen = titles(fake, channel)
        counts = Counter(seen)
        assert max(counts.values()) == 1, (channel, counts)  # nothing doubled
        positions = sorted(ORDER.index(t) for t in seen)
        assert positions == list(range(positions[0], positions[0] + len(seen))), seen  # no gap
    assert len({tuple(titles(fake, c)) for c in channels[:CHANNELS]}) == 1
    assert "resuming announcement" in victim.output()  # what the shard missed while down
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("shard*/run-*.log"))
    assert "Traceback" not in logs
    assert "Task exception was never retrieved" not in logs
