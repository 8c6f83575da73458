"""The announcer in the bot, through real discord.py and the fake Discord, on a manual clock."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from bot.simulator import JINGLES, LIVE_SHOW, TRACKS

from .support.botenv import (
    channel_subscription,
    fake_discord_fixture,
    running_bot,
    subscription_config,
)
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import FakeDiscord
from .support.stations import ONE_OF_EACH, programme_sim_fixture
from .support.waiting import poll_watch

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord

SLOTS = ONE_OF_EACH  # track 0-20 s, jingle 20-25, track 25-45, live 45-105, track 105-125


programme_sim = programme_sim_fixture(
    "programme_sim", SLOTS, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm"
)


fake = fake_discord_fixture(channels_per_guild=3)


subscription = channel_subscription


def refuse_posts(fake: FakeDiscord, channel: int, status: int, code: int, message: str) -> None:
    """Discord refuses every post in ``channel`` from now on, as it does a channel OnAir lost."""
    fake.fail(
        "POST", rf"^/channels/{channel}/messages$", status, code=code, message=message, times=None
    )


def posts(fake: FakeDiscord, channel_index: int = 0) -> list:
    channel = fake.guilds[0].channels[channel_index]
    return [r for r in fake.sent("POST", rf"^/channels/{channel}/messages$") if r.status == 200]


async def poll(env) -> None:
    """Run the station's watch job now and wait for its fan-out to finish."""
    announcer = env.bot.announcer
    await poll_watch(announcer)
    await announcer.idle()


async def test_announces_each_play_once_with_embed_and_buttons(programme_sim, fake):
    async with running_bot(programme_sim, fake=fake, extra_config=subscription(fake)) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        body = posts(fake)[0].json
        embed = body["embeds"][0]
        assert embed["title"] == TRACKS[0].title
        # Compact by default in post mode: thumbnail, two short lines, the station once.
        assert "image" not in embed
        assert "fields" not in embed
        assert "author" not in embed
        assert embed["thumbnail"]["url"].startswith(
            "https://c9.radioboss.fm/artwork/1/current.png?onair="
        )
        byline, meta = embed["description"].splitlines()
        assert byline == f"**{TRACKS[0].artist}** · *{TRACKS[0].album}* ({TRACKS[0].year})"
        assert meta.startswith("-# 0:40 · ")  # the length it reports
        assert TRACKS[0].genre in meta
        assert "Next" not in meta  # a 5 s jingle follows: left out of "Next"
        assert embed["footer"]["text"].startswith("Main FM · ")  # the configured name
        assert "timestamp" not in embed  # a post's own time already says when it started
        assert embed["url"].startswith("https://www.google.com/search?q=")
        assert len(body["components"]) == 1
        labels = [b["label"] for b in body["components"][0]["components"]]
        assert labels == ["Listen", "Web player", "Like"]  # the ❤️ button, without a count
        assert body["allowed_mentions"] == {"parse": []}
        await poll(env)
        await poll(env)
        assert len(posts(fake)) == 1  # same play: nothing new
        programme_sim.clock.advance(21)  # the jingle: no post of its own
        await poll(env)
        programme_sim.clock.advance(5)
        await poll(env)
        titles = [p.json["embeds"][0]["title"] for p in posts(fake)]
        assert titles == [TRACKS[0].title, TRACKS[1].title]
        # A live show follows the second: not a jingle (no length), so it is named as next.
        third = posts(fake)[1].json["embeds"][0]["description"]
        assert "Next\u00a0at\u00a0<t:" in third
        assert LIVE_SHOW.title in third


async def test_a_play_that_aired_between_two_polls_is_recorded(programme_sim, fake):
    """Issue 27: the jingle (20-25 s) aired between two polls; the station's `recent` list
    still names it with its start, so it is recorded in the history, before the track on air
    now (and, a jingle, not announced)."""
    async with running_bot(programme_sim, fake=fake, extra_config=subscription(fake)) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        await poll(env)
        programme_sim.clock.advance(29)  # 30 s: the track after the jingle, 5 s in
        await poll(env)
        await fake.wait_for(lambda: len(posts(fake)) == 2)
        titles = [p.json["embeds"][0]["title"] for p in posts(fake)]
        assert titles == [TRACKS[0].title, TRACKS[1].title]
        now = datetime.fromtimestamp(programme_sim.clock(), UTC)
        history = await env.bot.storage.play_at("main", now, 5)
        assert [h.title for h in history] == [TRACKS[1].title, JINGLES[0].title, TRACKS[0].title]
        await poll(env)
        assert len(posts(fake)) == 2


