"""Storage fixtures for both backends: SQLite always, PostgreSQL when a server is reachable."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from typing import Any

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
