"""Shows through the real bot: the Scheduled Events OnAir makes for live shows (one active event
per show, then completed; its place never a link; Create Events, which Manage Events no longer
stands in for; at most ten open; the config file turning them on).
"""

from __future__ import annotations

import pytest

from bot import errors
from bot.simulator import LIVE_SHOW
from bot.storage import EVENT_ACTIVE

from .support import discord_rules as rules
from .support.botenv import running_bot
from .support.fakediscord import Guild
from .support.shows_bot import (
    advance,
    event_writes,
    events_fake_fixture,  # noqa: F401
    poll,
    turn_on,
)
from .support.waiting import wait_for
from .test_announcer_bot import programme_sim

pytestmark = pytest.mark.e2e

__all__ = ["programme_sim"]  # another test's fixture, used here too


async def test_a_live_show_becomes_one_active_event_then_completed(programme_sim, events_fake):
    # OnAir has Create Events here and not Manage Events: it makes, starts and ends its own.
    fake = events_fake
    guild = fake.guilds[0]
    async with running_bot(programme_sim, fake=fake) as env:
        assert "make a server event" in await turn_on(env, guild)
        await poll(env)
        advance(programme_sim, 46)  # the live show
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
        (event,) = guild.events.values()
        await wait_for(lambda: event["status"] == rules.ACTIVE)
        assert event["name"] == LIVE_SHOW.title or LIVE_SHOW.title in event["name"]
        assert event["entity_type"] == rules.EXTERNAL
        assert event["entity_metadata"]["location"]
        await poll(env)
        await poll(env)  # the same show again: no second event
        assert len(guild.events) == 1
        advance(programme_sim, 60)  # the track after the show
        await poll(env)
        await wait_for(lambda: event["status"] == rules.COMPLETED)
        assert event_writes(fake, guild) == [
            ("POST", None),
            ("PATCH", rules.ACTIVE),
            ("PATCH", rules.COMPLETED),
        ]
        assert await env.bot.storage.open_show_events() == []
        advance(programme_sim, 65)  # the show's next airing (the programme repeats)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
        assert len(guild.events) == 2  # a new event for the new airing
        keys = await env.bot.storage.show_event_keys(guild.id, "main")
        assert sorted(k.rpartition("@")[2].partition("~")[0] for k in keys) == ["0", "1"]


async def test_an_events_place_is_never_a_link_discord_or_a_listener_should_not_get(
    programme_sim, events_fake
):
    # Issue 27: the place (entity_metadata.location, plain text Discord shows as a link) was the
    # station's https listen link as typed, ">[Free](…)" and all, whenever it fit in 100.
    station = programme_sim.station(1)
    station.typed_links = {
        "port443": "https://r.example/s>[Free](https://phish.example/y)",
        "ssl": "https://r.example/a b",
    }
    fake = events_fake
    guild = fake.guilds[0]
    async with running_bot(programme_sim, fake=fake) as env:
        await turn_on(env, guild)
        await poll(env)
        advance(programme_sim, 46)  # the live show
        await poll(env)
        await wait_for(lambda: len(guild.events) == 1)
        (event,) = guild.events.values()
        # The first https link that is one: the station's first mount.
        assert event["entity_metadata"]["location"] == "https://c9.radioboss.fm:18001/stream"


async def test_an_event_discord_would_not_start_is_canceled_when_the_show_ends(
    programme_sim, events_fake
):
    # The event exists once Discord made it: a refused start must not leave it in the server's
    # events for good.
    fake = events_fake
    guild = fake.guilds[0]
    async with running_bot(programme_sim, fake=fake) as env:
        await turn_on(env, guild)
        await poll(env)
        fake.fail("PATCH", rf"^/guilds/{guild.id}/scheduled-events/\d+$", 403, code=50013)
        advance(programme_sim, 46)  # the live show
        await poll(env)
        await wait_for(lambda: len(guild.events) == 1)
        (event,) = guild.events.values()
        await wait_for(lambda: bool(fake.sent("PATCH", rf"^/guilds/{guild.id}/scheduled-events")))
        advance(programme_sim, 60)  # the track after the show
        await poll(env)
        await wait_for(lambda: event["status"] == rules.CANCELED)
        assert await env.bot.storage.open_show_events() == []


