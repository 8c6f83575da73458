"""A fleet: three real ``onair run`` processes on one PostgreSQL, each running one of three
shards, all following one station. One process polls it (the watch lease holder), every play is
published to the others, and each channel gets each play once, also when the poller is killed
(kill -9) mid-programme and another process takes the station over."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from bot.simulator import TRACKS, Programme, StationSimulator
from bot.simulator.library import LibraryItem
from tests.support.botenv import STATION_KEY, config_text, fake_discord_fixture, subscription_config
from tests.support.fakediscord import DISCORD_EPOCH_MS, FakeDiscord
from tests.support.fleet import fleet
from tests.support.storage_backends import admin_connection, reset_postgres
from tests.support.waiting import wait_for

from .support.delivery import BERLIN, Child
from .support.stations import serving

SHARDS = 3
CHANNELS = 2  # per guild; one guild per shard
TRACK_SECONDS = 6.0  # longer than a takeover (watch lease 2 s + a tick + a poll)
ORDER = [t.title for t in TRACKS[:16]]
FLEET_CONFIG = "[announcer]\ndelivery_lease = 3\nwatch_lease = 2\n"


@pytest.fixture
async def sim() -> AsyncIterator[StationSimulator]:
    """Tracks of 6 s in real time (the processes cannot share a manual clock), each with its
    library length as DURATION: songs, not jingles (which are not announced)."""
    simulator = StationSimulator()
    slots: list[tuple[LibraryItem, float]] = [(t, TRACK_SECONDS) for t in TRACKS[:16]]
    simulator.add_station(
        1,
        key=STATION_KEY,
        programme=Programme(slots, epoch=time.time() - 1.0),
        seed=3,
        zone=BERLIN,
        library_durations=True,
    )
    async with serving(simulator):
        yield simulator


def one_guild_per_shard(server: FakeDiscord) -> None:
    """Guild ids chosen so that ``(id >> 22) % 3`` is 0, 1, 2."""
    base = int(time.time() * 1000) - DISCORD_EPOCH_MS
    for shard, guild in enumerate(server.guilds):
        stamp = base - (base % SHARDS) + shard
        guild.id = (stamp << 22) | 7
        guild.roles[0] = guild.id  # @everyone has the guild's id


fake = fake_discord_fixture(
    prepare=one_guild_per_shard, guild_count=SHARDS, channels_per_guild=CHANNELS
)


def subscriptions(fake: FakeDiscord) -> str:
    return "".join(subscription_config(g.id, c) for g in fake.guilds for c in g.channels)


def titles(fake: FakeDiscord, channel: int) -> list[str]:
    """Announced titles in one channel, in posting order."""
    out = []
    for mid in fake.channel_messages[channel]:
        for embed in fake.messages[mid].get("embeds") or []:
            if embed.get("title"):
                out.append(str(embed["title"]))
    return out


async def lease_owner(url: str) -> str | None:
    async with admin_connection(url) as connection:
        row = await connection.fetchrow(
            "SELECT owner FROM watch_leases WHERE lease_until >= "
            "EXTRACT(EPOCH FROM clock_timestamp())"
        )
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


# In one process: two announcer services on one PostgreSQL, one simulator clock ---------------


class Recording:
    """A deliverer that remembers what it sent (the Discord side is tested above)."""

    def __init__(self, name: str, log: list[tuple[str, int, str]]) -> None:
        self.name = name
        self.log = log

    async def deliver(self, sub, announcement, station, *, nonce, resumed=False):  # type: ignore[no-untyped-def]
        self.log.append((self.name, sub.channel_id, announcement.play.title))
        return


def shard_guild(shard: int, count: int, salt: int) -> int:
    return ((1_000_000 * count + shard + count * salt) << 22) | salt


async def test_one_poller_publishes_to_the_other_and_shares_its_state(postgres_url, session):
    """Service A (shard 0) takes the watch lease and polls; service B (shard 1) never polls, gets
    each play through NOTIFY for its own channels, answers /nowplaying from A's stored info, and
    takes the station over when A stops."""
    from bot.storage import Subscription

    from .support.delivery import BETWEEN, SLOTS

    guilds = {0: shard_guild(0, 2, 1), 1: shard_guild(1, 2, 2)}
    channels = {shard: [guild * 10 + i for i in range(2)] for shard, guild in guilds.items()}
    subs = tuple(
        Subscription(0, guilds[shard], channel, "main")
        for shard in guilds
        for channel in channels[shard]
    )
    sent: list[tuple[str, int, str]] = []
    async with fleet(postgres_url, session, SLOTS) as rig:
        clock, sim, station, services = rig.clock, rig.sim, rig.station, rig.services
        for name, shard in (("A", 0), ("B", 1)):
            await (await rig.service(name, shard, Recording(name, sent), subs)).start()
        a, b = services["A"], services["B"]
        (watch_a,) = a.watched()
        (watch_b,) = b.watched()
        assert watch_a.owned
        assert not watch_b.owned
        assert watch_b.status.state == "polled by another process"  # what /onair status shows

        def got(title: str) -> list[tuple[str, int]]:
            return sorted((who, channel) for who, channel, t in sent if t == title)

        expected = sorted(("A" if c in channels[0] else "B", c) for c in channels[0] + channels[1])
        await wait_for(lambda: got(TRACKS[0].title) == expected)
        assert watch_b.status.polls == 0

        # B answers /nowplaying from A's stored info, without asking the station.
        async def stored() -> bool:
            return await b.storage.station_state(watch_b.job_id) is not None

        await wait_for(stored)
        # Stored info answers while it is younger than B's cache time (5 s by default, of
        # wall-clock time a loaded machine spent before here): a cache time that cannot run out.
        b_client = b.registry.client(station)
        b_client.cache_times = dataclasses.replace(b_client.cache_times, info=3600.0)
        await wait_for(lambda: not watch_a.busy)
        requests, polls_a = sim.counters["info"], watch_a.status.polls
        shown = await b.registry.snapshot(station)
        assert shown.info.current_play() is not None
        assert shown.info.current_play().title == TRACKS[0].title  # type: ignore[union-attr]
        await wait_for(lambda: not watch_a.busy)
        # Only A's own polls (should one fall in this window) asked the station; B asked nothing.
        assert sim.counters["info"] - requests == watch_a.status.polls - polls_a

        # A stops (SIGTERM): it gives its lease back and B polls from its next tick on.
        await a.stop()
        await wait_for(lambda: watch_b.owned)
        clock.advance(3600)  # the short track
        b.poll_now(watch_b)
        await wait_for(lambda: bool(got(BETWEEN.title)))
        await b.idle()
        assert got(BETWEEN.title) == [("B", c) for c in sorted(channels[1])]
        # A's channels keep the play pending in the outbox until a shard-0 process runs.
        states = await b.storage.fetch(
            "SELECT d.state, COUNT(*) FROM deliveries d JOIN announcements n "
            "ON n.id = d.announcement_id WHERE n.play_key LIKE ? GROUP BY d.state",
            (f"%{BETWEEN.title.casefold()}%",),
        )
        assert dict(states) == {"pending": 2, "sent": 2}, states


async def test_watch_leases_have_one_holder_run_out_and_notifications_survive_a_reconnect(
    postgres_url,
):
    from bot.storage import PostgresStorage

    await reset_postgres(postgres_url)
    storage = await PostgresStorage(postgres_url).open()
    try:
        assert await storage.acquire_watches(["w1", "w2"], "A", 30) == {"w1", "w2"}
        assert await storage.acquire_watches(["w1", "w2", "w3"], "B", 30) == {"w3"}
        assert await storage.renew_watches("B", 30) == {"w3"}
        assert await storage.release_watches("A", ["w1"]) == 1
        assert await storage.acquire_watches(["w1", "w2"], "B", 30) == {"w1"}
        assert await storage.watch_owners() == {"w1": "B", "w2": "A", "w3": "B"}
        # A holder that stops renewing (a crash) loses the lease when it runs out.
        assert await storage.acquire_watches(["w4"], "A", 0.3) == {"w4"}

        async def taken() -> bool:
            return await storage.acquire_watches(["w4"], "B", 30) == {"w4"}

        await wait_for(taken, within=5, step=0.05)
        assert "w4" not in await storage.renew_watches("A", 30)

        # Published plays reach a listener, also after its connection was cut.
        heard: list[int] = []
        connects: list[float] = []
        listener = storage.listen_plays(heard.append, lambda: connects.append(time.time()))
        try:
            await asyncio.wait_for(listener.connected.wait(), 10)
            await storage.publish_play(41)
            await wait_for(lambda: heard == [41])
            await storage.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()"
            )
            await wait_for(lambda: len(connects) == 2, within=10)
            await storage.publish_play(42)
            await wait_for(lambda: heard == [41, 42])
        finally:
            await listener.close()
    finally:
        await storage.close()
