"""Checks ``onair run`` makes before it logs in, each failure one line that names the setting to
change (exit 78: systemd's unit does not restart on it, a person has to act).

- The SQLite file can be made and written where ``[database] path`` says.
- No other ``onair run`` uses the same SQLite file: an exclusive ``flock`` on ``<path>.lock``,
  held as long as the process lives. The kernel releases it when the process dies, also on
  ``kill -9``, so a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import fcntl
import os
from pathlib import Path

from ..config import Settings

DATABASE_PATH = "[database] path"
METRICS_PORT = "[metrics] port"


class PreflightError(Exception):
    """A setting that keeps OnAir from starting; ``message`` is the one line to print."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def sqlite_path(settings: Settings) -> str | None:
    """The SQLite file OnAir will use, or None (PostgreSQL, or an in-memory database)."""
    if settings.database_url or settings.database_path == ":memory:":
        return None
    return settings.database_path


def _check_writable(path: str) -> None:
    """Blocking (run in a worker): raise PreflightError when SQLite could not make or write the
    file (its journal and WAL files go in the same directory)."""
    file = Path(path)
    shown = f'{DATABASE_PATH} = "{path}"'
    directory = file.parent
    if file.is_dir():
        example = file / "onair.sqlite3"
        raise PreflightError(f"{shown} is a directory; name a file in it ({example})")
    if not directory.is_dir():
        raise PreflightError(
            f"{shown}: the directory {directory} does not exist (create it, or change the path)"
        )
    if not os.access(directory, os.W_OK | os.X_OK):
        raise PreflightError(
            f"{shown}: the directory {directory} is not writable by this user (SQLite writes its "
            "journal beside the file); give it to the user OnAir runs as, or change the path"
        )
    try:  # what SQLite will do: open it for reading and writing, made if missing
        os.close(os.open(file, os.O_RDWR | os.O_CREAT, 0o600))
    except OSError as error:
        raise PreflightError(
            f"{shown}: cannot open the file for writing ({error.strerror}); give it to the user "
            "OnAir runs as, or change the path"
        ) from None


class DatabaseLock:
    """An exclusive lock on ``<path>.lock`` for as long as it is held (``release``, or the
    process ends)."""

    def __init__(self, path: str) -> None:
        self.path = f"{path}.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Blocking (a worker): take the lock without waiting, or raise PreflightError."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = _read_pid(fd)
            os.close(fd)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            who = f"another onair run (pid {holder})" if holder else "another onair run"
            raise PreflightError(
                f"{who} already uses the database {DATABASE_PATH} = "
                f'"{self.path.removesuffix(".lock")}" (it holds {self.path}); two processes on '
                "one SQLite file would each post every play: stop the other one, or give this "
                "one its own path (several processes share a PostgreSQL database, [database] url)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None


def _read_pid(fd: int) -> str:
    with contextlib.suppress(OSError, ValueError):
        text = os.pread(fd, 32, 0).decode("ascii").strip()
        if text.isdigit():
            return text
    return ""


async def prepare_database(settings: Settings) -> DatabaseLock | None:
    """Before login: the SQLite file is usable and this process alone uses it (the lock, to
    release at exit); None for PostgreSQL and an in-memory database."""
    path = sqlite_path(settings)
    if path is None:
        return None
    await asyncio.to_thread(_check_writable, path)
    lock = DatabaseLock(path)
    try:
        await asyncio.to_thread(lock.acquire)
    except OSError as error:  # not writable, or a file system without locks
        raise PreflightError(
            f'{DATABASE_PATH} = "{path}": cannot lock {lock.path} '
            f"({error.strerror or type(error).__name__})"
        ) from None
    return lock


def metrics_port_problem(settings: Settings, error: OSError) -> str:
    """The one line for a metrics port OnAir could not listen on."""
    where = f"{settings.metrics_host}:{settings.metrics_port}"
    if error.errno == errno.EADDRINUSE:
        why = "another program listens there"
    else:
        why = error.strerror or type(error).__name__
    return (
        f"cannot serve /metrics and /healthz on {where} ({why}): change {METRICS_PORT} "
        "(or ONAIR_METRICS_PORT), or 0 to turn them off"
    )