async def test_a_jingle_gets_no_post_and_the_card_stays_on_the_track_before(programme_sim, fake):
    """Post mode gives a jingle no post (no Listen, no ❤ for a station ID); card mode does
    not turn the card into it: both follow the rule that leaves jingles out of "Next"."""
    config = subscription(fake, 0, mode="post") + subscription(fake, 1, mode="card")
    card_channel = fake.guilds[0].channels[1]
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        await fake.wait_for(lambda: len(posts(fake, 0)) == 1 and len(posts(fake, 1)) == 1)
        programme_sim.clock.advance(21)  # the 5 s jingle is on air
        await poll(env)
        assert len(posts(fake, 0)) == 1
        assert not fake.sent("PATCH", rf"^/channels/{card_channel}/messages/\d+$")
        programme_sim.clock.advance(5)  # the next track
        await poll(env)
        titles = [p.json["embeds"][0]["title"] for p in posts(fake, 0)]
        assert titles == [TRACKS[0].title, TRACKS[1].title]
        edits = fake.sent("PATCH", rf"^/channels/{card_channel}/messages/\d+$")
        assert [e.json["embeds"][0]["title"] for e in edits] == [TRACKS[1].title]
        assert env.bot.announcer.skipped == 2  # the jingle, for each channel


async def test_restart_does_not_repeat_and_downtime_posts_once(programme_sim, fake, tmp_path):
    db = str(tmp_path / "onair.sqlite3")
    config = subscription(fake)
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=db):
        await fake.wait_for(lambda: len(posts(fake)) == 1)
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=db) as env:
        await poll(env)
        assert len(posts(fake)) == 1  # already announced before the restart
    programme_sim.clock.advance(30)  # jingle and the next track started while the bot was down
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=db) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 2)
        await poll(env)
        assert len(posts(fake)) == 2
        assert posts(fake)[1].json["embeds"][0]["title"] == TRACKS[1].title


async def test_filters_min_seconds_pattern_and_live(programme_sim, fake):
    config = (
        subscription(fake, 0, min_seconds=10)
        + subscription(fake, 1, skip_pattern="Harbour|Station ID", announce_live=False)
        + subscription(fake, 2)
    )
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        await fake.wait_for(lambda: len(posts(fake, 0)) == 1 and len(posts(fake, 2)) == 1)
        for step in (21, 5, 20):  # jingle, track, live show
            programme_sim.clock.advance(step)
            await poll(env)
    titles = {i: [p.json["embeds"][0]["title"] for p in posts(fake, i)] for i in range(3)}
    assert titles[2] == [TRACKS[0].title, TRACKS[1].title, LIVE_SHOW.title]  # no jingle
    assert titles[0] == [TRACKS[0].title, TRACKS[1].title, LIVE_SHOW.title]
    assert titles[1] == [TRACKS[1].title]  # pattern and live filtered
    live = posts(fake, 2)[-1].json["embeds"][0]
    assert live["description"].splitlines()[-1].startswith("-# 🔴 LIVE")


async def test_forbidden_channel_is_paused_others_go_on(programme_sim, fake):
    config = subscription(fake, 0) + subscription(fake, 1)
    bad = fake.guilds[0].channels[0]
    refuse_posts(fake, bad, 403, 50013, "Missing Permissions")
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        await fake.wait_for(lambda: len(posts(fake, 1)) == 1)
        await env.bot.announcer.idle()
        subs = await env.bot.storage.subscriptions()
        paused = {s.channel_id: s.paused_reason for s in subs}
        assert "Missing Permissions" in (paused[bad] or "")
        attempts = len(fake.sent("POST", rf"^/channels/{bad}/messages$"))
        programme_sim.clock.advance(26)  # the track after the jingle
        await poll(env)
        assert len(posts(fake, 1)) == 2
        assert len(fake.sent("POST", rf"^/channels/{bad}/messages$")) == attempts  # not retried


