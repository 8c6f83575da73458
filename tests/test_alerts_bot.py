"""Live and offline alerts end to end: /onair alerts through the real discord.py client against
the fake Discord, the station simulator on a clock the test moves, and the bot's alerts on the
same clock. Each alert is posted once (a restart repeats none), flapping posts nothing, and bad
input gets a private answer."""

from __future__ import annotations

from typing import Any

import pytest

from bot.simulator import LIVE_SHOW, TRACKS
from bot.simulator.programme import Slot
from bot.storage import AlertSubscription, GuildStation

from .support.botenv import STATION_KEY, running_bot
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import FakeDiscord
from .support.stations import TRACK_EARLY, programme_sim_fixture
from .support.waiting import poll_watch, wait_for

pytestmark = pytest.mark.e2e
# A track reported 40 s long and cut at 20 s (not a jingle: announced), a live show, a long track.
SLOTS = [Slot(TRACKS[0], 20.0, TRACK_EARLY), (LIVE_SHOW, 60.0), (TRACKS[1], 3600.0)]
MENTION_EVERYONE = 1 << 17


alert_sim = programme_sim_fixture("alert_sim", SLOTS, key=STATION_KEY)


def alerts_in(fake: FakeDiscord, channel: int) -> list[dict[str, Any]]:
    """OnAir's alert messages in a channel, oldest first."""
    out = []
    for mid in fake.channel_messages[channel]:
        message = fake.messages[mid]
        embeds = message.get("embeds") or []
        title = (embeds[0].get("title") or "") if embeds else ""
        if title.startswith(("🔴 LIVE NOW: ", "Live show ended: ", "⚠️ ", "✅ ")):
            out.append(message)
    return out


def titles(fake: FakeDiscord, channel: int) -> list[str]:
    return [m["embeds"][0]["title"] for m in alerts_in(fake, channel)]


async def poll(env: Any) -> None:
    """One poll of the station now, its alerts decided and sent."""
    announcer = env.bot.announcer
    await poll_watch(announcer)
    await announcer.idle()
    await env.bot.posts.idle()


async def turn_on(env: Any, channel: int, role: int | None) -> dict[str, Any]:
    fake = env.fake
    options: dict[str, Any] = {"channel": str(channel)}
    resolved = fake.resolved_channel(channel)
    if role is not None:
        options["role"] = str(role)
        resolved |= fake.resolved_role(role)
    iid = await fake.slash("onair", options, sub=["alerts"], resolved=resolved)
    return dict((await fake.response(iid)).json["data"])


