"""Storage fixtures for both backends: SQLite always, PostgreSQL when a server is reachable."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from bot.storage import PostgresStorage, SqliteStorage, Storage

POSTGRES_ENV = "ONAIR_TEST_POSTGRES_URL"
TABLES = (
    "claims",
    "watch_leases",
    "station_state",
    "shared_secrets",
    "announcements",
    "deliveries",
    "subscriptions",
    "plays",
    "guild_stations",
    "guild_settings",
    "voice_sessions",
    "guild_voice",
    "scheduled_posts",
    "alert_subscriptions",
    "station_alert_state",
    "recaps",
    "voice_status",
    "guild_show_events",
    "show_events",
    "likes",
    "song_requests",
    "guild_requests",
    "guild_request_stations",
    "search_tokens",
    "user_stations",
    "song_votes",
    "vote_polls",
    "station_schedules",
    "song_links",
    "schema_version",
)


@contextlib.asynccontextmanager
async def admin_connection(url: str) -> AsyncIterator[Any]:
    """A connection of the test's own, beside OnAir's pool (as an administrator has one)."""
    import asyncpg

    connection = await asyncpg.connect(url, timeout=5)
    try:
        yield connection
    finally:
        await connection.close()


def worker_url(url: str, worker: str) -> str:
    """The database of one pytest-xdist worker: the given one's name plus the worker's id.

    The storage and fleet tests drop every table; two workers on one database would drop each
    other's tables in the middle of a test, so each worker has its own (onair_test_gw0, ...).
    """
    parts = urlsplit(url)
    name = parts.path.lstrip("/") or "postgres"
    return urlunsplit(parts._replace(path=f"/{name}_{worker}"))


async def _create_database(url: str, name: str) -> None:
    import asyncpg

    try:
        connection = await asyncpg.connect(url, timeout=5)
    except (OSError, Exception):  # no server, or a login refused: the tests skip
        return
    try:
        found = await connection.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", name)
        # Suppressed: another run made it between the look and the CREATE; it is there, as wanted.
        if not found:
            with contextlib.suppress(asyncpg.DuplicateDatabaseError):
                await connection.execute(f'CREATE DATABASE "{name}"')
    finally:
        await connection.close()


def use_worker_database(worker: str) -> None:
    """Points POSTGRES_ENV at this xdist worker's own database, created when missing.

    Set in the worker's environment before any test runs, so fixtures, helpers and the `onair`
    child processes of the fleet tests all see the worker's URL. A server that cannot be
    reached is left to the tests, which skip as they do without one; a server that refuses
    CREATE DATABASE fails the run (a shared database across workers would make tests flaky).
    """
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        return
    mine = worker_url(url, worker)
    asyncio.run(_create_database(url, urlsplit(mine).path.lstrip("/")))
    os.environ[POSTGRES_ENV] = mine


async def reset_postgres(url: str) -> None:
    async with admin_connection(url) as connection:
        for table in TABLES:
            await connection.execute(f"DROP TABLE IF EXISTS {table} CASCADE")


async def open_backend(kind: str, tmp_path) -> Storage:  # type: ignore[no-untyped-def]
    if kind == "sqlite":
        return await SqliteStorage(str(tmp_path / "onair.sqlite3")).open()
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"PostgreSQL tests need {POSTGRES_ENV} (scripts/start-postgres prints one)")
    try:
        await reset_postgres(url)
    except (OSError, Exception) as error:  # asyncpg raises its own errors for refused logins
        pytest.skip(f"no PostgreSQL server at {POSTGRES_ENV}: {type(error).__name__}")
    return await PostgresStorage(url).open()
