"""Likes in storage (SQLite and PostgreSQL): one per user and play, toggled, race-free between
processes; the per-user limit; /top's queries; templates kept by /onair announce."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.errors import BadInput
from bot.history.likes import LikeLimiter, LikeService
from bot.station import Play
from bot.storage import PostgresStorage, SqliteStorage, Subscription
from bot.templates.model import TemplateSet

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


async def recorded(storage, title: str = "Song", at: datetime = T0, **kw) -> int:
    play = Play(title, "Band", started=at, started_exact=True, **kw)
    await storage.record_play("main", play, 5, at)
    found = await storage.play_id("main", play)
    assert found is not None
    return found


async def test_a_like_per_user_toggled_by_a_second_click(storage):
    play_id = await recorded(storage)
    assert await storage.toggle_like(play_id, 1, now=1.0) == (True, 1)
    assert await storage.toggle_like(play_id, 2, now=2.0) == (True, 2)
    assert await storage.toggle_like(play_id, 1, now=3.0) == (False, 1)
    assert await storage.toggle_like(play_id, 1, now=4.0) == (True, 2)
    assert await storage.like_count(play_id) == 2


async def test_the_same_play_is_found_whoever_renders_it(storage):
    play_id = await recorded(storage)
    # An estimated start a few seconds off (another process, /nowplaying) is the same play.
    estimate = Play("song", "BAND", started=T0 + timedelta(seconds=4))
    assert await storage.play_id("main", estimate) == play_id
    assert await storage.play_id("main", Play("Other", "Band", started=T0)) is None
    assert await storage.play_id("other", estimate) is None


async def test_concurrent_clicks_in_two_processes_count_once(storage, tmp_path):
    """Two storages on one database (two processes of a fleet) take the same clicks at once:
    the primary key, not a read-modify-write, keeps every user's like single."""
    if isinstance(storage, SqliteStorage):
        pytest.skip("SQLite serves one process; a fleet shares PostgreSQL")
    assert isinstance(storage, PostgresStorage)
    play_id = await recorded(storage)
    other = await PostgresStorage(storage.url).open()
    try:
        users = range(1, 201)
        # Every user's click reaches both processes (a retry, a double delivery): liked once.
        await asyncio.gather(
            *(s.toggle_like(play_id, user, now=1.0) for user in users for s in (storage, other))
        )
        count = await storage.like_count(play_id)
        rows = await storage.fetch("SELECT COUNT(DISTINCT user_id) FROM likes")
        assert count == rows[0][0]
        assert count <= 200
        # And single clicks split between the processes are each counted once.
        await storage.execute("DELETE FROM likes")
        await asyncio.gather(
            *(
                (storage if user % 2 else other).toggle_like(play_id, user, now=1.0)
                for user in users
            )
        )
        assert await other.like_count(play_id) == 200
    finally:
        await other.close()


async def test_top_counts_likes_and_plays_in_the_period(storage):
    song = await recorded(storage, "Song", T0)
    again = await recorded(storage, "Song", T0 + timedelta(hours=1))
    hit = await recorded(storage, "Hit", T0 + timedelta(hours=2), duration=timedelta(minutes=3))
    await recorded(storage, "Jingle", T0 + timedelta(hours=3), duration=timedelta(seconds=5))
    await recorded(storage, "Show", T0 + timedelta(hours=4), live=True)
    for user in (1, 2, 3):
        await storage.toggle_like(hit, user, now=T0.timestamp() + 100)
    await storage.toggle_like(song, 1, now=T0.timestamp() + 100)
    await storage.toggle_like(again, 2, now=T0.timestamp() + 100)
    await storage.toggle_like(again, 9, now=T0.timestamp() - 10)  # before the period
    since = T0.timestamp() - 1
    assert await storage.top_liked("main", since) == [("Hit", "Band", 3), ("Song", "Band", 2)]
    played = await storage.top_played("main", since)
    assert played == [("Song", "Band", 2), ("Hit", "Band", 1)]  # no jingle, no live show
    assert await storage.top_liked("other", since) == []


async def test_likes_go_with_the_history_they_belong_to(storage):
    old = await recorded(storage, "Old", T0 - timedelta(days=40))
    new = await recorded(storage, "New", T0)
    await storage.toggle_like(old, 1, now=1.0)
    await storage.toggle_like(new, 1, now=1.0)
    await storage.prune(30, now=T0)
    assert await storage.like_count(old) == 0
    assert await storage.like_count(new) == 1


async def test_announce_keeps_templates_and_config_sets_them(storage):
    templates = TemplateSet().with_part("all", "title", "{title}!")
    sub = await storage.upsert_subscription(Subscription(0, 1, 10, "main"))
    assert sub.templates is None
    await storage.set_templates(sub.id, templates)
    # /onair announce again (templates None): what the admin worded stays.
    again = await storage.upsert_subscription(Subscription(0, 1, 10, "main", mode="card"))
    assert again.templates == templates
    assert again.mode == "card"
    # A config file's [subscriptions.template] is the owner's word: it replaces them.
    other = TemplateSet().with_part("live", "footer", "{station}")
    assert (
        await storage.upsert_subscription(Subscription(0, 1, 10, "main", templates=other))
    ).templates == other
    await storage.set_templates(sub.id, TemplateSet())
    assert (await storage.subscriptions())[0].templates is None


async def test_like_service_limits_each_user(storage):
    now = [0.0]
    service = LikeService(storage, limiter=LikeLimiter(3, 10.0, clock=lambda: now[0]))
    play_id = await recorded(storage)
    for _ in range(3):
        await service.toggle(play_id, 1)
    with pytest.raises(BadInput, match="liking quickly"):
        await service.toggle(play_id, 1)
    assert await service.toggle(play_id, 2) == (True, 2)  # another user is not held up
    now[0] = 10.0
    assert await service.toggle(play_id, 1) == (False, 1)


def test_limiter_forgets_the_least_recent_users():
    limiter = LikeLimiter(1, 10.0, clock=lambda: 0.0, users=100)
    for user in range(1000):
        assert limiter.allow(user)
    assert len(limiter._seen) == 100


async def test_one_users_quick_clicks_toggle_in_order(storage):
    """Six clicks at once from one user (a held-down mouse) toggle six times: not liked."""
    service = LikeService(storage, limiter=LikeLimiter(100, 10.0))
    play_id = await recorded(storage)
    await asyncio.gather(*(service.toggle(play_id, 1) for _ in range(6)))
    assert await storage.like_count(play_id) == 0
    await asyncio.gather(*(service.toggle(play_id, 1) for _ in range(5)))
    assert await storage.like_count(play_id) == 1
    assert service._turns == {}  # nothing kept once the clicks are done


async def test_the_weekly_recap_reads_the_likes_of_its_week(storage):
    hit = await recorded(storage, "Hit", T0)
    song = await recorded(storage, "Song", T0 + timedelta(hours=1))
    for user in (1, 2, 3):
        await storage.toggle_like(hit, user, now=(T0 + timedelta(days=1)).timestamp())
    await storage.toggle_like(song, 1, now=(T0 + timedelta(days=2)).timestamp())
    await storage.toggle_like(song, 2, now=(T0 + timedelta(days=9)).timestamp())  # next week
    week = await storage.most_liked("main", T0, T0 + timedelta(days=7))
    assert week == [("Hit", "Band", 3), ("Song", "Band", 1)]
    assert await storage.most_liked("main", T0 + timedelta(days=7), T0 + timedelta(days=14)) == [
        ("Song", "Band", 1)
    ]