async def test_live_show_and_outage_alerts_each_once_and_a_restart_repeats_none(
    alert_sim, tmp_path
):
    clock = alert_sim.clock
    db = str(tmp_path / "onair.sqlite3")
    fake = FakeDiscord()
    await fake.start()
    try:
        guild = fake.guilds[0]
        channel, role = guild.channels[0], guild.roles[1]
        async with running_bot(alert_sim, fake=fake, db_path=db, clock=clock) as env:
            reply = await turn_on(env, channel, role)
            assert reply["flags"] & EPHEMERAL
            assert "Alerts of **Main FM** go to" in reply["content"]
            await wait_for(lambda: bool(env.bot.announcer.watched()))  # alerts alone watch it
            await poll(env)
            assert titles(fake, channel) == []  # a track on air: nothing to say

            clock.advance(21)  # the live show starts
            await poll(env)
            await poll(env)  # seen twice: posted once
            (start,) = alerts_in(fake, channel)
            assert (
                start["embeds"][0]["title"]
                == f"🔴 LIVE NOW: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"
            )
            assert start["content"] == f"<@&{role}>"
            (post,) = [r for r in fake.sent("POST", rf"^/channels/{channel}/messages$")]
            assert post.json["allowed_mentions"] == {"parse": [], "roles": [role]}
            buttons = start["components"][0]["components"]
            assert buttons[0]["label"] == "Listen"
            assert buttons[0]["url"].startswith("http")

            clock.advance(60)  # the show ends
            await poll(env)
            assert (
                titles(fake, channel)[1]
                == f"Live show ended: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"
            )
            assert "after 1 min" in alerts_in(fake, channel)[1]["embeds"][0]["description"]
            ended = fake.sent("POST", rf"^/channels/{channel}/messages$")[-1]
            assert ended.json["allowed_mentions"]["parse"] == []
            assert (
                "roles" not in ended.json["allowed_mentions"]
                or not ended.json["allowed_mentions"]["roles"]
            )

            # Flapping: stopped for 100 s, then playing again: nothing posted.
            alert_sim.set_quirks({"stopped"})
            await poll(env)
            clock.advance(100)
            await poll(env)
            alert_sim.set_quirks(set())
            await poll(env)
            assert len(alerts_in(fake, channel)) == 2

            # Not answering for longer than offline_after (120 s): down, then back.
            alert_sim.inject("status", status=404)
            await poll(env)
            clock.advance(90)
            await poll(env)
            assert len(alerts_in(fake, channel)) == 2
            clock.advance(40)
            await poll(env)
            await poll(env)
            assert titles(fake, channel)[2] == "⚠️ Main FM is down"
            down = alerts_in(fake, channel)[2]
            assert down["content"] == ""  # a staff post: nobody pinged
            text = down["embeds"][0]["description"]
            assert "has not answered since" in text
            # A channel listeners may read: no server, port or HTTP code (/onair status has them).
            server = alert_sim.base_url.split("://")[1]
            assert server.split(":")[0] not in text
            assert "404" not in text
            assert "HTTP" not in text
            assert "try again" not in text
            assert "footer" not in down["embeds"][0]  # the message's time says when
            assert "timestamp" not in down["embeds"][0]
        # A restart while the station is still down: the down alert is not repeated ...
        async with running_bot(alert_sim, fake=fake, db_path=db, clock=clock) as env:
            await wait_for(lambda: bool(env.bot.announcer.watched()))
            await poll(env)
            assert len(alerts_in(fake, channel)) == 3
            alert_sim.faults.clear()
            clock.advance(20)
            await poll(env)
            # ... and the recovery is reported with the whole outage (130 s + 20 s).
            assert titles(fake, channel)[3] == "✅ Main FM is back"
            back = alerts_in(fake, channel)[3]["embeds"][0]["description"]
            assert "down for **2 min 30 s**" in back
            await poll(env)
        async with running_bot(alert_sim, fake=fake, db_path=db, clock=clock) as env:
            await wait_for(lambda: bool(env.bot.announcer.watched()))
            await poll(env)
            states = await env.bot.storage.post_states("alert|")
        assert len(alerts_in(fake, channel)) == 4
        assert sorted(states.values()) == ["sent"] * 4
    finally:
        await fake.stop()


async def test_bad_alert_targets_get_a_private_answer(alert_sim):
    fake = FakeDiscord()
    guild = fake.guilds[0]
    guild.everyone_permissions &= ~MENTION_EVERYONE  # OnAir may not ping every role here
    await fake.start()
    try:
        async with running_bot(alert_sim, fake=fake) as env:
            channel = guild.channels[0]
            staff = guild.roles[2]  # not mentionable
            reply = await turn_on(env, channel, staff)
            assert reply["flags"] & EPHEMERAL
            assert f"I can't ping <@&{staff}>" in reply["content"]
            reply = await turn_on(env, channel, guild.roles[0])
            assert "never pings @everyone" in reply["content"]
            iid = await fake.slash("onair", {}, sub=["alerts"])
            reply = dict((await fake.response(iid)).json["data"])
            assert reply["flags"] & EPHEMERAL
            assert "Pick the `channel`" in reply["content"]
            assert await env.bot.storage.alert_subscriptions() == []
            # The mentionable role is fine (and /onair status lists it); off stops them.
            assert "go to" in (await turn_on(env, channel, guild.roles[1]))["content"]
            status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
            shown = {f["name"]: f["value"] for f in status["embeds"][0]["fields"]}
            assert shown["Alerts and recap"] == (
                f"alerts of `main` in <#{channel}>, pinging <@&{guild.roles[1]}>"
            )
            iid = await fake.slash("onair", {"off": True}, sub=["alerts"])
            reply = dict((await fake.response(iid)).json["data"])
            assert "Stopped the alerts" in reply["content"]
            assert await env.bot.storage.alert_subscriptions() == []
    finally:
        await fake.stop()


