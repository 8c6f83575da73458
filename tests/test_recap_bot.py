"""The weekly recap end to end: /onair recap through the real discord.py client, the plays the
bot's own polls stored, the guild's time zone, and a clock the test moves. A slot passed while
OnAir was down is posted late, once; another restart and another look post nothing more."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.config.schema import WEEKDAYS
from bot.simulator import LIVE_SHOW, TRACKS
from bot.storage import ScheduledPost

from .support.botenv import STATION_KEY, fake_discord_fixture, running_bot
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import FakeDiscord
from .support.stations import programme_sim_fixture
from .test_alerts_bot import poll

pytestmark = pytest.mark.e2e
fake = fake_discord_fixture()
BERLIN = ZoneInfo("Europe/Berlin")
SLOTS = [
    (TRACKS[0], 200.0),
    (TRACKS[1], 200.0),
    (TRACKS[0], 200.0),
    (LIVE_SHOW, 600.0),
    (TRACKS[2], 200.0),
    (TRACKS[0], 7200.0),
]


recap_sim = programme_sim_fixture("recap_sim", SLOTS, key=STATION_KEY)


def recaps_in(fake: FakeDiscord, channel: int) -> list[dict[str, Any]]:
    out = []
    for mid in fake.channel_messages[channel]:
        embeds = fake.messages[mid].get("embeds") or []
        if embeds and (embeds[0].get("title") or "").startswith("📊 The week on "):
            out.append(fake.messages[mid])
    return out


def slot_after(now: float, hours: int) -> datetime:
    """The whole hour ``hours`` from now on Berlin's clock."""
    moment = datetime.fromtimestamp(now, UTC).astimezone(BERLIN) + timedelta(hours=hours)
    return moment.replace(minute=0, second=0, microsecond=0)


async def test_recap_is_posted_late_once_after_a_restart_past_its_slot(recap_sim, tmp_path, fake):
    clock = recap_sim.clock
    db = str(tmp_path / "onair.sqlite3")
    guild = fake.guilds[0]
    channel = guild.channels[1]
    slot = slot_after(clock(), 2)
    async with running_bot(recap_sim, fake=fake, db_path=db, clock=clock) as env:
        iid = await fake.slash("onair", {"timezone": "Europe/Berlin"}, sub=["settings"])
        await fake.response(iid)
        options = {"channel": str(channel), "day": WEEKDAYS[slot.weekday()], "hour": slot.hour}
        iid = await fake.slash(
            "onair", options, sub=["recap"], resolved=fake.resolved_channel(channel)
        )
        reply = (await fake.response(iid)).json["data"]
        assert reply["flags"] & EPHEMERAL
        assert f"at {slot.hour:02d}:00 (Europe/Berlin)" in reply["content"]
        # The week's programme, seen by the bot's own polls (the recap's station is watched).
        for step in (0, 201, 200, 200, 600, 200):
            clock.advance(step)
            await poll(env)
        assert await env.bot.recaps.tick() == []  # the slot has not come yet
        # Two listeners like the play on air from /nowplaying.
        iid = await fake.slash("nowplaying")
        await fake.response(iid)
        message = fake.original(iid)
        (button,) = [
            b
            for row in message["components"]
            for b in row["components"]
            if b.get("custom_id", "").startswith("onair:like:")
        ]
        for user in (71, 72):
            await fake.response(await fake.click(message, button["custom_id"], user_id=user))
        liked = await env.bot.storage.top_liked("main", 0)
        assert [count for _, _, count in liked] == [2]
        liked_track = f"**{liked[0][0]}** · {liked[0][1]}"
    assert recaps_in(fake, channel) == []
    # OnAir is down when the slot passes, and back five hours later.
    clock.now = slot.timestamp() + 5 * 3600
    async with running_bot(recap_sim, fake=fake, db_path=db, clock=clock) as env:
        await env.bot.posts.idle()
        assert len(recaps_in(fake, channel)) == 1
        assert await env.bot.recaps.tick() == []
        await env.bot.posts.idle()
    async with running_bot(recap_sim, fake=fake, db_path=db, clock=clock) as env:
        await env.bot.posts.idle()
        assert await env.bot.recaps.tick() == []
    (recap,) = recaps_in(fake, channel)
    embed = recap["embeds"][0]
    assert embed["title"] == "📊 The week on Main FM"
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    played = fields["Most played"].splitlines()
    # /top's row format; live shows without a medal; the peak as "324 · Fri 20 Nov, 19:01";
    # the busiest hour without a figure (it read as the peak's); no footer or timestamp.
    assert played[0] == f"🥇 **{TRACKS[0].title}** · {TRACKS[0].artist} · 3 plays"
    assert len(played) == 3
    assert fields["Live shows"] == f"**{LIVE_SHOW.title}** · {LIVE_SHOW.artist} · on air once"
    assert fields["Most liked"] == f"🥇 {liked_track} · 2 likes"
    assert re.fullmatch(r"\d+ · \w{3} \d{1,2} \w{3}, \d\d:\d\d", fields["Peak listeners"])
    assert re.fullmatch(r"\w+day \d\d:00–\d\d:00", fields["Busiest hour"])
    assert "**6** plays" in embed["description"]
    assert "Times in Europe/Berlin." in embed["description"]
    assert "footer" not in embed
    assert "timestamp" not in embed
    (post,) = [
        r
        for r in fake.sent("POST", rf"^/channels/{channel}/messages$")
        if (r.json or {}).get("embeds")
    ]
    assert post.json["allowed_mentions"] == {"parse": []}  # mentions off

    # A week later the next slot is a new recap, of the week after the first.
    clock.advance(7 * 86400)
    async with running_bot(recap_sim, fake=fake, db_path=db, clock=clock) as env:
        await env.bot.posts.idle()
    assert len(recaps_in(fake, channel)) == 2
    first, second = (r["embeds"][0]["description"] for r in recaps_in(fake, channel))
    # Seven days each ("Thu 19 Nov, 18:00 – Thu 26 Nov, 18:00"): one ends as the next begins.
    assert first.split(" – ")[1].split(" · ")[0] == second.split(" – ")[0]