async def test_a_message_discord_refuses_is_not_retried_and_the_channel_is_not_paused(
    programme_sim, fake
):
    config = subscription(fake, 0)
    channel = fake.guilds[0].channels[0]
    route = rf"^/channels/{channel}/messages$"
    fake.fail("POST", route, 400, code=50035, message="Invalid Form Body", times=1)
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        await fake.wait_for(lambda: len(fake.sent("POST", route)) == 1)
        await env.bot.announcer.idle()
        assert await env.bot.announcer.sweep() == 0  # refused: not given back for a retry
        assert len(fake.sent("POST", route)) == 1
        assert [s.paused_reason for s in await env.bot.storage.subscriptions()] == [None]
        programme_sim.clock.advance(26)  # the track after the jingle
        await poll(env)
        assert len(posts(fake, 0)) == 1  # the next play is announced as usual


async def test_style_compact_by_default_for_cards_too_and_full_by_choice(programme_sim, fake):
    config = (
        subscription(fake, 0, mode="card")
        + subscription(fake, 1, style="full")
        + subscription(fake, 2, mode="card", style="compact")
    )
    async with running_bot(programme_sim, fake=fake, extra_config=config):
        await fake.wait_for(lambda: all(len(posts(fake, i)) == 1 for i in range(3)))
    card, chosen, small = (posts(fake, i)[0].json["embeds"][0] for i in range(3))
    full = chosen
    assert full["image"]["url"].startswith("https://c9.radioboss.fm/artwork/1/current.png")
    assert "thumbnail" not in full
    for compact in (card, small):  # a card without a style is the compact one
        assert "image" not in compact
        assert compact["thumbnail"]["url"].startswith("https://")
    # One fact layout whatever the mode and style: only the artwork's size differs.
    byline = f"**{TRACKS[0].artist}** · *{TRACKS[0].album}* ({TRACKS[0].year})"
    assert card["description"] == chosen["description"] == small["description"]
    assert card["description"].splitlines()[0] == byline
    # A card (edited in place) says when the track started; a post's own time says it.
    assert card["timestamp"]
    assert small["timestamp"]
    assert "timestamp" not in chosen


async def test_card_mode_edits_in_place_and_reposts_when_buried(programme_sim, fake):
    async with running_bot(
        programme_sim, fake=fake, extra_config=subscription(fake, 0, mode="card")
    ) as env:
        channel = fake.guilds[0].channels[0]
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        programme_sim.clock.advance(26)  # the track after the jingle
        await poll(env)
        edits = fake.sent("PATCH", rf"^/channels/{channel}/messages/\d+$")
        assert len(edits) == 1
        assert edits[0].json["embeds"][0]["title"] == TRACKS[1].title
        assert len(posts(fake)) == 1
        fake.user_message(channel)  # someone talks: the card is buried
        programme_sim.clock.advance(20)  # the live show
        await poll(env)
        assert len(posts(fake)) == 2
        assert fake.sent("DELETE", rf"^/channels/{channel}/messages/\d+$")


async def test_role_mention_pings_only_that_role(programme_sim, fake):
    role = fake.guilds[0].roles[1]
    async with running_bot(
        programme_sim, fake=fake, extra_config=subscription(fake, 0, mention_role=role)
    ):
        await fake.wait_for(lambda: len(posts(fake)) == 1)
    body = posts(fake)[0].json
    assert body["content"] == f"<@&{role}>"
    assert body["allowed_mentions"] == {"parse": [], "roles": [str(role)]} or body[
        "allowed_mentions"
    ]["roles"] == [role]


