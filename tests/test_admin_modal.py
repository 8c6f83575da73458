"""The station key modal and the limits on adding stations, through the real discord.py and the
strict fake Discord: labels that Discord accepts, a form bound to its user and guild (random
custom id), Manage Server checked again on submit, no stations for guilds the bot is not in, and
a per-guild station limit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.simulator import StationSimulator

from .support.botenv import DEV_OVERRIDE, SECRET, fake_discord_fixture, running_bot
from .support.discord_rules import ACTION_ROW, CHANNEL_MESSAGE, EPHEMERAL, MODAL
from .support.fakediscord import FakeDiscord, Guild, snowflake
from .support.stations import serving

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord

KEY_A = "guild-A-KEY-11111"
KEY_B = "guild-B-KEY-22222"
MANAGE_NOTHING = 0x800 | 0x400  # send messages, view channel
OLD_LABEL = "API key (leave empty if the station needs none)"


@pytest.fixture
async def keyed_sim():
    server = StationSimulator()
    server.add_station(1, key="station-key-SECRET-42", seed=3)
    server.add_station(5, key=KEY_A, seed=5, name="Radio A")
    server.add_station(6, key=KEY_B, seed=6, name="Radio B")
    async with serving(server):
        yield server


fake = fake_discord_fixture(guild_count=2, channels_per_guild=1)


def bot(keyed_sim: StationSimulator, fake: FakeDiscord, bot_extra: str = "") -> Any:
    return running_bot(
        keyed_sim,
        fake=fake,
        env_extra={"ONAIR_SECRET_KEY": SECRET},
        bot_extra=DEV_OVERRIDE + bot_extra,
    )


async def open_form(env: Any, name: str, station_id: int, **kw: Any) -> dict[str, Any]:
    """Run /onair station add; returns the callback body (a modal, or a refusal)."""
    options = {"name": name, "base_url": env.sim.base_url, "station_id": str(station_id)}
    iid = await env.fake.slash("onair", options, sub=["station", "add"], **kw)
    body: dict[str, Any] = (await env.fake.response(iid)).json
    return body


async def submit(env: Any, modal: dict[str, Any], key: str, **kw: Any) -> dict[str, Any]:
    """Submit the modal; returns the message the submit ended with (reply or follow-up)."""
    field_id = modal["components"][0]["components"][0]["custom_id"]
    iid = await env.fake.submit_modal(modal["custom_id"], {field_id: key}, **kw)
    return await env.fake.final_message(iid)


async def test_modal_labels_fit_discord_and_the_old_label_is_rejected(keyed_sim, fake):
    async with bot(keyed_sim, fake) as env:
        callback = await open_form(env, "Radio A", 5)
        assert callback["type"] == MODAL, callback  # the strict fake accepted the modal
        field = callback["data"]["components"][0]["components"][0]
        assert len(field["label"]) <= 45
        assert "empty" in field["placeholder"]
        assert len(field["placeholder"]) <= 100
    # The label OnAir used to send (47 characters) is what real Discord refuses.
    row = {"type": ACTION_ROW, "components": [{**field, "label": OLD_LABEL}]}
    old = {**callback, "data": {**callback["data"], "components": [row]}}
    iid = fake.pending_interaction(2)  # a slash command nobody has answered yet
    status, body = await raw_post(fake, f"/interactions/{iid}/itoken-{iid}/callback", old)
    assert status == 400
    assert body["code"] == 50035
    label = body["errors"]["data"]["components"]["0"]["components"]["0"]["label"]
    assert label["_errors"][0]["code"] == "BASE_TYPE_MAX_LENGTH"


async def raw_post(fake: FakeDiscord, path: str, body: Any) -> tuple[int, Any]:
    import aiohttp

    async with (
        aiohttp.ClientSession(connector=fake.connector()) as http,
        http.post(f"https://discord.com/api/v10{path}", json=body) as response,
    ):
        return response.status, await response.json()


async def test_custom_id_is_random_per_use(keyed_sim, fake):
    async with bot(keyed_sim, fake) as env:
        first = (await open_form(env, "Radio A", 5))["data"]["custom_id"]
        second = (await open_form(env, "Radio A", 5))["data"]["custom_id"]
        assert first != second
        assert "radio-a" not in first


async def test_two_guilds_adding_the_same_name_at_once_do_not_cross(keyed_sim, fake):
    guild_a, guild_b = fake.guilds
    async with bot(keyed_sim, fake) as env:
        # Both forms open before either is submitted; same station name, same admin account.
        form_a = (await open_form(env, "Radio", 5, guild=guild_a))["data"]
        form_b = (await open_form(env, "Radio", 6, guild=guild_b))["data"]
        before = dict(keyed_sim.counters)
        replies = await asyncio.gather(
            submit(env, form_a, KEY_A, guild=guild_a), submit(env, form_b, KEY_B, guild=guild_b)
        )
        assert all("the key works" in r["content"] for r in replies), replies
        stored_a = await env.bot.storage.guild_stations(guild_a.id)
        stored_b = await env.bot.storage.guild_stations(guild_b.id)
        assert [s.station_id for s in stored_a] == [5]
        assert [s.station_id for s in stored_b] == [6]
        # Each key went to its own station only (station 6 never saw guild A's key).
        assert keyed_sim.counters["info:5"] == before.get("info:5", 0) + 1
        assert keyed_sim.counters["info:6"] == before.get("info:6", 0) + 1


async def test_submit_from_another_user_is_refused(keyed_sim, fake):
    async with bot(keyed_sim, fake) as env:
        form = (await open_form(env, "Radio A", 5))["data"]
        intruder = snowflake()
        reply = await submit(env, form, KEY_A, user_id=intruder)
        assert reply["flags"] & EPHEMERAL
        assert "someone else" in reply["content"]
        assert await env.bot.storage.guild_stations() == []
        # The form still works for the admin who opened it.
        reply = await submit(env, form, KEY_A)
        assert "the key works" in reply["content"]
        assert len(await env.bot.storage.guild_stations(env.guild.id)) == 1


async def test_submit_from_another_guild_is_refused(keyed_sim, fake):
    async with bot(keyed_sim, fake) as env:
        form = (await open_form(env, "Radio A", 5))["data"]
        reply = await submit(env, form, KEY_A, guild=fake.guilds[1])
        assert reply["flags"] & EPHEMERAL
        assert "someone else" in reply["content"]
        assert await env.bot.storage.guild_stations() == []


async def test_submit_without_manage_server_is_refused(keyed_sim, fake):
    async with bot(keyed_sim, fake) as env:
        form = (await open_form(env, "Radio A", 5))["data"]
        before = keyed_sim.counters.get("info:5", 0)
        reply = await submit(env, form, KEY_A, permissions=MANAGE_NOTHING)
        assert reply["flags"] & EPHEMERAL
        assert "Manage Server" in reply["content"]
        assert await env.bot.storage.guild_stations() == []
        assert keyed_sim.counters.get("info:5", 0) == before  # the key was not even tried


async def test_guild_the_bot_is_not_in_cannot_add_stations(keyed_sim, fake):
    stranger = Guild(snowflake(), "Commands only", [snowflake()])
    stranger.roles = [stranger.id]
    async with bot(keyed_sim, fake) as env:
        assert env.bot.get_guild(stranger.id) is None
        callback = await open_form(env, "Radio A", 5, guild=stranger)
        assert callback["type"] == CHANNEL_MESSAGE
        assert callback["data"]["flags"] & EPHEMERAL
        assert "not a member of this server" in callback["data"]["content"]
        # Nor by submitting a form opened while the bot was still a member.
        form = (await open_form(env, "Radio A", 5))["data"]
        await fake.remove_guild(env.guild)
        await fake.wait_for(lambda: env.bot.get_guild(env.guild.id) is None)
        reply = await submit(env, form, KEY_A)
        assert "not a member of this server" in reply["content"], reply
        assert await env.bot.storage.guild_stations() == []


async def test_station_limit_per_guild(keyed_sim, fake):
    async with bot(keyed_sim, fake, "max_guild_stations = 2\n") as env:
        for name in ("One", "Two"):
            form = (await open_form(env, name, 5))["data"]
            assert "the key works" in (await submit(env, form, KEY_A))["content"]
        refused = await open_form(env, "Three", 5)
        assert refused["type"] == CHANNEL_MESSAGE
        assert refused["data"]["flags"] & EPHEMERAL
        assert "already has 2 stations" in refused["data"]["content"]
        # Re-adding an existing name (a key change) is not a new station.
        form = (await open_form(env, "Two", 5))["data"]
        assert "the key works" in (await submit(env, form, KEY_A))["content"]
        # The other guild has its own allowance.
        form = (await open_form(env, "Three", 6, guild=fake.guilds[1]))["data"]
        assert "the key works" in (await submit(env, form, KEY_B, guild=fake.guilds[1]))["content"]
        assert len(await env.bot.storage.guild_stations(env.guild.id)) == 2


async def test_station_limit_defaults_to_ten(keyed_sim, fake):
    async with bot(keyed_sim, fake) as env:
        assert env.bot.settings.max_guild_stations == 10
        for index in range(10):
            form = (await open_form(env, f"Station {index}", 5))["data"]
            assert "the key works" in (await submit(env, form, KEY_A))["content"]
        refused = await open_form(env, "Eleventh", 5)
        assert "already has 10 stations" in refused["data"]["content"]
        assert len(await env.bot.storage.guild_stations(env.guild.id)) == 10


@pytest.mark.parametrize("key", ["abc\ud800", "KEY\u200b"])
async def test_a_key_that_is_not_valid_text_is_refused_politely(keyed_sim, fake, key):
    # The modal's submit arrives as JSON, which can carry a lone surrogate ("\ud800").
    async with bot(keyed_sim, fake) as env:
        form = (await open_form(env, "Odd", 5))["data"]
        reply = await submit(env, form, key)
        assert "That API key" in reply["content"]
        assert "copy the key again" in reply["content"]
        assert reply["flags"] & EPHEMERAL
        assert await env.bot.storage.guild_stations(env.guild.id) == []
