"""Song requests in storage (SQLite and PostgreSQL): the cooldown and the hourly cap counted
once however many processes reserve at once, each request credited once, both requesters of a
song credited, a restart keeping all of it."""

from __future__ import annotations

import asyncio

import pytest

from bot.storage import NewRequest, PostgresStorage, RequestSettings, SqliteStorage

from .support.storage_backends import open_backend


@pytest.fixture(params=["sqlite", "postgres"])
async def storage(request, tmp_path):
    store = await open_backend(request.param, tmp_path)
    yield store
    await store.close()


def asked(user: int = 1, title: str = "Band - Song", guild: int = 10, **kw) -> NewRequest:
    options = {"display_name": f"user{user}", "track_id": "1001", "station": "main"}
    options.update(kw)
    return NewRequest(
        guild_id=guild, user_id=user, title=title, title_key=title.casefold(), **options
    )


async def test_settings_default_and_saved(storage):
    assert await storage.request_settings(5) == RequestSettings(5)
    assert RequestSettings(5).cooldown == 600.0
    saved = RequestSettings(5, role_id=7, cooldown=60.0, hourly_cap=3, channel_id=9)
    await storage.save_request_settings(saved)
    assert await storage.request_settings(5) == saved
    assert await storage.requests_enabled(5, "main") is None
    await storage.set_requests_enabled(5, "main", False)
    assert await storage.requests_enabled(5, "main") is False
    await storage.set_requests_enabled(5, "main", True)
    assert await storage.requests_enabled(5, "main") is True


async def test_cooldown_refuses_a_second_request_and_says_when(storage):
    first = await storage.reserve_request(asked(), now=1000.0, cooldown=600.0, hourly_cap=30)
    assert first is not None
    again = await storage.reserve_request(asked(), now=1100.0, cooldown=600.0, hourly_cap=30)
    assert again is None
    assert await storage.request_wait(10, 1, now=1100.0, cooldown=600.0, hourly_cap=30) == (
        "cooldown",
        1600.0,
    )
    # Another user of the guild, and the same user in another guild, are not held.
    assert await storage.reserve_request(asked(2), now=1100.0, cooldown=600.0, hourly_cap=30)
    assert await storage.reserve_request(asked(guild=11), now=1100, cooldown=600.0, hourly_cap=30)
    assert await storage.reserve_request(asked(), now=1601.0, cooldown=600.0, hourly_cap=30)


async def test_a_refused_request_does_not_count(storage):
    first = await storage.reserve_request(asked(), now=1000.0, cooldown=600.0, hourly_cap=30)
    assert first is not None
    await storage.request_dropped(first)
    assert await storage.reserve_request(asked(), now=1001.0, cooldown=600.0, hourly_cap=30)


async def test_the_hourly_cap_counts_the_guild(storage):
    for user in range(3):
        assert await storage.reserve_request(
            asked(user), now=1000.0 + user, cooldown=0.0, hourly_cap=3
        )
    assert await storage.reserve_request(asked(9), now=1010.0, cooldown=0.0, hourly_cap=3) is None
    assert await storage.request_wait(10, 9, now=1010.0, cooldown=0.0, hourly_cap=3) == (
        "cap",
        4600.0,
    )
    assert await storage.reserve_request(asked(9), now=4601.0, cooldown=0.0, hourly_cap=3)


async def test_credit_once_and_both_requesters_named(storage):
    ids = []
    for user in (1, 2):
        request_id = await storage.reserve_request(
            asked(user), now=1000.0 + user, cooldown=600.0, hourly_cap=30
        )
        assert request_id is not None
        await storage.request_accepted(request_id)
        ids.append(request_id)
    asking = await storage.reserve_request(asked(3), now=1003.0, cooldown=600.0, hourly_cap=30)
    assert asking is not None  # not accepted (yet): not credited
    keys = ["band - song", "song"]
    credits = await storage.credit_requests("main", keys, "play-1", since=0.0, now=2000.0)
    assert [(c.user_id, c.name) for c in credits] == [(1, "user1"), (2, "user2")]
    # The same play fanned out again (a restart, another process): the same names.
    again = await storage.credit_requests("main", keys, "play-1", since=0.0, now=2001.0)
    assert again == credits
    # The song again later: those requests were credited already.
    assert await storage.credit_requests("main", keys, "play-2", since=0.0, now=3000.0) == []
    assert await storage.credit_requests("other", keys, "play-3", since=0.0, now=3000.0) == []


async def test_credit_only_within_the_window(storage):
    request_id = await storage.reserve_request(asked(), now=1000.0, cooldown=0.0, hourly_cap=0)
    assert request_id is not None
    await storage.request_accepted(request_id)
    assert await storage.pending_requests(10, 1, "main", since=0.0)
    too_late = await storage.credit_requests("main", ["band - song"], "p", since=1001.0, now=9e3)
    assert too_late == []
    assert await storage.credit_requests("main", ["band - song"], "p", since=999.0, now=9e3)
    assert await storage.pending_requests(10, 1, "main", since=0.0) == []


async def test_two_processes_reserving_at_once_count_once(storage, tmp_path):
    """Two storages on one database (a fleet's processes) take a burst of requests from one
    user at once: the cooldown lets exactly one through; a burst from many users, exactly the
    cap."""
    if isinstance(storage, SqliteStorage):
        pytest.skip("SQLite serves one process; a fleet shares PostgreSQL")
    assert isinstance(storage, PostgresStorage)
    other = await PostgresStorage(storage.url).open()
    try:
        burst = [
            store.reserve_request(asked(), now=1000.0, cooldown=600.0, hourly_cap=30)
            for _ in range(10)
            for store in (storage, other)
        ]
        results = await asyncio.gather(*burst)
        assert sum(r is not None for r in results) == 1
        crowd = [
            store.reserve_request(asked(100 + n), now=1001.0, cooldown=600.0, hourly_cap=5)
            for n in range(20)
            for store in (storage, other)
        ]
        taken = await asyncio.gather(*crowd)
        assert sum(r is not None for r in taken) == 4  # 5 an hour, one taken by the first burst
    finally:
        await other.close()


async def test_a_restart_keeps_requests_and_limits(tmp_path):
    path = str(tmp_path / "onair.sqlite3")
    store = await SqliteStorage(path).open()
    request_id = await store.reserve_request(asked(), now=1000.0, cooldown=600.0, hourly_cap=30)
    assert request_id is not None
    await store.request_accepted(request_id)
    await store.close()
    store = await SqliteStorage(path).open()
    try:
        assert (
            await store.reserve_request(asked(), now=1100.0, cooldown=600.0, hourly_cap=30) is None
        )
        credits = await store.credit_requests("main", ["band - song"], "p", since=0.0, now=2e3)
        assert [c.user_id for c in credits] == [1]
    finally:
        await store.close()
