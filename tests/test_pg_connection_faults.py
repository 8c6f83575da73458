"""PostgreSQL cuts OnAir's connections (``pg_terminate_backend``, a fast restart, a failover):
no play is lost, the history catches up, the leases recover, and the log says so in one line.

The bot reaches PostgreSQL through a loopback relay (``tests/support/pgrelay.py``) that keeps
the client side of a killed connection open after the server's FATAL message, so asyncpg's pool
hands the dying connections out, as it does over a real network, every time. The real bot runs
against the fake Discord and the station simulator on a manual clock.
"""

from __future__ import annotations

import logging

import pytest

from bot.simulator import TRACKS

from .support.botenv import STATION_KEY, fake_discord_fixture, running_bot, subscription_config
from .support.fakediscord import FakeDiscord
from .support.pgrelay import PgRelay
from .support.stations import programme_sim_fixture
from .support.storage_backends import admin_connection, reset_postgres
from .support.waiting import wait_for

CHANNELS = 20
TRACK = 60.0
# Long leases: the watch lease tick and the delivery sweep (each a third of its lease) do not
# run by themselves during the test, so the outage meets the fan-out first, and the tick when
# the test wakes it.
CONFIG = "[announcer]\nwatch_lease = 300\ndelivery_lease = 300\n"

fake = fake_discord_fixture(channels_per_guild=CHANNELS)


programme_sim = programme_sim_fixture(
    "programme_sim", [(track, TRACK) for track in TRACKS[:4]], key=STATION_KEY
)


def copies(fake: FakeDiscord, title: str) -> list[int]:
    """How many messages showing ``title`` each channel holds."""
    return [
        sum(
            1
            for mid in fake.channel_messages[channel]
            if any(e.get("title") == title for e in fake.messages[mid].get("embeds") or [])
        )
        for channel in fake.guilds[0].channels
    ]


async def terminate_onair(url: str) -> int:
    """Kill every other session on the test database (all of them OnAir's), as an
    administrator or a failover would; how many."""
    async with admin_connection(url) as admin:
        rows = await admin.fetch(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    return len(rows)


async def lease_end(url: str) -> float:
    async with admin_connection(url) as admin:
        value = await admin.fetchval("SELECT MAX(lease_until) FROM watch_leases")
    return float(value)


async def poll(env) -> None:  # type: ignore[no-untyped-def]
    """Run the station's watch job now and wait until the poll is over (its fan-out started)."""
    announcer = env.bot.announcer
    watch = announcer.watched()[0]
    await wait_for(lambda: not watch.busy)
    before = watch.status.polls
    announcer.poll_now(watch)
    await wait_for(lambda: watch.status.polls > before and not watch.busy)


def onair_records(caplog: pytest.LogCaptureFixture, start: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records[start:] if r.name.startswith("onair")]


@pytest.mark.e2e
async def test_cut_connections_lose_no_play_and_log_one_warning(
    postgres_url, programme_sim, fake, caplog
):
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="onair")
    await reset_postgres(postgres_url)
    guild = fake.guilds[0]
    config = CONFIG + "".join(subscription_config(guild.id, c) for c in guild.channels)
    async with PgRelay(postgres_url, hold=120.0) as relay:
        options = {"ONAIR_DATABASE_URL": relay.url}
        async with running_bot(
            programme_sim, fake=fake, extra_config=config, env_extra=options
        ) as env:
            announcer = env.bot.announcer
            await fake.wait_for(lambda: copies(fake, TRACKS[0].title) == [1] * CHANNELS)
            await announcer.idle()

            # 1. Every connection is cut while idle; the next track is detected.
            start = len(caplog.records)
            fatals = relay.fatals
            killed = await terminate_onair(postgres_url)
            assert killed >= 3  # the pool, the watch leases' pool, the play listener
            await wait_for(lambda: relay.fatals - fatals >= killed)
            programme_sim.clock.advance(TRACK)
            await poll(env)
            await fake.wait_for(lambda: copies(fake, TRACKS[1].title) == [1] * CHANNELS)
            await announcer.idle()
            assert copies(fake, TRACKS[1].title) == [1] * CHANNELS

            async def in_history() -> bool:
                rows = await env.bot.storage.fetch("SELECT title FROM plays ORDER BY started")
                return [r[0] for r in rows] == [TRACKS[0].title, TRACKS[1].title]

            await wait_for(in_history)
            states = await env.bot.storage.fetch(
                "SELECT state, COUNT(*) FROM deliveries GROUP BY state"
            )
            assert dict(states) == {"sent": 2 * CHANNELS}  # no delivery left leased
            await wait_for(
                lambda: any("storage works again" in r.message for r in caplog.records[start:])
            )
            records = onair_records(caplog, start)
            warnings = [r for r in records if r.levelno >= logging.WARNING]
            assert len(warnings) == 1, [r.message for r in warnings]
            assert "until it works again" in warnings[0].message
            assert all(r.exc_info is None for r in records)

            # 2. The watch lease tick meets a cut connection: it renews at once, not a third
            # of the lease (100 s) later. A first tick puts a live connection in its pool.
            assert announcer.fleet is not None
            before = await lease_end(postgres_url)

            async def renewed() -> bool:
                return await lease_end(postgres_url) > before

            announcer.fleet.wake()
            await wait_for(renewed)
            start = len(caplog.records)
            before = await lease_end(postgres_url)
            fatals = relay.fatals
            killed = await terminate_onair(postgres_url)
            await wait_for(lambda: relay.fatals - fatals >= killed)
            announcer.fleet.wake()
            await wait_for(renewed)
            assert announcer.watched()[0].owned
            await wait_for(
                lambda: any("storage works again" in r.message for r in caplog.records[start:])
            )
            records = onair_records(caplog, start)
            warnings = [r for r in records if r.levelno >= logging.WARNING]
            assert len(warnings) == 1, [r.message for r in warnings]
            assert all(r.exc_info is None for r in records)
    assert relay.held >= killed  # the relay did keep the killed connections open


