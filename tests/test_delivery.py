"""Crash-safe delivery: a real ``onair run`` killed (SIGKILL) or stopped (SIGTERM) in the middle
of a fan-out to 20 channels, restarted, serves every channel the play exactly once; storage
failures are retried and the play is delivered once storage recovers.

The helpers it shares with the fleet and alert-crash tests are in tests/support/delivery.py.
"""

from __future__ import annotations

import logging
import os
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from bot.announcer import snapshot
from bot.announcer.watcher import Announcement
from bot.simulator import TRACKS, StationSimulator
from bot.station import StationClient
from bot.storage import Subscription

from .support.botenv import (
    STATION_KEY,
    config_text,
    fake_discord_fixture,
    running_bot,
)
from .support.delivery import (
    BERLIN,
    BETWEEN,
    CHANNELS,
    POST,
    Child,
    Gate,
    all_sent,
    is_post,
    messages_with,
    poll,
    programme_sim_fixture,  # noqa: F401
    subscriptions,
)
from .support.fakediscord import FakeDiscord, Recorded
from .support.waiting import wait_for

fake = fake_discord_fixture(channels_per_guild=CHANNELS)


async def crash_mid_fan_out(
    signum: int, programme_sim: StationSimulator, fake: FakeDiscord, tmp_path: Path, allow: int
) -> tuple[Child, int, float]:
    """Start onair run, let ``allow`` posts through, hold the rest, send ``signum``."""
    db = tmp_path / "onair.sqlite3"
    child = Child(
        tmp_path, fake, config_text(programme_sim, fake, extra=subscriptions(fake), db_path=str(db))
    )
    gate = Gate(allow)
    fake.hold = gate
    await child.start()
    try:
        await fake.wait_for(
            lambda: (
                sum(1 for r in fake.sent("POST") if is_post(r) and r.status == 200) >= allow
                and gate.arrived > allow
            ),
            within=60,
        )
        code, seconds = await child.stop(signum)
    finally:
        await child.kill_quietly()
    # Discord goes on with what it had received: posts held when the process died are created
    # now, their answers lost (the crash between a send and its "sent" mark).
    gate.open()
    await fake.wait_for(lambda: all(r.status for r in fake.sent("POST") if is_post(r)))
    fake.hold = None
    return child, code, seconds


async def restart_and_finish(
    child: Child, tmp_path: Path, signum: int = signal.SIGTERM
) -> tuple[int, float]:
    """Restart, wait until every delivery is sent, stop with ``signum``."""
    await child.start()
    try:
        await wait_for(lambda: all_sent(tmp_path / "onair.sqlite3"), within=60)
        return await child.stop(signum)
    finally:
        await child.kill_quietly()


@pytest.mark.e2e
async def test_sigkill_mid_fan_out_then_restart_serves_every_channel_once(
    programme_sim, fake, tmp_path
):
    child, code, _ = await crash_mid_fan_out(signal.SIGKILL, programme_sim, fake, tmp_path, allow=6)
    assert code == -signal.SIGKILL
    title = TRACKS[0].title
    before = messages_with(fake, title)
    missing = [c for c, n in before.items() if n == 0]
    assert missing, "the kill came after every channel had the play: nothing was tested"
    assert max(before.values()) == 1
    code, _ = await restart_and_finish(child, tmp_path, signal.SIGINT)  # Ctrl+C
    assert code == 0, child.output()
    after = messages_with(fake, title)
    assert after == {channel: 1 for channel in fake.guilds[0].channels}, after
    reposts = sum(1 for r in fake.sent("POST") if is_post(r)) - CHANNELS
    # Repeats are posts sent again for plays Discord already had (held posts processed after
    # the kill, sends whose "sent" mark the kill prevented): the nonce made each return the
    # first message.
    print(f"SIGKILL: {len(missing)} channels missing at the kill, {reposts} repeated posts")
    output = child.output()
    assert "left in flight by the last run are pending" in output  # the dead run's leases
    assert "Task exception was never retrieved" not in output
    assert "Traceback" not in output


