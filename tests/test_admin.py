"""/onair admin commands through the real discord.py: permissions, the key modal, SSRF refusals,
announcement setup, status, guild isolation and purge, and two processes sharing one database."""

from __future__ import annotations

import os

import pytest

from bot import errors
from bot.simulator import TRACKS, ManualClock, Programme, StationSimulator
from bot.storage import GuildSettings, Subscription

from .support.botenv import DEV_OVERRIDE, GUILD_KEY, SECRET, running_bot, subscription_config
from .support.discord_rules import CHANNEL_MESSAGE, EPHEMERAL, MODAL
from .support.fakediscord import FakeDiscord
from .support.stations import ONE_OF_EACH
from .support.storage_backends import POSTGRES_ENV, reset_postgres
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


async def start_add(env, name: str, base_url: str, station_id: int, **kw) -> tuple[str, dict]:
    options = {"name": name, "base_url": base_url, "station_id": station_id}
    iid = await env.fake.slash("onair", options, sub=["station", "add"], **kw)
    callback = await env.fake.response(iid)
    return iid, callback.json


async def add_with_key(env, name: str, base_url: str, station_id: int, key: str) -> str:
    """/onair station add, then ``key`` typed into its form; the reply that follows."""
    _, callback = await start_add(env, name, base_url, station_id)
    modal = callback["data"]
    field_id = modal["components"][0]["components"][0]["custom_id"]
    submit = await env.fake.submit_modal(modal["custom_id"], {field_id: key})
    follow = await env.fake.wait_request("POST", rf"^/webhooks/\d+/itoken-{submit}")
    return follow[0].json["content"]


async def test_member_without_manage_server_is_refused(dev_bot):
    async with dev_bot() as env:
        iid = await env.fake.slash("onair", {}, sub=["status"], permissions=0x800 | 0x400)
        reply = (await env.fake.response(iid)).json
        assert reply["type"] == CHANNEL_MESSAGE
        assert reply["data"]["flags"] & EPHEMERAL
        assert "Manage Server" in reply["data"]["content"]
        command = next(c for c in env.fake.commands if c["name"] == "onair")
        assert int(command["default_member_permissions"]) == 0x20


async def test_station_add_with_modal_key_is_validated_encrypted_and_never_echoed(
    dev_bot, caplog, guild_sim
):
    async with dev_bot() as env:
        iid, callback = await start_add(env, "Guild Radio", guild_sim.base_url, 5)
        assert callback["type"] == MODAL
        modal = callback["data"]
        field_id = modal["components"][0]["components"][0]["custom_id"]
        before = guild_sim.counters["info:5"]
        submit = await env.fake.submit_modal(modal["custom_id"], {field_id: GUILD_KEY})
        follow = await env.fake.wait_request("POST", rf"^/webhooks/\d+/itoken-{submit}")
        text = follow[0].json["content"]
        assert "Added **Guild Radio**" in text
        assert "the key works" in text
        assert guild_sim.counters["info:5"] == before + 1  # validated with a live info call
        stored = await env.bot.storage.guild_stations(env.guild.id)
        assert stored[0].key_cipher
        assert GUILD_KEY.encode() not in stored[0].key_cipher
        everything = "\n".join(
            repr(r.json) + repr(r.query) + repr(r.headers) for r in env.fake.requests
        )
        assert GUILD_KEY not in everything
        assert GUILD_KEY not in caplog.text
        message = await env.fake.final_message(
            await env.fake.slash("nowplaying", {"station": "guild-radio"})
        )
        assert message["embeds"][0]["footer"]["text"].startswith("Guild Radio · ")
        # The other guild never sees it.
        other = env.fake.guilds[1]
        iid = await env.fake.autocomplete("nowplaying", "station", "", guild=other)
        values = [c["value"] for c in (await env.fake.response(iid)).json["data"]["choices"]]
        assert all("guild-radio" not in v for v in values)


async def test_wrong_key_is_refused_and_nothing_saved(dev_bot, guild_sim):
    async with dev_bot() as env:
        text = await add_with_key(env, "Guild Radio", guild_sim.base_url, 5, "not-the-key")
        assert text == errors.ADD_FAILED.format(reason=errors.STATION_KEY_REFUSED)
        assert await env.bot.storage.guild_stations(env.guild.id) == []


async def test_without_secret_key_guild_keys_are_not_stored(guild_sim, guild_fake):
    async with running_bot(guild_sim, fake=guild_fake, bot_extra=DEV_OVERRIDE) as env:
        text = await add_with_key(env, "Guild Radio", guild_sim.base_url, 5, GUILD_KEY)
        assert text == errors.NO_SECRET
        assert await env.bot.storage.guild_stations() == []


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://c5.radioboss.fm", "https"),
        ("https://127.0.0.1:8443", "loopback"),
        ("https://169.254.169.254", "link-local"),
        ("https://evil.example", "only contacts"),
        ("https://admin:pw@c5.radioboss.fm", "password"),
    ],
)
async def test_hostile_station_urls_refused_by_default(guild_sim, guild_fake, url, words):
    async with running_bot(
        guild_sim, fake=guild_fake, env_extra={"ONAIR_SECRET_KEY": SECRET}
    ) as env:
        _, callback = await start_add(env, "Evil", url, 5)
        assert callback["type"] == CHANNEL_MESSAGE
        assert callback["data"]["flags"] & EPHEMERAL
        assert words in callback["data"]["content"]
        assert env.bot.registry.policy.allow_private is False