async def test_a_restart_mid_show_makes_no_second_event(programme_sim, events_fake, tmp_path):
    fake = events_fake
    guild = fake.guilds[0]
    db = str(tmp_path / "onair.sqlite3")
    async with running_bot(programme_sim, fake=fake, db_path=db) as env:
        await turn_on(env, guild)
        advance(programme_sim, 46)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
    async with running_bot(programme_sim, fake=fake, db_path=db) as env:
        await poll(env)  # the restarted watch sees the live show as a new play
        await poll(env)
        assert len(guild.events) == 1
        stored = await env.bot.storage.open_show_events(guild_id=guild.id)
        assert [row[4] for row in stored] == [EVENT_ACTIVE]
        advance(programme_sim, 60)
        await poll(env)
        (event,) = guild.events.values()
        await wait_for(lambda: event["status"] == rules.COMPLETED)


async def test_events_need_create_events_and_other_guilds_go_on(programme_sim, events_fake):
    # The second guild gave OnAir Manage Events (its invite before Discord's 2026 split), which
    # creates no event: refused up front, and no request Discord would answer with 403.
    fake = events_fake
    first, second = fake.guilds
    async with running_bot(programme_sim, fake=fake) as env:
        iid = await fake.slash("onair", {"enabled": True}, sub=["events"], guild=second)
        message = await fake.final_message(iid)
        assert message["content"] == errors.EVENTS_NO_PERMISSION
        assert message["flags"] & rules.EPHEMERAL
        await turn_on(env, first)
        # Events on in the second guild too (stored earlier), but no permission there now.
        await env.bot.storage.set_show_events(second.id, "main", on=True)
        advance(programme_sim, 46)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(first)) == 1)
        assert fake.sent(None, rf"^/guilds/{second.id}/scheduled-events") == []


async def test_at_most_ten_open_events_per_guild(programme_sim, events_fake):
    fake = events_fake
    guild = fake.guilds[0]
    async with running_bot(programme_sim, fake=fake) as env:
        await turn_on(env, guild)
        for index in range(10):  # ten shows of other stations still open
            await env.bot.storage.claim_show_event(guild.id, f"other{index}", "show@1", now=1.0)
        advance(programme_sim, 46)
        await poll(env)
        assert fake.sent("POST", rf"^/guilds/{guild.id}/scheduled-events") == []


async def test_the_config_file_turns_events_on_and_the_status_off(programme_sim, events_fake):
    fake = events_fake
    guild = fake.guilds[0]
    config = f"[[guilds]]\nid = {guild.id}\nlive_events = ['main']\nvoice_status = false\n"
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        assert await env.bot.storage.show_event_guilds() == [(guild.id, "main")]
        assert env.bot.voice.status_enabled(guild.id) is False
        advance(programme_sim, 46)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)


async def test_onair_status_names_create_events_where_it_is_missing(programme_sim, events_fake):
    fake = events_fake
    allowed, without = fake.guilds
    async with running_bot(programme_sim, fake=fake) as env:
        await turn_on(env, allowed)
        await env.bot.storage.set_show_events(without.id, "main", on=True)  # from before the split

        async def events_field(guild: Guild) -> str:
            status = await fake.final_message(
                await fake.slash("onair", {}, sub=["status"], guild=guild)
            )
            fields = {f["name"]: f["value"] for f in status["embeds"][0]["fields"]}
            return fields[next(name for name in fields if "event" in name.lower())]

        assert await events_field(allowed) == "🟢 an event for each live show of `main`"
        assert await events_field(without) == (
            "🔴 no event for the live shows of `main`\n⚠️ " + errors.EVENTS_PERMISSION_MISSING
        )
        fake.user_locales[fake.owner_id] = "de"
        assert "Mir fehlt die Berechtigung **Events erstellen**" in await events_field(without)