@pytest.mark.e2e
async def test_restart_after_discord_forgot_the_nonces_still_posts_each_channel_once(
    programme_sim, fake, tmp_path
):
    """Discord dedupes a nonce for "a few minutes" only; a play may be posted up to
    max_delivery_age late. A resumed delivery finds its own earlier post instead."""
    child, _, _ = await crash_mid_fan_out(signal.SIGKILL, programme_sim, fake, tmp_path, allow=6)
    title = TRACKS[0].title
    unrecorded = [c for c, n in messages_with(fake, title).items() if n == 1]
    fake.nonce_window = 0.0  # the restart comes after Discord's nonce window
    code, _ = await restart_and_finish(child, tmp_path)
    assert code == 0, child.output()
    assert messages_with(fake, title) == {channel: 1 for channel in fake.guilds[0].channels}
    looked = {
        int(POST.match(r.route)[1]) for r in fake.sent("GET", POST.pattern) if "after" in r.query
    }
    assert looked  # resumed deliveries looked in their channels
    assert set(unrecorded) & looked, "no post was left unrecorded by the kill: nothing was tested"


@pytest.mark.e2e
async def test_sigterm_mid_fan_out_exits_0_quickly_and_restart_serves_every_channel_once(
    programme_sim, fake, tmp_path
):
    child, code, seconds = await crash_mid_fan_out(
        signal.SIGTERM, programme_sim, fake, tmp_path, allow=5
    )
    first_run = child.output()
    assert code == 0, first_run
    assert "stopped in" in first_run
    print(f"SIGTERM mid-fan-out: exit 0 after {seconds:.2f}s")
    assert seconds < 15  # a hung shutdown, not a slow one: the grace for sends in flight is 3 s
    title = TRACKS[0].title
    assert any(n == 0 for n in messages_with(fake, title).values())
    code, seconds = await restart_and_finish(child, tmp_path)
    assert code == 0
    print(f"SIGTERM when idle: exit 0 after {seconds:.2f}s")
    assert messages_with(fake, title) == {channel: 1 for channel in fake.guilds[0].channels}
    # SIGTERM gave every unsent lease back: the next run found none left in flight.
    assert "left in flight" not in child.output()
    assert "resuming announcement" in child.output()
    for output in (first_run, child.output()):
        assert "Task exception was never retrieved" not in output
        assert "Traceback" not in output


def hold_write_lock(db: Path) -> sqlite3.Connection:
    """Another writer holds the database's write lock (what a stuck process or a backup does)."""
    conn = sqlite3.connect(str(db), timeout=5, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    return conn


@pytest.mark.e2e
async def test_storage_write_failures_are_retried_and_the_play_delivered_once(
    programme_sim, fake, tmp_path, caplog
):
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="onair")  # the retries after an outage's first line
    db = tmp_path / "onair.sqlite3"
    async with running_bot(
        programme_sim,
        fake=fake,
        extra_config=subscriptions(fake, 2),
        db_path=str(db),
        database_extra="lock_timeout = 0.2",
    ) as env:
        channels = fake.guilds[0].channels[:2]
        await fake.wait_for(lambda: all(messages_with(fake, TRACKS[0].title)[c] for c in channels))
        await env.bot.announcer.idle()
        # 1. The database is locked when a play is detected: recording it fails and is retried.
        lock = hold_write_lock(db)
        try:
            programme_sim.clock.advance(3600)  # the short track
            await poll(env)
            await wait_for(lambda: "storage failed recording the play" in caplog.text)
            assert messages_with(fake, BETWEEN.title)[channels[0]] == 0
        finally:
            lock.rollback()
            lock.close()
        await fake.wait_for(lambda: all(messages_with(fake, BETWEEN.title)[c] for c in channels))
        await env.bot.announcer.idle()

        # 2. The lock is taken while a post is in flight: the "sent" mark fails and is retried.
        locks: list[sqlite3.Connection] = []

        async def lock_on_post(record: Recorded) -> None:
            if is_post(record) and not locks:
                locks.append(hold_write_lock(db))

        fake.hold = lock_on_post
        try:
            programme_sim.clock.advance(5)  # the next track
            await poll(env)
            await wait_for(lambda: "storage failed marking the announcement" in caplog.text)
        finally:
            fake.hold = None
            for conn in locks:
                conn.rollback()
                conn.close()
        await fake.wait_for(lambda: all(messages_with(fake, TRACKS[1].title)[c] for c in channels))
        await env.bot.announcer.idle()
        states = await env.bot.storage.fetch(
            "SELECT state, COUNT(*) FROM deliveries GROUP BY state"
        )
        assert dict(states) == {"sent": 6}
    for title in (TRACKS[0].title, BETWEEN.title, TRACKS[1].title):
        counts = messages_with(fake, title)
        assert [counts[c] for c in channels] == [1, 1], title
    warnings = [
        r for r in caplog.records if r.levelno == logging.WARNING and "storage" in r.message
    ]
    assert len(warnings) == 2, [r.message for r in warnings]  # one line per outage
    assert all(r.exc_info is None for r in warnings)
    assert "Task exception was never retrieved" not in caplog.text
    assert "locked" in warnings[0].message  # says what failed


