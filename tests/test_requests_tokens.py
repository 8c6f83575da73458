"""Song search tokens (issue 23): at most N searches a second go to one station from the
whole fleet. PostgreSQL counts them in one row per station, taken atomically by every process;
SQLite (one process) counts in memory. Windows are set through ``at``: no sleeps, no luck."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
import pytest

from bot.catalog.registry import StationRegistry
from bot.requests.service import RequestService
from bot.station.errors import RequestsUnavailable
from bot.storage import PostgresStorage, SqliteStorage

from .support.storage_backends import admin_connection, open_backend
from .test_requests_service import GUILD, settings_for

FAR_AHEAD = 32_503_680_000.0  # the year 3000: ahead of any clock the test runs under


@pytest.fixture(params=["sqlite", "postgres"])
async def storage(request, tmp_path):
    store = await open_backend(request.param, tmp_path)
    yield store
    await store.close()


async def takes(store, station: str, per_second: float, at: float, count: int) -> int:  # type: ignore[no-untyped-def]
    results = [await store.take_search_token(station, per_second, at=at) for _ in range(count)]
    return sum(results)


async def test_each_window_holds_the_rate_and_no_more(storage):
    assert await takes(storage, "main", 2.0, at=1000.0, count=5) == 2
    assert await takes(storage, "main", 2.0, at=1000.99, count=5) == 0  # same second
    assert await takes(storage, "other", 2.0, at=1000.5, count=5) == 2  # its own window
    assert await takes(storage, "main", 2.0, at=1001.0, count=5) == 2  # the next second
    # A window ahead of this taker's clock (another's later statement won) refuses.
    assert await takes(storage, "main", 2.0, at=1000.5, count=3) == 0
    # Fewer than one a second: one search every 1/N seconds.
    assert await takes(storage, "slow", 0.5, at=2000.0, count=3) == 1
    assert await takes(storage, "slow", 0.5, at=2001.9, count=3) == 0
    assert await takes(storage, "slow", 0.5, at=2002.0, count=3) == 1
    # A fractional rate never rounds up: 2.5 a second is 2 in each second.
    assert await takes(storage, "odd", 2.5, at=3000.0, count=5) == 2


async def test_without_a_time_the_storage_clock_counts(storage):
    """``at`` left out: the storage's own clock (PostgreSQL's, the fleet's one clock) decides;
    a window stamped far ahead of it refuses, so it is not the far-ahead time."""
    assert await storage.take_search_token("main", 2.0)
    assert await takes(storage, "ahead", 2.0, at=FAR_AHEAD, count=1) == 1
    assert not await storage.take_search_token("ahead", 2.0)


async def test_two_processes_taking_at_once_never_exceed_the_rate(storage):
    """Two storages on one database (two processes of a fleet) take a burst of tokens at the
    same moment: together they get exactly N in each window, never N each."""
    if isinstance(storage, SqliteStorage):
        pytest.skip("SQLite serves one process; a fleet shares PostgreSQL")
    assert isinstance(storage, PostgresStorage)
    other = await PostgresStorage(storage.url).open()
    try:
        for at in (5000.25, 5000.75, 5001.0, 5002.5):
            burst = [
                store.take_search_token("main", 3.0, at=at)
                for _ in range(15)
                for store in (storage, other)
            ]
            taken = await asyncio.gather(*burst)
            assert sum(taken) == (3 if at != 5000.75 else 0), at
        # A first take of a new station is a race for the row's insert: still N.
        burst = [
            store.take_search_token("fresh", 4.0, at=6000.0)
            for _ in range(15)
            for store in (storage, other)
        ]
        assert sum(await asyncio.gather(*burst)) == 4
    finally:
        await other.close()


async def test_sqlite_counts_in_memory(tmp_path):
    """One process: a keystroke's token costs no database round trip (the table stays empty)."""
    store = await SqliteStorage(str(tmp_path / "onair.sqlite3")).open()
    try:
        assert await takes(store, "main", 2.0, at=10.0, count=4) == 2
        assert await store.fetch("SELECT * FROM search_tokens") == []
    finally:
        await store.close()


