"""Defects found reviewing issues 23 and 27 (each test failed before its fix)."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.history.playlog import PlayRecorder
from bot.requests.search import SearchDesk, query_key
from bot.simulator import ManualClock
from bot.station import RequestTrack, SearchAnswer, StationInfo
from bot.station.requests import parse_search
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


async def test_a_hostile_station_cannot_fill_the_search_cache_past_its_size() -> None:
    """The shared search cache was bounded by answers only (5000), each up to 100 tracks of
    300 characters: a guild's own station answering every search with that, while one member
    typed distinct queries, could hold ~350 MB (measured with tracemalloc; four times that in
    astral characters), and pushed every other station's answers out. It is bounded by the
    characters it holds too; a small answer is still kept."""
    clock = ManualClock(0.0)
    desk = SearchDesk(1000.0, clock=clock)
    body = {"tracks": [{"id": f"{i:064d}", "title": f"{i} " + "é" * 297} for i in range(100)]}

    answer = parse_search(body)  # (parsed once: each search is a new answer upstream)

    async def hostile() -> SearchAnswer:
        return answer

    letters = "abcdefghijklmnopqrstuvwxyz"
    # Three letters each: no query is broader than another (each is searched upstream).
    queries = [a + b + c for a in letters[:6] for b in letters[:10] for c in letters[:10]]
    for query in queries:
        clock.advance(0.01)
        await desk.search("hostile", query, hostile, wait=5.0)
    held = 0
    for query in queries:
        for track in desk.cached("hostile", query_key(query)) or ():
            held += len(track.id) + len(track.title)
    assert 0 < held <= 10_000_000  # 600 answers of 36,400 characters: 21.8 M before

    async def small() -> SearchAnswer:
        return SearchAnswer((RequestTrack("1", "The Lanterns - Harbour Lights"),))

    await desk.search("main", "harbour", small, wait=5.0)
    assert desk.cached("main", "harbour") is not None