@pytest.mark.e2e
async def test_stale_pending_delivery_is_dropped_not_posted(programme_sim, fake, tmp_path, caplog):
    """A play left pending longer than its maximum age is dropped and logged at the next start."""
    caplog.set_level(logging.INFO)
    db = tmp_path / "onair.sqlite3"
    config = subscriptions(fake, 1)
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=str(db)) as env:
        await fake.wait_for(
            lambda: messages_with(fake, TRACKS[0].title)[fake.guilds[0].channels[0]]
        )
        await env.bot.announcer.idle()
        storage = env.bot.storage
        (sub,) = await storage.subscriptions("main")
        old = time.time() - 7200
        stale = await storage.enqueue_announcement(
            "main",
            "old|play",
            "{}",
            detected_at=old,
            expires_at=old + 900,
            subscription_ids=[sub.id],
        )
    posts_before = len([r for r in fake.sent("POST") if is_post(r)])
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=str(db)) as env:
        await wait_for(lambda: "went stale" in caplog.text)
        assert await env.bot.storage.deliveries(stale) == {sub.id: "dropped"}
    assert len([r for r in fake.sent("POST") if is_post(r)]) == posts_before


@pytest.mark.e2e
async def test_fake_discord_honours_message_nonces(onair):
    channel = onair.bot.get_channel(onair.guild.channels[0])
    first = await channel.send("one", nonce="oa-nonce-1")
    again = await channel.send("one", nonce="oa-nonce-1")
    other = await channel.send("two", nonce=12345)
    assert again.id == first.id
    assert other.id != first.id
    assert len(onair.fake.channel_messages[channel.id]) == 2
    import discord

    with pytest.raises(discord.HTTPException) as raised:
        await channel.send("x", nonce="n" * 26)
    assert raised.value.status == 400
    assert raised.value.code == 50035
    onair.fake.nonce_window = 0.0  # past Discord's window the same nonce posts again
    assert (await channel.send("one", nonce="oa-nonce-1")).id != first.id


@pytest.mark.e2e
async def test_fake_discord_history_pages_as_discord_does(onair):
    import discord

    channel = onair.bot.get_channel(onair.guild.channels[0])
    sent = [await channel.send(f"m{i}") for i in range(5)]
    newest = [m.content async for m in channel.history(limit=3)]
    assert newest == ["m4", "m3", "m2"]
    after = [m.content async for m in channel.history(limit=2, after=sent[1])]
    assert after == ["m2", "m3"]  # the oldest two after m1 (discord.py reorders oldest first)
    before = [m.content async for m in channel.history(limit=10, before=sent[2])]
    assert before == ["m1", "m0"]
    with pytest.raises(discord.HTTPException) as raised:
        await onair.bot.http.logs_from(channel.id, 101)
    assert (raised.value.status, raised.value.code) == (400, 50035)


async def test_announcement_snapshot_round_trips(simulator, session):
    from .support.stations import KEY

    client = StationClient(simulator.base_url, 1, KEY, session=session)
    info = await client.info()
    play = info.current_play()
    assert play is not None
    announcement = Announcement(play, info, 1234.5)
    assert snapshot.load(snapshot.dump(announcement)) == announcement
    with pytest.raises(ValueError, match="unreadable announcement payload"):
        snapshot.load('{"play": {}}')