async def test_announce_status_preview_unannounce_and_purge(dev_bot, guild_sim):
    async with dev_bot() as env:
        fake = env.fake
        channel = env.guild.channels[1]
        iid = await fake.slash(
            "onair",
            {"channel": str(channel), "mode": "card", "style": "compact"},
            sub=["announce"],
            resolved=fake.resolved_channel(channel),
        )
        reply = (await fake.response(iid)).json["data"]
        assert "will be announced" in reply["content"]
        assert reply["flags"] & EPHEMERAL
        assert "(card, compact)" in reply["content"]
        (stored,) = await env.bot.storage.subscriptions(guild_id=env.guild.id)
        assert stored.style == "compact"
        card = await fake.wait_request("POST", rf"^/channels/{channel}/messages$")
        embed = card[0].json["embeds"][0]
        assert "thumbnail" in embed
        assert "image" not in embed
        await env.bot.announcer.idle()  # the card's delivery is recorded as sent
        status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
        text = repr(status["embeds"][0])
        assert "🟢 answering" in text
        assert f"🟢 <#{channel}> (card)" in text
        assert "**1** posted" in text
        assert "waiting" not in text
        preview = await fake.final_message(await fake.slash("onair", {}, sub=["preview"]))
        assert preview["flags"] & EPHEMERAL
        assert preview["embeds"][0]["title"]
        iid = await fake.slash(
            "onair",
            {"channel": str(channel)},
            sub=["unannounce"],
            resolved=fake.resolved_channel(channel),
        )
        assert "Stopped" in (await fake.response(iid)).json["data"]["content"]
        assert await env.bot.storage.subscriptions(guild_id=env.guild.id) == []
        assert env.bot.announcer.watched() == []  # no subscription left: no polling
        await env.bot.storage.upsert_subscription(Subscription(0, env.guild.id, channel, "main"))
        await fake.remove_guild(env.guild)
        await fake.wait_for(lambda: env.bot.get_guild(env.guild.id) is None)
        await env.bot.announcer.idle()
        await wait_for(_purged(env), within=10)


async def test_settings_resume_and_station_remove(dev_bot, guild_sim):
    async with dev_bot() as env:
        fake, guild = env.fake, env.guild
        options = {"timezone": "Europe/Berlin", "default_station": "main"}
        reply = await fake.final_message(await fake.slash("onair", options, sub=["settings"]))
        assert reply["flags"] & EPHEMERAL
        assert reply["content"] == "Time zone: **Europe/Berlin**; default station: **main**."
        await fake.final_message(await fake.slash("onair", {"timezone": "UTC"}, sub=["settings"]))
        assert await env.bot.storage.guild_settings(guild.id) == GuildSettings(
            guild.id, "UTC", "main"
        )
        channel = guild.channels[1]
        sub = await env.bot.storage.upsert_subscription(Subscription(0, guild.id, channel, "main"))
        await env.bot.storage.pause(sub.id, "I lost Send Messages there")
        iid = await fake.slash(
            "onair",
            {"channel": str(channel)},
            sub=["resume"],
            resolved=fake.resolved_channel(channel),
        )
        assert (await fake.final_message(iid))[
            "content"
        ] == f"Resumed 1 announcement(s) in <#{channel}>."
        (resumed,) = await env.bot.storage.subscriptions(guild_id=guild.id)
        assert resumed.paused_reason is None
        assert len(env.bot.announcer.watched()) == 1  # resumed: the station is polled again
        added = await add_with_key(env, "Guild Radio", guild_sim.base_url, 5, GUILD_KEY)
        assert added.startswith("Added **Guild Radio**")
        iid = await fake.slash("onair", {"station": "guild-radio"}, sub=["station", "remove"])
        text = (await fake.final_message(iid))["content"]
        assert text == "Removed **Guild Radio** and its announcements."
        assert await env.bot.storage.guild_stations(guild.id) == []


def _purged(env):
    async def check() -> bool:
        return not await env.bot.storage.subscriptions(guild_id=env.guild.id)

    return check


async def test_two_processes_on_one_database_announce_each_play_once(tmp_path):
    clock = ManualClock()
    sim = StationSimulator(clock=clock)
    sim.add_station(
        1, key="station-key-SECRET-42", programme=Programme(ONE_OF_EACH, epoch=clock() - 1)
    )
    await sim.start()
    fake = FakeDiscord()
    await fake.start()
    url = os.environ.get(POSTGRES_ENV)
    env_extra: dict[str, str] = {}
    if url:
        await reset_postgres(url)
        env_extra["ONAIR_DATABASE_URL"] = url
    db = str(tmp_path / "shared.sqlite3")
    guild = fake.guilds[0]
    config = subscription_config(guild.id, guild.channels[0])
    try:
        async with (
            running_bot(
                sim, fake=fake, extra_config=config, db_path=db, env_extra=env_extra
            ) as one,
            running_bot(
                sim, fake=fake, extra_config=config, db_path=db, env_extra=env_extra
            ) as two,
        ):
            watches = [e.bot.announcer.watched()[0] for e in (one, two)]
            # PostgreSQL: one poller per station for both processes; SQLite: each polls.
            assert [w.owned for w in watches].count(True) == (1 if url else 2)
            for step in (0, 21, 5):
                clock.advance(step)
                for env in (one, two):
                    announcer = env.bot.announcer
                    watch = announcer.watched()[0]
                    if not watch.owned:
                        continue  # PostgreSQL: the other process holds the station's lease
                    await wait_for(lambda w=watch: not w.busy)
                    before = watch.status.polls
                    announcer.poll_now(watch)
                    await wait_for(lambda w=watch, b=before: w.status.polls > b and not w.busy)
                    await announcer.idle()
        posts = [
            r
            for r in fake.sent("POST", rf"^/channels/{guild.channels[0]}/messages$")
            if r.status == 200
        ]
        titles = [p.json["embeds"][0]["title"] for p in posts]
        assert titles == [TRACKS[0].title, TRACKS[1].title]  # the jingle is not announced
    finally:
        await fake.stop()
        await sim.stop()
