"""The storage suite, run on SQLite and on PostgreSQL (the same interface, the same answers)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from bot.station import Play
from bot.storage import (
    GuildSettings,
    GuildStation,
    GuildVoice,
    SqliteStorage,
    Subscription,
    VoiceSession,
)

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def sub(channel: int, station: str = "main", guild: int = 1, **kw) -> Subscription:
    return Subscription(0, guild_id=guild, channel_id=channel, station=station, **kw)


async def test_subscriptions_upsert_and_filters(storage):
    first = await storage.upsert_subscription(
        sub(10, skip_item_types=("JINGLE",), min_seconds=12.5)
    )
    again = await storage.upsert_subscription(sub(10, mode="card"))
    assert first.id == again.id
    assert again.mode == "card"
    await storage.upsert_subscription(sub(11, station="other", guild=2))
    assert [s.channel_id for s in await storage.subscriptions("main")] == [10]
    assert [s.channel_id for s in await storage.subscriptions(guild_id=2)] == [11]
    assert (
        await storage.upsert_subscription(sub(12, skip_item_types=("AD",)))
    ).skip_item_types == ("AD",)


async def test_last_play_pause_and_claims(storage):
    s = await storage.upsert_subscription(sub(10))
    play = Play("Song", "Artist", started=T0, started_exact=True, file="a.mp3")
    await storage.mark_announced(s.id, play, card_message_id=99)
    (stored,) = await storage.subscriptions()
    assert stored.last_play is not None
    assert stored.last_play.same_as(play)
    assert stored.card_message_id == 99
    await storage.pause(s.id, "Missing Permissions")
    assert (await storage.subscriptions())[0].paused_reason == "Missing Permissions"


async def enqueue(storage, key: str = "k", subs=(), expires: float = 2e9) -> int:
    return await storage.enqueue_announcement(
        "main", key, '{"x": 1}', detected_at=1e9, expires_at=expires, subscription_ids=subs
    )


async def test_outbox_records_a_play_once_and_leases_each_delivery(storage):
    a = await storage.upsert_subscription(sub(10))
    b = await storage.upsert_subscription(sub(11))
    first = await enqueue(storage, subs=[a.id, b.id])
    assert await enqueue(storage, subs=[a.id, b.id]) == first  # seen again: same play, no new rows
    assert await storage.deliveries(first) == {a.id: "pending", b.id: "pending"}
    assert await storage.announcement_payload(first) == '{"x": 1}'
    leased = await storage.claim_deliveries(
        first, [a.id, b.id], owner="p1", lease_until=100, now=50
    )
    assert leased == {a.id: 1, b.id: 1}
    # A live lease keeps everyone else out; a lease that ran out is taken over.
    assert await storage.claim_deliveries(first, [a.id], owner="p2", lease_until=200, now=99) == {}
    assert await storage.due_deliveries(now=99) == []
    due = await storage.due_deliveries(now=101)
    assert [(d.subscription_id, d.attempts) for d in due] == [(a.id, 1), (b.id, 1)]
    assert await storage.renew_leases("p1", 300) == 2
    assert await storage.due_deliveries(now=101) == []
    play = Play("Song", "Artist", started=T0, started_exact=True)
    await storage.delivery_sent(first, a.id, play, 555, now=102)
    await storage.release_delivery(first, b.id, "p2", now=102)  # not p2's lease: no effect
    assert await storage.due_deliveries(now=102) == []
    await storage.release_delivery(first, b.id, "p1", now=102)
    assert [d.subscription_id for d in await storage.due_deliveries(now=102)] == [b.id]
    assert await storage.deliveries(first) == {a.id: "sent", b.id: "pending"}
    stored = {s.id: s for s in await storage.subscriptions()}
    assert stored[a.id].card_message_id == 555
    assert stored[a.id].last_play == play
    assert await storage.claim_deliveries(first, [a.id], owner="p2", lease_until=400, now=103) == {}
    await storage.finish_delivery(first, b.id, "dropped", now=104)
    assert await storage.deliveries(first) == {a.id: "sent", b.id: "dropped"}
    assert await storage.due_deliveries(now=105) == []


async def test_delivery_counts_are_per_guild_and_recent(storage):
    mine = await storage.upsert_subscription(sub(10, guild=1))
    other = await storage.upsert_subscription(sub(20, guild=2))
    first = await enqueue(storage, "k1", subs=[mine.id, other.id])
    second = await enqueue(storage, "k2", subs=[mine.id])
    play = Play("Song", "Artist", started=T0, started_exact=True)
    await storage.delivery_sent(first, mine.id, play, 555, now=2e9)
    await storage.finish_delivery(second, mine.id, "dropped", now=2e9)
    assert await storage.delivery_counts(1, since=1e9) == {"sent": 1, "dropped": 1}
    assert await storage.delivery_counts(2, since=1e9) == {"pending": 1}
    assert await storage.delivery_counts(1, since=2e9 + 1) == {}  # older than the window
    assert await storage.delivery_counts(3, since=0) == {}


async def test_release_all_leases_after_a_crash(storage):
    a = await storage.upsert_subscription(sub(10))
    ann = await enqueue(storage, subs=[a.id])
    await storage.claim_deliveries(ann, [a.id], owner="dead", lease_until=1e12, now=1)
    assert await storage.due_deliveries(now=2) == []
    assert await storage.release_all_leases() == 1
    assert [d.subscription_id for d in await storage.due_deliveries(now=2)] == [a.id]


async def test_enqueue_is_atomic(storage):
    """One failing statement leaves nothing behind: no play without its deliveries."""
    a = await storage.upsert_subscription(sub(10))
    with pytest.raises(Exception, match="no_such_table") as raised:
        await storage.execute_atomic(
            [
                (
                    "INSERT INTO announcements (station, play_key, payload, detected_at, "
                    "expires_at) VALUES (?, ?, ?, ?, ?)",
                    ("main", "k", "{}", 1.0, 2.0),
                ),
                ("INSERT INTO no_such_table VALUES (?)", (a.id,)),
            ]
        )
    # An unknown table is a bug: PostgreSQL's SQLSTATE says so and it is not retried; SQLite
    # answers it with the OperationalError it also uses for a locked database, so it is.
    assert storage.is_storage_error(raised.value) == isinstance(storage, SqliteStorage)
    assert await storage.fetch("SELECT id FROM announcements") == []


async def test_concurrent_claims_have_one_winner(storage):
    s = await storage.upsert_subscription(sub(10))
    ann = await enqueue(storage, subs=[s.id])
    results = await asyncio.gather(
        *(
            storage.claim_deliveries(ann, [s.id], owner=f"p{i}", lease_until=100, now=1)
            for i in range(20)
        )
    )
    results = [bool(r) for r in results]
    assert results.count(True) == 1


async def test_history_lookup_search_and_prune(storage):
    titles = ["Северный ветер", "Harbour Lights", "50% Off_Sale"]
    for minute, title in enumerate(titles):
        play = Play(title, "Artist", album="Album", started=T0 + timedelta(minutes=minute * 4))
        await storage.record_play("main", play, 10, T0)
    at = await storage.play_at("main", T0 + timedelta(minutes=5))
    assert [e.title for e in at] == ["Harbour Lights", "Северный ветер"]
    assert [e.title for e in await storage.search_plays("main", "СЕВЕРНЫЙ")] == ["Северный ветер"]
    assert [e.title for e in await storage.search_plays("main", "50%")] == ["50% Off_Sale"]
    assert [e.title for e in await storage.search_plays("main", "_")] == ["50% Off_Sale"]
    assert await storage.search_plays("other", "Harbour") == []
    removed = await storage.prune(1, now=T0 + timedelta(days=2))
    assert removed == 3


async def test_prune_drops_settled_outbox_rows_after_a_day(storage):
    s = await storage.upsert_subscription(sub(10))
    old = await storage.enqueue_announcement(
        "main", "old", "{}", detected_at=T0.timestamp(), expires_at=0, subscription_ids=[s.id]
    )
    recent = T0 + timedelta(hours=30)
    new = await storage.enqueue_announcement(
        "main", "new", "{}", detected_at=recent.timestamp(), expires_at=0, subscription_ids=[s.id]
    )
    await storage.prune(30, now=T0 + timedelta(hours=36))
    assert await storage.announcement_payload(old) is None
    assert await storage.deliveries(old) == {}
    assert await storage.deliveries(new) == {s.id: "pending"}
    assert [key for key, _ in await storage.recent_announcements("main")] == ["new"]


async def test_history_records_each_play_once_whoever_offers_it(storage):
    play = Play("Song", "Artist", started=T0, started_exact=True)
    assert await storage.record_play("main", play, 10, T0)
    # The same play again (another poller, or an estimated start 12 s off): not a new row.
    assert not await storage.record_play("main", play, 11, T0 + timedelta(seconds=30))
    estimate = Play("song ", "ARTIST", started=T0 + timedelta(seconds=12))
    assert not await storage.record_play("main", estimate, 11, T0)
    other = Play("Jingle", None, started=T0 + timedelta(minutes=3), started_exact=True)
    assert await storage.record_play("main", other, 12, T0)
    # The same song later is a new play; another station keeps its own history.
    again = Play("Song", "Artist", started=T0 + timedelta(minutes=4), started_exact=True)
    assert await storage.record_play("main", again, 12, T0)
    assert await storage.record_play("other", play, 1, T0)
    assert [e.title for e in await storage.play_at("main", T0 + timedelta(hours=1))] == [
        "Song",
        "Jingle",
        "Song",
    ]
    assert await storage.history_since("main") == T0
    assert await storage.history_since("nowhere") is None


async def test_subscription_style_is_stored(storage):
    assert (await storage.upsert_subscription(sub(10))).style == ""  # by mode
    assert (await storage.upsert_subscription(sub(10, style="full"))).style == "full"
    (stored,) = await storage.subscriptions()
    assert stored.style == "full"


async def test_guild_stations_settings_and_purge(storage):
    station = GuildStation(
        1, "mine", "My FM", "https://c1.radioboss.fm", 7, b"cipher", "Europe/Berlin"
    )
    await storage.save_guild_station(station)
    await storage.save_guild_station(
        GuildStation(2, "theirs", "Their FM", "https://c2.radioboss.fm", 8, None)
    )
    assert await storage.guild_stations(1) == [station]
    await storage.save_guild_settings(GuildSettings(1, "Europe/Berlin", "mine"))
    assert (await storage.guild_settings(1)).default_station == "mine"
    assert (await storage.guild_settings(3)).timezone == "UTC"
    s = await storage.upsert_subscription(sub(10, guild=1))
    ann = await enqueue(storage, subs=[s.id])
    await storage.purge_guild(1)
    assert await storage.deliveries(ann) == {}
    assert await storage.guild_stations(1) == []
    assert await storage.subscriptions(guild_id=1) == []
    assert (await storage.guild_settings(1)).default_station == ""
    assert [g.slug for g in await storage.guild_stations()] == ["theirs"]  # other guild untouched


async def test_removing_a_guild_station_removes_all_that_names_it(storage):
    # Added again later, the station starts clean: no events switched on by themselves, no
    # "back" alert for an outage seen before it was removed.
    from bot.storage import AlertState, AlertSubscription

    await storage.save_guild_station(GuildStation(1, "rock", "Rock", "https://c1.example", 7, None))
    await storage.save_alert_subscription(AlertSubscription(1, "g1-rock", 10, 0))
    await storage.save_alert_state("g1-rock", AlertState(down_since=5.0), now=6.0)
    await storage.set_show_events(1, "g1-rock", on=True)
    await storage.set_show_events(2, "main", on=True)  # another guild's: untouched
    assert await storage.remove_guild_station(1, "rock", "g1-rock")
    assert await storage.guild_stations(1) == []
    assert await storage.alert_subscriptions("g1-rock") == []
    assert await storage.alert_state("g1-rock") == AlertState()
    assert await storage.show_event_guilds() == [(2, "main")]


async def test_migrations_are_idempotent(storage, tmp_path):
    await storage.close()
    again = await storage.open()
    assert await again.subscriptions() == []


async def test_style_migration_keeps_existing_subscriptions(tmp_path):
    """A database made before the style column: its subscriptions open with style "" (by mode)."""
    import sqlite3

    from bot.storage import SqliteStorage

    path = tmp_path / "old.sqlite3"
    old = SqliteStorage(str(path))
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for version, script in enumerate(old.migration_scripts()[:3], start=1):
            db.executescript(script)
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        db.execute(
            "INSERT INTO subscriptions (guild_id, channel_id, station, mode) "
            "VALUES (1, 10, 'main', 'card')"
        )
    store = await old.open()
    try:
        (stored,) = await store.subscriptions()
        assert (stored.mode, stored.style) == ("card", "")
    finally:
        await store.close()


async def test_shared_secret_is_made_once_and_the_same_for_every_caller(storage):
    first = await storage.shared_secret("watch-job-id")
    assert len(first) == 32
    assert await storage.shared_secret("watch-job-id") == first
    assert await storage.shared_secret("other") != first


async def test_voice_sessions_are_one_per_guild_and_survive_a_reopen(storage):
    await storage.save_voice_session(VoiceSession(1, 100, "main"), now=1.0)
    await storage.save_voice_session(VoiceSession(2, 200, "main"), now=1.0)
    await storage.save_voice_session(VoiceSession(1, 101, "other"), now=2.0)  # moved: replaced
    await storage.close()
    again = await storage.open()
    assert await again.voice_sessions() == [
        VoiceSession(1, 101, "other"),
        VoiceSession(2, 200, "main"),
    ]
    assert await again.remove_voice_session(1) is True
    assert await again.remove_voice_session(1) is False
    assert await again.voice_sessions() == [VoiceSession(2, 200, "main")]


async def test_guild_voice_settings_default_and_purge(storage):
    assert await storage.guild_voice(5) == GuildVoice(5, 0, 300.0, "")
    await storage.save_guild_voice(GuildVoice(5, home_channel=55, leave_when_empty=0, station="x"))
    await storage.save_guild_voice(GuildVoice(6, leave_when_empty=30.5))
    assert await storage.guild_voice(5) == GuildVoice(5, 55, 0.0, "x")
    assert [v.guild_id for v in await storage.all_guild_voice()] == [5, 6]
    await storage.save_voice_session(VoiceSession(5, 55, "x"), now=1.0)
    await storage.purge_guild(5)
    assert await storage.guild_voice(5) == GuildVoice(5)
    assert await storage.voice_sessions() == []
    assert await storage.guild_voice(6) == GuildVoice(6, 0, 30.5, "")


async def test_guild_station_voice_is_off_until_opted_in_and_kept_when_re_added(storage):
    station = GuildStation(1, "mine", "My FM", "https://c1.radioboss.fm", 7, None)
    await storage.save_guild_station(station)
    (stored,) = await storage.guild_stations(1)
    assert (stored.voice, stored.stream_url) == (False, "")
    assert await storage.set_guild_station_voice(1, "nope", voice=True) is False
    assert await storage.set_guild_station_voice(
        1, "mine", voice=True, stream_url="https://c1.radioboss.fm/stream"
    )
    await storage.save_guild_station(station)  # re-added with a new key: the opt-in stays
    (stored,) = await storage.guild_stations(1)
    assert (stored.voice, stored.stream_url) == (True, "https://c1.radioboss.fm/stream")


async def test_scheduled_posts_are_recorded_once_and_leased_by_one_caller(storage):
    from bot.storage import AlertState, AlertSubscription, Recap, ScheduledPost

    def post(key: str, guild: int = 1) -> ScheduledPost:
        return ScheduledPost(key, guild, 10, "alert", '{"kind": "down"}', 0, 100.0, 1000.0)

    await storage.save_alert_state(
        "main", AlertState(down_since=50.0, down_posted=True), now=100.0, posts=[post("a")]
    )
    assert await storage.alert_state("main") == AlertState(
        down_since=50.0, down_posted=True, version=1
    )
    await storage.forget_alert_state("main")
    assert await storage.alert_state("main") == AlertState()
    assert not await storage.record_post(post("a"), now=101.0)  # recorded before: nothing new
    assert await storage.record_post(post("b", guild=2), now=101.0)
    claims = await asyncio.gather(
        *(storage.claim_post("a", owner=f"p{i}", lease_until=200.0, now=101.0) for i in range(5))
    )
    won = [c for c in claims if c is not None]
    assert len(won) == 1
    assert won[0].attempts == 1
    assert [p.key for p in await storage.due_posts(150.0)] == ["b"]  # a is leased
    assert [p.key for p in await storage.due_posts(250.0)] == ["a", "b"]  # its lease ran out
    await storage.release_post("a", "somebody else", now=150.0)  # not the holder: no effect
    assert [p.key for p in await storage.due_posts(150.0)] == ["b"]
    await storage.finish_post("a", "sent", now=160.0, message_id=99)
    assert await storage.claim_post("a", owner="late", lease_until=300.0, now=400.0) is None
    assert await storage.post_states() == {"a": "sent", "b": "pending"}
    assert await storage.post_states("b") == {"b": "pending"}
    # Alert and recap settings, and a guild's purge taking everything of it.
    await storage.save_alert_subscription(AlertSubscription(2, "main", 20, 7))
    await storage.save_alert_subscription(AlertSubscription(2, "main", 21, 0))
    assert await storage.alert_subscriptions("main") == [AlertSubscription(2, "main", 21, 0)]
    await storage.save_recap(Recap(2, 22, "main", 4, 20, 5.0))
    assert await storage.recaps() == [Recap(2, 22, "main", 4, 20, 5.0)]
    await storage.purge_guild(2)
    assert await storage.alert_subscriptions() == []
    assert await storage.recaps() == []
    assert await storage.post_states() == {"a": "sent"}
    assert await storage.prune_posts(2000.0) == 1


async def test_show_statuses_and_events_per_guild_and_purge(storage):
    await storage.save_guild_voice(GuildVoice(1, channel_status=False))
    assert (await storage.guild_voice(1)).channel_status is False
    assert (await storage.guild_voice(2)).channel_status is True  # on unless turned off
    await storage.save_written_status(1, 11, "🎵 A - B")
    await storage.save_written_status(1, 11, "🎵 C - D")
    await storage.save_written_status(2, 21, "🔴 LIVE: E")
    assert await storage.written_statuses() == {11: "🎵 C - D", 21: "🔴 LIVE: E"}
    await storage.forget_written_status(21)
    assert await storage.written_statuses() == {11: "🎵 C - D"}
    assert await storage.set_show_events(1, "main", on=True) is True
    assert await storage.set_show_events(1, "main", on=True) is False
    assert await storage.show_event_guilds("main") == [(1, "main")]
    # One claim per airing wins; a snowflake above 2^31 fits (BIGINT).
    assert await storage.claim_show_event(1, "main", "dj|show@0", now=5.0) is True
    assert await storage.claim_show_event(1, "main", "dj|show@0", now=6.0) is False
    await storage.update_show_event(1, "main", "dj|show@0", state="claimed", event_id=1 << 60)
    await storage.update_show_event(1, "main", "dj|show@0", state="active")
    assert await storage.open_show_events(guild_id=1) == [
        (1, "main", "dj|show@0", 1 << 60, "active")
    ]
    await storage.update_show_event(1, "main", "dj|show@0", state="completed")
    assert await storage.open_show_events() == []
    assert await storage.show_event_keys(1, "main") == ["dj|show@0"]
    assert await storage.show_event_airings(1, "main") == [("dj|show@0", "completed")]
    await storage.purge_guild(1)
    assert await storage.written_statuses() == {}
    assert await storage.show_event_guilds() == []
    assert await storage.show_event_keys(1, "main") == []


async def test_prune_drops_finished_show_events_after_the_history_window(storage):
    now = datetime(2026, 11, 25, tzinfo=UTC)
    old = (now - timedelta(days=40)).timestamp()
    for key, state in (("a@0", "completed"), ("a@1", "failed"), ("a@2", "active")):
        await storage.claim_show_event(1, "main", key, now=old)
        await storage.update_show_event(1, "main", key, state=state)
    await storage.claim_show_event(1, "main", "a@3", now=now.timestamp())
    await storage.update_show_event(1, "main", "a@3", state="completed")
    await storage.prune(30, now)
    assert sorted(await storage.show_event_keys(1, "main")) == ["a@2", "a@3"]


async def test_an_alert_state_saved_from_a_stale_read_is_refused_with_its_posts(storage):
    """Two processes deciding from the same stored state (a watch handed over mid-evaluation):
    the first save wins; the second saves nothing and records none of its alerts."""
    from dataclasses import replace

    from bot.storage import AlertState, ScheduledPost

    def post(key: str) -> ScheduledPost:
        return ScheduledPost(key, 1, 10, "alert", '{"kind": "live_start"}', 0, 100.0, 1000.0)

    read = await storage.alert_state("main")
    assert read == AlertState()
    assert await storage.save_alert_state(
        "main", replace(read, live_key="show"), now=100.0, posts=[post("alert|a")]
    )
    assert not await storage.save_alert_state(
        "main", replace(read, live_key="show"), now=101.0, posts=[post("alert|b")]
    )
    state = await storage.alert_state("main")
    assert (state.live_key, state.version) == ("show", 1)
    assert await storage.post_states("alert|") == {"alert|a": "pending"}
    # Saves from the same read, at once: one wins.
    results = await asyncio.gather(
        *(
            storage.save_alert_state("main", replace(state, live_title=str(i)), now=102.0)
            for i in range(4)
        )
    )
    assert sorted(results) == [False, False, False, True]
    assert (await storage.alert_state("main")).version == 2
