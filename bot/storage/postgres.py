"""PostgreSQL backend through asyncpg (a pool), for several bot processes sharing one database."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from .base import Storage, check_schema, log_upgrade
from .health import StorageHealth
from .primitives import Row, Statement
from .search_tokens import TAKE_TOKEN_SQL, token_window

_PLACEHOLDER = re.compile(r"\?")
_LOGGER = logging.getLogger("onair.storage")
PLAYS_CHANNEL = "onair_plays"
# Watch leases run on the database's clock, so processes on hosts whose clocks disagree still
# agree on when a lease ran out.
_NOW = "EXTRACT(EPOCH FROM clock_timestamp())"
CLOSE_TIMEOUT = 3.0  # seconds a pool gets to close gracefully before it is terminated


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
    fleet: ClassVar[bool] = True

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 10) -> None:
        self.url = url
        self.min_size = min_size
        self.max_size = max_size
        self._pool: Any = None
        # The watch leases' own connection: a renewal must not queue behind a burst of fan-out
        # queries in the main pool, or the lease runs out while its holder is alive and busy.
        self._leases: Any = None
        self._leases_lock = asyncio.Lock()
        self._listeners: set[PgListener] = set()
        self.health = StorageHealth()

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
            scripts = self.migration_scripts()
            check_schema(current, len(scripts))
            for version, script in enumerate(scripts, start=1):
                if version > current:
                    await connection.execute(script)
                    await connection.execute(
                        "INSERT INTO schema_version (version) VALUES ($1)", version
                    )
        log_upgrade(current, len(scripts))
        return self

    async def close(self) -> None:
        for pool in (self._leases, self._pool):
            if pool is None:
                continue
            # A graceful close waits for the server to see each connection go; a connection the
            # server already cut may never answer, so it is dropped after a few seconds.
            try:
                await asyncio.wait_for(pool.close(), CLOSE_TIMEOUT)
            except Exception as error:
                if not self.is_storage_error(error):
                    raise
                pool.terminate()
        self._leases = self._pool = None

    async def _after_failure(self, error: BaseException) -> None:
        """A dead connection makes every connection to that server suspect (a restart or a
        failover cut them all, and the pool may not have seen their close yet): the pools
        replace theirs at their next use and the play listener reconnects, so one outage fails
        a handful of operations, not one per pooled connection for minutes."""
        from . import pgerrors  # imported here: SQLite-only deployments never load asyncpg

        if pgerrors.connection_lost(error):
            await self._expire_connections()

    async def _expire_connections(self) -> None:
        for pool in (self._pool, self._leases):
            if pool is not None:
                await pool.expire_connections()
        for listener in self._listeners:
            listener.reconnect()

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        status: str = await self._monitored(
            lambda: self._pool.execute(to_dollar(sql), *params), write=True
        )
        # asyncpg returns e.g. "INSERT 0 1", "UPDATE 3", "DELETE 0"
        tail = status.rsplit(" ", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        records = await self._monitored(lambda: self._pool.fetch(to_dollar(sql), *params))
        return [tuple(record) for record in records]

    async def execute_atomic(
        self, statements: Sequence[Statement], *, guarded: bool = False
    ) -> list[int]:
        return await self._monitored(lambda: self._atomic(statements, guarded), write=True)

    async def _atomic(self, statements: Sequence[Statement], guarded: bool) -> list[int]:
        counts: list[int] = []
        async with self._pool.acquire() as connection, connection.transaction():
            for sql, params in statements:
                if guarded and counts and not counts[0]:
                    counts.append(0)
                    continue
                status: str = await connection.execute(to_dollar(sql), *params)
                tail = status.rsplit(" ", 1)[-1]
                counts.append(int(tail) if tail.isdigit() else 0)
        return counts

    async def write_fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        # Each pool call is its own transaction.
        records = await self._monitored(
            lambda: self._pool.fetch(to_dollar(sql), *params), write=True
        )
        return [tuple(record) for record in records]

    def is_storage_error(self, error: BaseException) -> bool:
        from . import pgerrors  # imported here: SQLite-only deployments never load asyncpg

        return pgerrors.is_storage_error(error)

    # Fleet coordination ------------------------------------------------------------------

    async def take_search_token(
        self, station: str, per_second: float, *, at: float | None = None
    ) -> bool:
        window, tokens = token_window(per_second)
        row = await self._monitored(
            lambda: self._pool.fetchrow(TAKE_TOKEN_SQL, station, tokens, window, at), write=True
        )
        return row is not None

    async def _lease_pool(self) -> Any:
        import asyncpg

        async with self._leases_lock:
            if self._leases is None:
                self._leases = await asyncpg.create_pool(
                    self.url, min_size=1, max_size=1, command_timeout=10
                )
        return self._leases

    async def _on_leases(self, method: str, sql: str, *args: Any) -> Any:
        """``method`` (fetch, execute) of the watch leases' own pool, recorded in ``health``."""

        async def run() -> Any:
            return await getattr(await self._lease_pool(), method)(sql, *args)

        return await self._monitored(run, write=True)

    async def renew_watches(self, owner: str, lease: float) -> set[str]:
        rows = await self._on_leases(
            "fetch",
            f"UPDATE watch_leases SET lease_until = {_NOW} + $2 WHERE owner = $1 RETURNING job_id",
            owner,
            lease,
        )
        return {str(r[0]) for r in rows}

    async def acquire_watches(self, job_ids: Sequence[str], owner: str, lease: float) -> set[str]:
        if not job_ids:
            return set()
        # A read first: in the steady state every lease is held and nothing is written.
        free = await self._on_leases(
            "fetch",
            "SELECT j FROM unnest($1::text[]) AS j WHERE NOT EXISTS (SELECT 1 FROM watch_leases "
            f"w WHERE w.job_id = j AND w.lease_until >= {_NOW} AND w.owner <> $2)",
            list(job_ids),
            owner,
        )
        if not free:
            return set()
        rows = await self._on_leases(
            "fetch",
            "INSERT INTO watch_leases (job_id, owner, lease_until) "
            f"SELECT j, $2, {_NOW} + $3 FROM unnest($1::text[]) AS j "
            "ON CONFLICT (job_id) DO UPDATE SET owner = excluded.owner, "
            "lease_until = excluded.lease_until "
            f"WHERE watch_leases.lease_until < {_NOW} OR watch_leases.owner = excluded.owner "
            "RETURNING job_id",
            [str(r[0]) for r in free],
            owner,
            lease,
        )
        return {str(r[0]) for r in rows}

    async def release_watches(self, owner: str, job_ids: Sequence[str] | None = None) -> int:
        if job_ids is None:
            status: str = await self._on_leases(
                "execute", "DELETE FROM watch_leases WHERE owner = $1", owner
            )
        else:
            status = await self._on_leases(
                "execute",
                "DELETE FROM watch_leases WHERE owner = $1 AND job_id = ANY($2::text[])",
                owner,
                list(job_ids),
            )
        tail = status.rsplit(" ", 1)[-1]
        return int(tail) if tail.isdigit() else 0

    async def watch_owners(self) -> dict[str, str]:
        rows = await self._on_leases(
            "fetch", f"SELECT job_id, owner FROM watch_leases WHERE lease_until >= {_NOW}"
        )
        return {str(r[0]): str(r[1]) for r in rows}

    async def save_station_states(self, states: Sequence[tuple[str, str, float]]) -> None:
        if not states:
            return
        await self._on_leases(
            "execute",
            "INSERT INTO station_state (job_id, payload, fetched_at) "
            "SELECT * FROM unnest($1::text[], $2::text[], $3::float8[]) "
            "ON CONFLICT (job_id) DO UPDATE SET payload = excluded.payload, "
            "fetched_at = excluded.fetched_at WHERE station_state.fetched_at < excluded.fetched_at",
            [s[0] for s in states],
            [s[1] for s in states],
            [s[2] for s in states],
        )

    async def station_state(self, job_id: str) -> tuple[str, float] | None:
        row = await self._monitored(
            lambda: self._pool.fetchrow(
                "SELECT payload, fetched_at FROM station_state WHERE job_id = $1", job_id
            )
        )
        return (str(row[0]), float(row[1])) if row else None

    async def publish_play(self, announcement_id: int) -> None:
        await self._monitored(
            lambda: self._pool.execute(
                "SELECT pg_notify($1, $2)", PLAYS_CHANNEL, str(announcement_id)
            )
        )

    def listen_plays(
        self, callback: Callable[[int], None], on_connect: Callable[[], None]
    ) -> PgListener:
        listener = PgListener(
            self.url,
            PLAYS_CHANNEL,
            callback,
            on_connect,
            self.is_storage_error,
            self.health,
            monitored=self._monitored,
            on_close=self._listeners.discard,
        )
        self._listeners.add(listener)
        return listener


