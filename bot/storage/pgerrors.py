"""Which asyncpg errors are PostgreSQL failing (retried) and which are a bug (raised).

A connection PostgreSQL cut (``pg_terminate_backend``, a fast restart, a failover) can still be
handed out by the pool before its close arrives; the query on it then fails in the client
(``InternalClientError``: "cannot switch to state 12; another operation is in progress"),
with ``InterfaceError`` ("connection is closed"), ``ConnectionDoesNotExistError`` or an
``OSError``. Those are the database failing, like the server-side classes of transient errors
(SQLSTATE 08 connection, 40 rollback, 53 resources, 57 operator intervention, 58 system, 55P03
lock not available, 25006 read-only after a failover, XX internal). A syntax error, an unknown
column, a bad value or a constraint violation is the caller's bug: retrying it cannot help.
"""

from __future__ import annotations

import asyncpg
from asyncpg import exceptions as pg

# SQLSTATE classes (first two characters) and codes that are the server failing, not the query.
TRANSIENT_CLASSES = frozenset({"08", "40", "53", "57", "58", "XX"})
TRANSIENT_CODES = frozenset({"55P03", "25006"})
# Server messages that end the session: the connection is gone after them.
SESSION_ENDING = frozenset({"57P01", "57P02", "57P03"})  # admin/crash shutdown, cannot connect
# InterfaceErrors that are the caller's (a bad argument, a wrong setting), not a dead connection.
CALLER_INTERFACE_ERRORS: tuple[type[BaseException], ...] = (
    pg.DataError,
    pg.ClientConfigurationError,
    pg.UnsupportedClientFeatureError,
    pg.UnsupportedServerFeatureError,
)


def _sqlstate(error: BaseException) -> str:
    return str(getattr(error, "sqlstate", "") or "")


def connection_lost(error: BaseException) -> bool:
    """The connection the operation ran on is dead (or was never made): every other connection
    to the same server is suspect too."""
    if isinstance(error, TimeoutError):
        return False  # (an OSError too) a slow query or server, not a dead connection
    if isinstance(error, pg.InternalClientError | OSError | pg.PostgresConnectionError):
        return True
    if isinstance(error, pg.InterfaceError):
        return not isinstance(error, CALLER_INTERFACE_ERRORS)
    if isinstance(error, asyncpg.PostgresError):
        return _sqlstate(error) in SESSION_ENDING or _sqlstate(error)[:2] == "08"
    return False


def is_storage_error(error: BaseException) -> bool:
    """PostgreSQL (or the way to it) failing: worth retrying, unlike a bug in the caller."""
    if connection_lost(error) or isinstance(error, TimeoutError):
        return True
    if isinstance(error, asyncpg.PostgresError):
        code = _sqlstate(error)
        return code[:2] in TRANSIENT_CLASSES or code in TRANSIENT_CODES
    return False
