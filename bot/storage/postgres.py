"""PostgreSQL backend through asyncpg (a pool), for several bot processes sharing one database."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar

from .base import Row, Statement, Storage

_PLACEHOLDER = re.compile(r"\?")


def to_dollar(sql: str) -> str:
    """``?`` placeholders (the portable style the queries are written in) to ``$1, $2, ...``."""
    counter = iter(range(1, 10_000))
    return _PLACEHOLDER.sub(lambda _: f"${next(counter)}", sql)


class PostgresStorage(Storage):
    dialect: ClassVar[dict[str, str]] = {
        "id": "BIGSERIAL PRIMARY KEY",
        "real": "DOUBLE PRECISION",
        "blob": "BYTEA",
    }

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10) -> None:
        self.url = url
        self.min_size = min_size
        self.max_size = max_size
        self._pool: Any = None

    async def open(self) -> PostgresStorage:
        import asyncpg  # imported here: SQLite-only deployments never load it

        self._pool = await asyncpg.create_pool(
            self.url, min_size=self.min_size, max_size=self.max_size, command_timeout=30
        )
        async with self._pool.acquire() as connection, connection.transaction():
            # One migrator at a time when several processes start together.
            await connection.execute("SELECT pg_advisory_xact_lock(724011)")
            await connection.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
            )
            current = await connection.fetchval("SELECT MAX(version) FROM schema_version") or 0
            for version, script in enumerate(self.migration_scripts(), start=1):
                if version > current:
                    await connection.execute(script)
                    await connection.execute(
                        "INSERT INTO schema_version (version) VALUES ($1)", version
                    )
        return self

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        status: str = await self._pool.execute(to_dollar(sql), *params)
        # asyncpg returns e.g. "INSERT 0 1", "UPDATE 3", "DELETE 0"
        tail = status.rsplit(" ", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        records = await self._pool.fetch(to_dollar(sql), *params)
        return [tuple(record) for record in records]

    async def execute_atomic(self, statements: Sequence[Statement]) -> list[int]:
        counts = []
        async with self._pool.acquire() as connection, connection.transaction():
            for sql, params in statements:
                status: str = await connection.execute(to_dollar(sql), *params)
                tail = status.rsplit(" ", 1)[-1]
                counts.append(int(tail) if tail.isdigit() else 0)
        return counts

    async def write_fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self.fetch(sql, params)  # each pool call is its own transaction

    def is_storage_error(self, error: BaseException) -> bool:
        import asyncpg

        return isinstance(
            error, asyncpg.PostgresError | asyncpg.InterfaceError | OSError | TimeoutError
        )
