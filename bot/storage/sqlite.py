"""SQLite backend (embedded default) through aiosqlite, which runs every call in its own thread."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

import aiosqlite

from .base import Storage, check_schema, log_upgrade
from .health import StorageHealth
from .primitives import Row, Statement
from .search_tokens import MemoryTokens


def _lower(value: str | None) -> str | None:
    return value.lower() if isinstance(value, str) else value


class SqliteStorage(Storage):
    dialect: ClassVar[dict[str, str]] = {
        "id": "INTEGER PRIMARY KEY AUTOINCREMENT",
        "real": "REAL",
        "blob": "BLOB",
    }
    single_process: ClassVar[bool] = True

    def __init__(self, path: str, *, lock_timeout: float = 5.0) -> None:
        self.path = path
        self.lock_timeout = lock_timeout  # how long a write waits for another writer's lock
        self._db: aiosqlite.Connection | None = None
        # One connection: a transaction must not interleave with other coroutines' writes.
        self._write = asyncio.Lock()
        self.health = StorageHealth()
        # One process by design: the search rate is counted in memory, no round trip.
        self._search_tokens = MemoryTokens()

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("storage is not open")
        return self._db

    async def open(self) -> SqliteStorage:
        # Opened once in a worker first: a file SQLite cannot open fails here, awaited. aiosqlite's
        # own failed connect stops its thread without waiting, and the thread's late reply can
        # meet an event loop that has closed meanwhile (a start-up failure, exit 70).
        await asyncio.to_thread(_try_open, self.path, self.lock_timeout)
        self._db = await aiosqlite.connect(self.path, timeout=self.lock_timeout)
        await self._set_wal()
        await self.db.execute("PRAGMA synchronous=NORMAL")
        # Unicode-aware LOWER() so /history search matches "Северный" as "северный".
        await self.db.create_function("lower", 1, _lower, deterministic=True)
        await self._migrate()
        return self

    async def _migrate(self) -> None:
        """Bring the schema up to date in one write transaction.

        ``BEGIN IMMEDIATE`` takes the write lock before the version is read, so processes
        starting together on a fresh file take turns: the second waits (up to ``lock_timeout``)
        and then reads the version the first one wrote. Statements run one by one, because
        ``executescript`` commits whatever transaction is open before it starts.
        """
        await self.db.execute("BEGIN IMMEDIATE")
        try:
            await self.db.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
            )
            async with self.db.execute("SELECT MAX(version) FROM schema_version") as cursor:
                row = await cursor.fetchone()
            current = (row[0] if row else None) or 0
            scripts = self.migration_scripts()
            check_schema(current, len(scripts))
            for version, script in enumerate(scripts, start=1):
                if version > current:
                    for statement in _statements(script):
                        await self.db.execute(statement)
                    await self.db.execute(
                        "INSERT INTO schema_version (version) VALUES (?)", (version,)
                    )
            await self.db.commit()
        except BaseException:
            await asyncio.shield(self._rollback())
            raise
        log_upgrade(current, len(scripts))

    async def _set_wal(self) -> None:
        """WAL mode, so readers never wait for the writer. The switch needs the file to itself,
        and SQLite answers "locked" at once instead of waiting while another process is in it,
        so it is tried again until ``lock_timeout``; a file already in WAL needs no lock."""
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                await self.db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError:
                if time.monotonic() >= deadline:
                    raise
                await asyncio.sleep(0.05)

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return (await self.execute_atomic([(sql, params)]))[0]

    async def execute_atomic(
        self, statements: Sequence[Statement], *, guarded: bool = False
    ) -> list[int]:
        return await self._monitored(lambda: self._atomic(statements, guarded), write=True)

    async def _atomic(self, statements: Sequence[Statement], guarded: bool) -> list[int]:
        async with self._transaction():
            counts: list[int] = []
            for sql, params in statements:
                if guarded and counts and not counts[0]:
                    counts.append(0)
                    continue
                cursor = await self.db.execute(sql, tuple(params))
                counts.append(cursor.rowcount)
        return counts

    async def write_fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self._monitored(lambda: self._write_fetch(sql, params), write=True)

    async def _write_fetch(self, sql: str, params: Sequence[Any]) -> list[Row]:
        async with self._transaction(), self.db.execute(sql, tuple(params)) as cursor:
            rows: list[Row] = list(await cursor.fetchall())
        return rows

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[None]:
        """One write transaction at a time on the one connection: committed when the block
        ends, rolled back (shielded from cancellation) when it raises or is cancelled."""
        async with self._write:
            try:
                yield
                await self.db.commit()
            except BaseException:
                if self._db is not None:
                    await asyncio.shield(self._rollback())
                raise

    async def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error, ValueError):
            await self.db.rollback()  # nothing to roll back, or the connection is closing

    async def take_search_token(
        self, station: str, per_second: float, *, at: float | None = None
    ) -> bool:
        return self._search_tokens.take(station, per_second, at=at)

    def is_storage_error(self, error: BaseException) -> bool:
        return isinstance(error, sqlite3.Error | OSError)

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self._monitored(lambda: self._fetch(sql, params))

    async def _fetch(self, sql: str, params: Sequence[Any]) -> list[Row]:
        async with self.db.execute(sql, tuple(params)) as cursor:
            return list(await cursor.fetchall())


def _try_open(path: str, timeout: float) -> None:
    """Open and close the database file (blocking: run in a worker)."""
    sqlite3.connect(path, timeout=timeout).close()


def _statements(script: str) -> list[str]:
    """The statements of a migration script, split where SQLite says each one ends."""
    statements: list[str] = []
    pending = ""
    for piece in script.split(";"):
        pending += piece + ";"
        if sqlite3.complete_statement(pending):
            if pending.strip(" \t\n;"):
                statements.append(pending)
            pending = ""
    return statements