@pytest.mark.e2e
@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_dead_processs_lease_runs_out_and_the_play_is_delivered_once(
    programme_sim, fake, tmp_path, backend, session
):
    """Another process recorded the play, leased its deliveries and died: on PostgreSQL (shared
    by several processes) the lease runs out and this process delivers; on SQLite (one process)
    the lease is released at start-up."""
    from .support.storage_backends import POSTGRES_ENV, open_backend

    storage = await open_backend(backend, tmp_path)
    channels = fake.guilds[0].channels[:2]
    client = StationClient(programme_sim.base_url, 1, STATION_KEY, session=session, zone=BERLIN)
    info = await client.info()
    play = info.current_play()
    assert play is not None
    try:
        subs = [
            await storage.upsert_subscription(Subscription(0, fake.guilds[0].id, c, "main"))
            for c in channels
        ]
        ann = await storage.enqueue_announcement(
            "main",
            play.claim_key,
            snapshot.dump(Announcement(play, info, time.time())),
            detected_at=time.time(),
            expires_at=time.time() + 900,
            subscription_ids=[s.id for s in subs],
        )
        leased = await storage.claim_deliveries(
            ann, [s.id for s in subs], owner="dead", lease_until=time.time() + 1.5, now=time.time()
        )
        assert len(leased) == 2
    finally:
        await storage.close()
    env_extra = {"ONAIR_DATABASE_URL": os.environ[POSTGRES_ENV]} if backend == "postgres" else {}
    async with running_bot(
        programme_sim,
        fake=fake,
        extra_config="[announcer]\ndelivery_lease = 1\n" + subscriptions(fake, 2),
        db_path=str(tmp_path / "onair.sqlite3"),
        env_extra=env_extra,
    ) as env:
        await fake.wait_for(lambda: all(messages_with(fake, play.title)[c] for c in channels))

        async def done() -> bool:
            return await env.bot.storage.deliveries(ann) == {s.id: "sent" for s in subs}

        await wait_for(done, within=20)
    counts = messages_with(fake, play.title)
    assert [counts[c] for c in channels] == [1, 1]


@pytest.mark.e2e
async def test_card_mode_is_idempotent_when_a_crash_hides_the_send(programme_sim, fake, tmp_path):
    """A card edit or re-post whose "sent" mark was lost (the state a crash leaves: delivery
    pending, channel still pointing at the old card) is retried without a second card."""
    db = tmp_path / "onair.sqlite3"
    config = subscriptions(fake, 1).replace('station = "main"', 'station = "main"\nmode = "card"')
    channel = fake.guilds[0].channels[0]

    def cards() -> list[dict[str, Any]]:
        return [
            fake.messages[m] for m in fake.channel_messages[channel] if fake.messages[m]["embeds"]
        ]

    async def replay_last_delivery(env: Any, card_before: int | None) -> None:
        """Undo the last "sent" mark as a crash right after the send would have."""
        storage = env.bot.storage
        (ann,) = await storage.fetch("SELECT MAX(id) FROM announcements")
        await storage.execute(
            "UPDATE deliveries SET state = 'pending', owner = NULL, lease_until = NULL "
            "WHERE announcement_id = ?",
            (ann[0],),
        )
        await storage.execute(
            "UPDATE subscriptions SET card_message_id = ?, last_play = NULL", (card_before,)
        )
        assert await env.bot.announcer.sweep() == 1
        await env.bot.announcer.idle()
        assert await storage.deliveries(ann[0]) == {1: "sent"}

    # Past Discord's nonce window: only OnAir's look at the channel keeps the repeat from posting.
    fake.nonce_window = 0.0
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=str(db)) as env:
        await fake.wait_for(lambda: len(cards()) == 1)
        await env.bot.announcer.idle()
        first = int(cards()[0]["id"])
        # The card is the newest message: the next play edits it; the edit is repeated.
        programme_sim.clock.advance(3600)
        await poll(env)
        await env.bot.announcer.idle()
        await replay_last_delivery(env, first)
        assert [c["embeds"][0]["title"] for c in cards()] == [BETWEEN.title]
        # Buried card: the next play re-posts it (and deletes the old); the re-post is repeated.
        fake.user_message(channel)
        programme_sim.clock.advance(5)
        await poll(env)
        await env.bot.announcer.idle()
        await replay_last_delivery(env, first)
        assert [c["embeds"][0]["title"] for c in cards()] == [TRACKS[1].title]
        (stored,) = await env.bot.storage.subscriptions("main")
        assert stored.card_message_id == int(cards()[0]["id"])
