"""The play history while storage fails: a play kept for later costs no other poll a storage
call."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.history.playlog import PlayRecorder
from bot.station import StationInfo
from bot.storage import SqliteStorage

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def on_air(title: str, at: float) -> StationInfo:
    return StationInfo.parse(
        {"nowplaying": title, "playback": {"pos": 1000, "len": 180000, "state": "play"}},
        UTC,
        T0 + timedelta(seconds=at),
    )


@pytest.fixture
async def sqlite(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    storage = await SqliteStorage(str(tmp_path / "onair.db"), lock_timeout=0.2).open()
    try:
        yield storage
    finally:
        await storage.close()


@contextlib.contextmanager
def write_locked(path: str) -> Iterator[None]:
    """Another process holds SQLite's write lock (a backup tool, a second bot)."""
    connection = sqlite3.connect(path, timeout=5, isolation_level=None)
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        connection.execute("ROLLBACK")
        connection.close()


async def test_a_known_play_touches_no_storage_while_the_history_waits_for_it(
    sqlite: SqliteStorage,
) -> None:
    """While storage fails, a play kept for the history must not make every other ``info``
    (every poll of every station, every command) wait for a storage write: only a play
    written shows storage works again, and the sweep catches up meanwhile."""
    recorder = PlayRecorder(sqlite)
    await recorder.observe("a", on_air("A - One", 0))
    await recorder.observe("b", on_air("B - One", 0))
    assert recorder.recorded == 2
    with write_locked(sqlite.path):
        await recorder.observe("a", on_air("A - Two", 10))
        assert recorder.pending == 1  # kept for later
        failures = sqlite.health.failures
        # Station b's play did not change: nothing to write, so no storage call at all.
        await recorder.observe("b", on_air("B - One", 10))
        await recorder.observe("b", on_air("B - One", 20))
        assert sqlite.health.failures == failures
    # A new play written shows storage works again: the kept play follows it.
    await recorder.observe("b", on_air("B - Two", 30))
    assert recorder.pending == 0
    assert recorder.recorded == 4