async def test_recap_set_up_after_this_weeks_slot_waits_for_the_next(recap_sim, fake):
    clock = recap_sim.clock
    channel = fake.guilds[0].channels[0]
    async with running_bot(recap_sim, fake=fake, clock=clock) as env:
        past = datetime.fromtimestamp(clock(), UTC) - timedelta(hours=1)
        options = {"channel": str(channel), "day": WEEKDAYS[past.weekday()], "hour": past.hour}
        iid = await fake.slash(
            "onair", options, sub=["recap"], resolved=fake.resolved_channel(channel)
        )
        await fake.response(iid)
        assert await env.bot.recaps.tick() == []
        iid = await fake.slash("onair", {"off": True}, sub=["recap"])
        assert "Stopped" in (await fake.response(iid)).json["data"]["content"]
        assert await env.bot.storage.recaps() == []


async def set_zone(fake: FakeDiscord, zone: str) -> None:
    iid = await fake.slash("onair", {"timezone": zone}, sub=["settings"])
    assert zone in (await fake.response(iid)).json["data"]["content"]


async def test_a_time_zone_change_brings_no_second_recap_of_a_week(recap_sim, tmp_path, fake):
    """Two weeks' recaps posted on Berlin's clock, then the guild moves to New York: its latest
    slot is now last week's (same day and hour, New York time), a week already posted; and this
    week's New York slot falls in the week already posted too. One recap a week."""
    clock = recap_sim.clock
    channel = fake.guilds[0].channels[1]
    slot = slot_after(clock(), 2)
    async with running_bot(
        recap_sim, fake=fake, db_path=str(tmp_path / "onair.sqlite3"), clock=clock
    ) as env:
        await set_zone(fake, "Europe/Berlin")
        options = {"channel": str(channel), "day": WEEKDAYS[slot.weekday()], "hour": slot.hour}
        iid = await fake.slash(
            "onair", options, sub=["recap"], resolved=fake.resolved_channel(channel)
        )
        await fake.response(iid)
        for week in range(2):
            clock.now = slot.timestamp() + week * 7 * 86400 + 60
            assert len(await env.bot.recaps.tick()) == 1
            await env.bot.posts.idle()
        assert len(recaps_in(fake, channel)) == 2
        clock.advance(1800)
        await set_zone(fake, "America/New_York")
        assert await env.bot.recaps.tick() == []
        clock.advance(6 * 3600)  # Friday 18:00 in New York has passed
        assert await env.bot.recaps.tick() == []
        await env.bot.posts.sweep()
        await env.bot.posts.idle()
        assert len(recaps_in(fake, channel)) == 2
        clock.advance(7 * 86400)  # next week's New York slot: a recap again
        assert len(await env.bot.recaps.tick()) == 1
        await env.bot.posts.idle()
        assert len(recaps_in(fake, channel)) == 3


async def test_a_stale_post_is_dropped_whatever_path_sends_it(recap_sim, fake):
    """A post past its ``expires_at`` is never sent: not by the sweep, and not when it is
    handed straight to the outbox (as a tick that recorded it does)."""
    clock = recap_sim.clock
    channel = fake.guilds[0].channels[1]
    async with running_bot(recap_sim, fake=fake, clock=clock) as env:
        now = clock()
        summary = {"station_name": "Main FM", "start": now - 8 * 86400, "end": now - 86400}
        post = ScheduledPost(
            "recap|stale",
            fake.guilds[0].id,
            channel,
            "recap",
            json.dumps(summary),
            0,
            now,
            now - 1.0,
        )
        assert await env.bot.storage.record_post(post, now=now)
        env.bot.posts.send_soon([post.key])
        await env.bot.posts.idle()
        assert recaps_in(fake, channel) == []
        assert await env.bot.storage.post_states("recap|") == {"recap|stale": "dropped"}


async def test_guilds_sharing_a_station_week_and_zone_share_one_summary(recap_sim):
    """The week's plays are summed up once per (station, week, zone) in a tick, however many
    guilds' recaps share them."""
    clock = recap_sim.clock
    fake = FakeDiscord(guild_count=3)
    await fake.start()
    slot = (datetime.fromtimestamp(clock(), UTC) + timedelta(hours=2)).replace(
        minute=0, second=0, microsecond=0
    )
    try:
        async with running_bot(recap_sim, fake=fake, clock=clock) as env:
            guilds = fake.guilds
            await env.bot.storage.save_guild_settings(
                replace(await env.bot.storage.guild_settings(guilds[2].id), timezone="Asia/Tokyo")
            )
            for guild in guilds:
                await env.bot.recaps.configure(
                    guild.id, guild.channels[1], "main", slot.weekday(), slot.hour
                )
            await env.bot.announcer.refresh()
            await poll(env)
            clock.now = slot.timestamp() + 60
            assert len(await env.bot.recaps.tick()) == 2  # Tokyo's slot is another hour
            assert env.bot.recaps.summaries == 1
            await env.bot.posts.idle()
            first, second = (recaps_in(fake, g.channels[1]) for g in guilds[:2])
            assert first[0]["embeds"] == second[0]["embeds"]
    finally:
        await fake.stop()