@contextlib.asynccontextmanager
async def token_row_held(simulator, tmp_path):  # type: ignore[no-untyped-def]
    """A request service on PostgreSQL whose station's search_tokens row another transaction
    holds (a stuck fleet database); the third value lets the row go (also done at the end)."""
    store = await open_backend("postgres", tmp_path)
    assert isinstance(store, PostgresStorage)
    try:
        async with aiohttp.ClientSession() as session, admin_connection(store.url) as admin:
            settings = settings_for(simulator)
            service = RequestService(settings, StationRegistry(settings, session), store)
            station = service.registry.station("main")
            assert station is not None
            await store.take_search_token("main", 2.0, at=1.0)  # the row exists, long ago
            holding = admin.transaction()
            await holding.start()
            await admin.execute("SELECT * FROM search_tokens WHERE station = 'main' FOR UPDATE")
            released = False

            async def release() -> None:
                nonlocal released
                if not released:
                    released = True
                    await holding.rollback()

            try:
                yield service, station, release
            finally:
                await release()
    finally:
        await store.close()


async def test_a_token_storage_cannot_grant_in_time_means_no_search(simulator, tmp_path, caplog):
    """The search_tokens row held by another transaction (a stuck fleet database): the keystroke
    answers at once with nothing and sends no search; once storage answers, it searches."""
    async with token_row_held(simulator, tmp_path) as (service, station, release):
        assert await service.suggestions(GUILD, station, "harb") == []
        assert service.searches.upstream == 0
        await release()
        choices = await service.suggestions(GUILD, station, "harbo")
        assert [c.value for c in choices] == ["1001"]
        assert service.searches.upstream == 1


async def test_two_processes_flooding_keystrokes_send_one_rate_between_them(simulator, tmp_path):
    """Two request services on one PostgreSQL (two processes of a fleet), 40 listeners typing
    40 different songs at once: together they send at most N searches in each second of the
    database's clock the flood spanned (per-process rates would allow N each)."""
    store = await open_backend("postgres", tmp_path)
    assert isinstance(store, PostgresStorage)
    other = await PostgresStorage(store.url).open()
    clock_sql = "SELECT EXTRACT(EPOCH FROM clock_timestamp())::float8"
    try:
        async with aiohttp.ClientSession() as session, admin_connection(store.url) as admin:
            settings = settings_for(simulator)
            services = [
                RequestService(settings, StationRegistry(settings, session), storage)
                for storage in (store, other)
            ]
            station = services[0].registry.station("main")
            assert station is not None
            began = float(await admin.fetchval(clock_sql))
            await asyncio.gather(
                *(
                    services[n % 2].suggestions(GUILD, station, f"{chr(97 + n // 2) * 3} song {n}")
                    for n in range(40)
                )
            )
            ended = float(await admin.fetchval(clock_sql))
            sent = sum(service.searches.upstream for service in services)
            seconds = int(ended) - int(began) + 1
            assert 1 <= sent <= settings.request_searches_per_second * seconds
    finally:
        await other.close()
        await store.close()


async def test_a_request_storage_grants_no_token_for_is_unavailable_not_unmatched(
    simulator, tmp_path
):
    """/request with typed text needs a search; storage granting no token for the whole wait
    (the row held) makes it "unavailable right now", never "nothing matched", and no search."""
    async with token_row_held(simulator, tmp_path) as (service, station, _):
        with pytest.raises(RequestsUnavailable):
            await service.request(
                guild_id=GUILD,
                station=station,
                user_id=1,
                display_name="Ana",
                role_ids=(),
                typed="The Lanterns - Harbour Lights",
            )
        assert service.searches.upstream == 0
        assert not simulator.station(1).song_requests.accepted