def test_connection_errors_are_storage_errors_and_bugs_are_not():
    import asyncpg
    from asyncpg import exceptions as pg

    from bot.storage import pgerrors

    dying = [
        pg.InternalClientError("cannot switch to state 12; another operation is in progress"),
        pg.ConnectionDoesNotExistError("connection was closed in the middle of operation"),
        pg.InterfaceError("connection is closed"),
        pg.ConnectionFailureError("connection failure"),
        pg.AdminShutdownError("terminating connection due to administrator command"),
        pg.CannotConnectNowError("the database system is starting up"),
        ConnectionResetError("reset by peer"),
        ConnectionRefusedError("refused"),
    ]
    for error in dying:
        assert pgerrors.connection_lost(error), error
        assert pgerrors.is_storage_error(error), error
    transient = [
        TimeoutError(),
        pg.DeadlockDetectedError("deadlock"),
        pg.SerializationError("could not serialize"),
        pg.DiskFullError("no space left"),
        pg.TooManyConnectionsError("too many clients"),
        pg.ReadOnlySQLTransactionError("read-only transaction"),
        pg.LockNotAvailableError("lock not available"),
        pg.QueryCanceledError("statement timeout"),
    ]
    for error in transient:
        assert pgerrors.is_storage_error(error), error
        assert not pgerrors.connection_lost(error), error
    bugs = [
        pg.PostgresSyntaxError("syntax error at or near"),
        pg.UndefinedColumnError("column does not exist"),
        pg.UndefinedTableError("relation does not exist"),
        pg.UniqueViolationError("duplicate key"),
        pg.InvalidTextRepresentationError("invalid input syntax"),
        pg.DataError("invalid input for query argument"),
        pg.ClientConfigurationError("bad setting"),
        asyncpg.PostgresError("no sqlstate"),
        ValueError("a bug"),
        KeyError("a bug"),
    ]
    for error in bugs:
        assert not pgerrors.is_storage_error(error), error
        assert not pgerrors.connection_lost(error), error