async def test_alerts_and_a_recap_from_the_config_file(alert_sim, tmp_path):
    # The owner's [[alerts]] and [[recaps]] are stored at each start, and the alerts they
    # set up post as /onair alerts would; a restart keeps the recap's start (a missed slot
    # still posts) and repeats no alert.
    clock = alert_sim.clock
    db = str(tmp_path / "onair.sqlite3")
    fake = FakeDiscord(channels_per_guild=2)
    await fake.start()
    guild = fake.guilds[0]
    channel, recap_channel, role = guild.channels[0], guild.channels[1], guild.roles[1]
    extra = (
        f"\n[[alerts]]\nguild = {guild.id}\nstation = 'main'\nchannel = {channel}\nrole = {role}\n"
        f"\n[[recaps]]\nguild = {guild.id}\nstation = 'main'\nchannel = {recap_channel}\n"
        "day = 'friday'\nhour = 18\n"
    )
    try:
        async with running_bot(
            alert_sim, fake=fake, db_path=db, clock=clock, extra_config=extra
        ) as env:
            storage = env.bot.storage
            assert await storage.alert_subscriptions("main") == [
                AlertSubscription(guild.id, "main", channel, role)
            ]
            (recap,) = await storage.recaps()
            assert (recap.channel_id, recap.station, recap.weekday, recap.hour) == (
                recap_channel,
                "main",
                4,
                18,
            )
            await wait_for(lambda: bool(env.bot.announcer.watched()))
            await poll(env)
            clock.advance(21)  # the live show starts
            await poll(env)
            assert titles(fake, channel) == [f"🔴 LIVE NOW: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"]
        clock.advance(5)
        async with running_bot(
            alert_sim, fake=fake, db_path=db, clock=clock, extra_config=extra
        ) as env:
            assert [r.since for r in await env.bot.storage.recaps()] == [recap.since]
            await wait_for(lambda: bool(env.bot.announcer.watched()))
            await poll(env)
            assert len(titles(fake, channel)) == 1  # the show is still on: nothing repeated
    finally:
        await fake.stop()


async def test_another_guild_adding_the_same_station_changes_nothing_already_decided(alert_sim):
    """Guild 2 adds the station guild 1 follows as its own (same URL, id and key: one watch)
    and turns alerts on for it: guild 1 gets no second "LIVE NOW"; when guild 2 turns its
    alerts off again, guild 1 gets no second "ended"."""
    clock = alert_sim.clock
    fake = FakeDiscord(guild_count=2)
    await fake.start()
    first, second = fake.guilds
    channel, other = first.channels[0], second.channels[0]
    try:
        async with running_bot(alert_sim, fake=fake, clock=clock) as env:
            await turn_on(env, channel, first.roles[1])
            await wait_for(lambda: bool(env.bot.announcer.watched()))
            await poll(env)
            clock.advance(21)  # the live show starts
            await poll(env)
            assert len(alerts_in(fake, channel)) == 1
            stored = GuildStation(second.id, "rock", "Rock", alert_sim.base_url, 1, None)
            await env.bot.storage.save_guild_station(stored)
            slug = env.bot.registry.add_guild_station(stored, STATION_KEY).slug
            assert slug < "main"  # sorted first among the watch's stations
            await env.bot.alerts.subscribe(
                AlertSubscription(second.id, slug, other, second.roles[1])
            )
            await env.bot.announcer.refresh()
            assert len(env.bot.announcer.watched()) == 1  # one upstream station: one watch
            clock.advance(5)
            await poll(env)
            await poll(env)
            assert titles(fake, channel) == [f"🔴 LIVE NOW: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"]
            assert titles(fake, other) == [f"🔴 LIVE NOW: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"]
            clock.advance(60)  # the show ends
            await poll(env)
            ended = f"Live show ended: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"
            assert titles(fake, channel)[1:] == [ended]
            assert titles(fake, other)[1:] == [ended]
            await env.bot.alerts.unsubscribe(second.id, slug)
            await env.bot.announcer.refresh()
            clock.advance(5)
            await poll(env)
            await poll(env)
            assert len(alerts_in(fake, channel)) == 2
            assert len(alerts_in(fake, other)) == 2
    finally:
        await fake.stop()