async def test_station_fault_midstream_then_one_announcement(programme_sim, fake):
    async with running_bot(programme_sim, fake=fake, extra_config=subscription(fake)) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        for kind in ("truncated", "html", "json_null"):
            programme_sim.inject(kind, times=1)
            await poll(env)
        programme_sim.inject("status", status=403, times=1)
        await poll(env)
        programme_sim.clock.advance(26)
        await poll(env)
        await poll(env)
        assert [p.json["embeds"][0]["title"] for p in posts(fake)] == [
            TRACKS[0].title,
            TRACKS[1].title,
        ]


def without_day_lines(description: str) -> list[str]:
    """The lines but the station-day lines ("-# ── … station time ──"), which come and go with
    the wall clock: a test run near the station's midnight sees one above the first row."""
    return [line for line in description.splitlines() if not line.startswith("-# ──")]


async def test_history_lookups(programme_sim, fake):
    async with running_bot(programme_sim, fake=fake, extra_config=subscription(fake)) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        programme_sim.clock.advance(21)
        await poll(env)
        message = await fake.final_message(await fake.slash("history", {"search": "station id"}))
        assert JINGLES[0].title in message["embeds"][0]["description"]
        assert "<t:" in message["embeds"][0]["description"]
        message = await fake.final_message(await fake.slash("history"))
        first, on_air = without_day_lines(message["embeds"][0]["description"])[:2]
        assert re.fullmatch(r"At <t:\d+:f>:", first)  # the moment, in the reader's zone
        assert "<t:" not in message["embeds"][0]["title"]  # (a title shows none)
        assert JINGLES[0].title in on_air
        reply = await fake.final_message(await fake.slash("history", {"at": "25:99"}))
        assert reply["flags"] & EPHEMERAL
        assert "time" in reply["content"]
        # The watch and the announcer both offered each play: each is stored once.
        rows = await env.bot.storage.play_at("main", datetime.now(UTC) + timedelta(days=1), 10)
        assert [r.title for r in rows] == [JINGLES[0].title, TRACKS[0].title]


async def test_history_works_for_a_station_no_channel_announces(programme_sim, fake):
    async with running_bot(programme_sim, fake=fake) as env:
        assert not env.bot.announcer.watched()  # nothing polls it on its own
        client = env.bot.registry.clients["main"]
        for _ in range(3):  # the first fetches, the others are served from the cache
            await fake.final_message(await fake.slash("nowplaying"))
        programme_sim.clock.advance(21)  # the jingle
        client.forget_cached()
        await fake.final_message(await fake.slash("recent"))
        message = await fake.final_message(await fake.slash("history"))
        lines = without_day_lines(message["embeds"][0]["description"])[1:]  # after "At <t:…:f>:"
        assert lines[0].endswith(f"**▶ {JINGLES[0].artist} - {JINGLES[0].title}**")
        assert lines[1].endswith(f"{TRACKS[0].artist} - {TRACKS[0].title}")
        assert lines[-1].startswith("-# History since <t:")
        assert lines[-1].endswith(":f>")
        rows = await env.bot.storage.play_at("main", datetime.now(UTC) + timedelta(days=1), 10)
        assert len(rows) == 2
        message = await fake.final_message(await fake.slash("history", {"search": "harbour"}))
        assert TRACKS[0].title in message["embeds"][0]["description"]


async def test_thread_as_target(programme_sim, fake):
    guild = fake.guilds[0]
    thread = guild.threads[0]
    config = subscription_config(guild.id, thread)
    async with running_bot(programme_sim, fake=fake, extra_config=config):
        hits = await fake.wait_request("POST", rf"^/channels/{thread}/messages$")
    assert hits[0].json["embeds"][0]["title"] == TRACKS[0].title


async def test_deleted_channel_is_paused_with_reason(programme_sim, fake):
    gone = fake.guilds[0].channels[0]
    refuse_posts(fake, gone, 404, 10003, "Unknown Channel")
    async with running_bot(programme_sim, fake=fake, extra_config=subscription(fake, 0)) as env:
        await fake.wait_request("POST", rf"^/channels/{gone}/messages$")
        await env.bot.announcer.idle()
        (sub,) = await env.bot.storage.subscriptions()
        assert sub.paused_reason == "the channel no longer exists"
        assert not env.bot.announcer.watched()  # its only channel paused: no more polling