class PgListener:
    """``LISTEN`` on a dedicated connection (a pooled one would be handed to other queries),
    re-opened with backoff when it drops; a 10-s ``SELECT 1`` notices a silently dead server,
    and :meth:`reconnect` re-opens it at once when another connection was found dead."""

    def __init__(
        self,
        url: str,
        channel: str,
        callback: Callable[[int], None],
        on_connect: Callable[[], None],
        is_storage_error: Callable[[BaseException], bool],
        health: StorageHealth,
        *,
        monitored: Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]],
        check_every: float = 10.0,
        on_close: Callable[[PgListener], None] | None = None,
    ) -> None:
        self.url = url
        self.channel = channel
        self.callback = callback
        self.on_connect = on_connect
        self.is_storage_error = is_storage_error
        self.health = health
        # The storage's own way to run an operation: a dead listening connection makes the
        # pools' connections suspect too.
        self.monitored = monitored
        self.check_every = check_every
        self.on_close = on_close
        self.connected = asyncio.Event()
        self._suspect = asyncio.Event()  # another connection died: this one may have too
        self._task = asyncio.create_task(self._run())

    def reconnect(self) -> None:
        """Re-open the listening connection now (plays published meanwhile: a sweep finds
        them after the reconnection)."""
        if self.connected.is_set():
            self._suspect.set()

    def _notified(self, _connection: Any, _pid: int, _channel: str, payload: str) -> None:
        try:
            announcement_id = int(payload)
        except ValueError:
            _LOGGER.warning("ignoring a malformed %s notification", self.channel)
            return
        self.callback(announcement_id)

    async def _connect(self) -> Any:
        import asyncpg  # imported here: SQLite-only deployments never load it

        return await self.monitored(lambda: asyncpg.connect(self.url, timeout=10))

    async def _run(self) -> None:
        delay = 0.2
        while True:
            connection: Any = None
            try:
                connection = await self._connect()
                lost = asyncio.Event()
                connection.add_termination_listener(lambda _c, lost=lost: lost.set())
                await connection.add_listener(self.channel, self._notified)
                self._suspect.clear()
                self.connected.set()
                delay = 0.2
                self.on_connect()
                while not lost.is_set() and not self._suspect.is_set():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._lost_or_suspect(lost), self.check_every)
                    if not lost.is_set() and not self._suspect.is_set():
                        await self.monitored(
                            functools.partial(connection.execute, "SELECT 1", timeout=10)
                        )
                if self._suspect.is_set():
                    _LOGGER.debug("the %s listener reconnects: a connection died", self.channel)
                    delay = 0.0
                else:
                    self.health.failed(self.health.begin())
                    self.health.warn(
                        _LOGGER, "the %s listener lost its connection; reconnecting", self.channel
                    )
            except Exception as error:
                if not self.is_storage_error(error):
                    _LOGGER.exception("the %s listener failed; restarting it", self.channel)
                else:
                    self.health.warn(
                        _LOGGER,
                        "the %s listener cannot reach PostgreSQL (%s); again in %.1fs",
                        self.channel,
                        type(error).__name__,
                        delay,
                    )
            finally:
                self.connected.clear()
                if connection is not None:
                    connection.terminate()
            await asyncio.sleep(delay)
            delay = min(max(delay, 0.1) * 2, 30.0)

    async def _lost_or_suspect(self, lost: asyncio.Event) -> None:
        waits = [asyncio.ensure_future(lost.wait()), asyncio.ensure_future(self._suspect.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def close(self) -> None:
        if self.on_close is not None:
            self.on_close(self)
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
