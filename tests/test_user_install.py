"""OnAir installed on a listener's own account (a user install): /nowplaying, /recent and /listen
in a DM with OnAir, in a DM of others and in a server OnAir is not in, through the real
discord.py client against the fake Discord; the owner's open stations only, the choice kept per
user; every other command for servers only; the fake's rules for all of it."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from bot.storage import GuildStation

from .support import discord_rules as rules
from .support.botenv import running_bot
from .support.fakediscord import FakeDiscord

ANYWHERE = {"nowplaying", "recent", "listen"}
# A second station open to every server (station 2 of the simulator), beside the test config's
# "main" (open) and "second1" (for the fake's first guild only).
THIRD = """
[[stations]]
id = "third"
name = "Third FM"
base_url = "{url}"
station_id = 2
key_env = "ONAIR_TEST_STATION_KEY"
timezone = "Europe/Berlin"
guilds = []
"""
CONTEXTS = (rules.BOT_DM, rules.PRIVATE_CHANNEL, rules.GUILD_CONTEXT)


def _buttons(message: dict) -> list[str]:
    return [
        c.get("label", "") for row in message.get("components") or [] for c in row["components"]
    ]


# The fake's rules ---------------------------------------------------------------------------


def _errors(command: dict) -> dict:
    errors = rules.FormErrors()
    base = {"name": "nowplaying", "description": "What is on air", "type": 1}
    rules.check_commands([{**base, **command}], errors)
    return errors.body().get("errors", {})


def test_the_fake_refuses_unknown_empty_or_repeated_install_types_and_contexts():
    assert _errors({"integration_types": [0, 1], "contexts": [0, 1, 2]}) == {}
    assert _errors({"integration_types": None, "contexts": None}) == {}
    assert "integration_types" in _errors({"integration_types": [2]})["0"]
    assert "integration_types" in _errors({"integration_types": []})["0"]
    assert "integration_types" in _errors({"integration_types": [1, 1]})["0"]
    assert "integration_types" in _errors({"integration_types": "1"})["0"]
    assert "contexts" in _errors({"contexts": [3]})["0"]
    assert "contexts" in _errors({"contexts": [True]})["0"]
    assert "contexts" in _errors({"contexts": []})["0"]


def test_an_application_without_user_install_refuses_commands_that_name_it():
    fake = FakeDiscord()
    assert fake.application()["integration_types_config"].keys() == {"0", "1"}
    fake.app_install_types = (rules.GUILD_INSTALL,)
    assert fake.application()["integration_types_config"].keys() == {"0"}
    base = {"description": "What is on air", "type": 1}
    commands = [
        {**base, "name": "stats", "integration_types": [0]},
        {**base, "name": "nowplaying", "integration_types": [0, 1]},
        {**base, "name": "recent"},  # left out: the application's own install types
    ]
    errors = rules.FormErrors()
    rules.check_install_types(commands, fake.app_install_types, errors)
    assert errors.body()["errors"].keys() == {"1"}
    assert "integration_types" in errors.body()["errors"]["1"]
    both = rules.FormErrors()
    rules.check_install_types(commands, (rules.GUILD_INSTALL, rules.USER_INSTALL), both)
    assert rules.rejection(both) is None


def test_a_command_is_offered_only_where_its_install_types_and_contexts_say():
    guild_only = {"integration_types": [0], "contexts": [0]}
    anywhere = {"integration_types": [0, 1], "contexts": [0, 1, 2]}
    assert rules.offered(guild_only, install=rules.GUILD_INSTALL, context=rules.GUILD_CONTEXT)
    for context in CONTEXTS:
        assert not rules.offered(guild_only, install=rules.USER_INSTALL, context=context)
        assert rules.offered(anywhere, install=rules.USER_INSTALL, context=context)
    # A server install reaches DMs only with its own bot, never other people's DMs.
    assert not rules.offered(anywhere, install=rules.GUILD_INSTALL, context=rules.PRIVATE_CHANNEL)


def test_a_dm_interaction_is_shaped_as_discords():
    fake = FakeDiscord()
    user = 4242
    for context in (rules.BOT_DM, rules.PRIVATE_CHANNEL):
        where = fake.elsewhere(context)
        payload = fake._interaction(
            2, {}, guild=None, channel_id=None, user_id=user, permissions=0, where=where
        )
        assert payload["authorizing_integration_owners"] == {"1": str(user)}
        assert payload["context"] == context
        assert "guild_id" not in payload
        assert "member" not in payload
        assert payload["user"]["id"] == str(user)
        assert payload["channel"]["type"] == 1  # a DM channel object
        expected = rules.BOT_DM_APP_PERMISSIONS if context == 1 else rules.PRIVATE_APP_PERMISSIONS
        assert int(payload["app_permissions"]) == expected
    # Only OnAir's own DM is within its reach by REST.
    assert where.channel_id in fake.missing_access
    outside = fake.elsewhere(rules.GUILD_CONTEXT)
    payload = fake._interaction(
        2, {}, guild=None, channel_id=None, user_id=user, permissions=0, where=outside
    )
    assert payload["guild_id"] == str(outside.guild_id)
    assert outside.guild_id not in {g.id for g in fake.guilds}  # OnAir is not in it
    assert payload["member"]["user"]["id"] == str(user)
    assert int(payload["app_permissions"]) == rules.PRIVATE_APP_PERMISSIONS
    assert outside.channel_id in fake.missing_access


# The bot -------------------------------------------------------------------------------------


@pytest.mark.e2e
async def test_the_sync_offers_three_commands_anywhere_and_keeps_the_rest_to_servers(onair):
    by_name = {c["name"]: c for c in onair.fake.commands}
    for name, command in by_name.items():
        if name in ANYWHERE:
            assert command["integration_types"] == [0, 1], name
            assert command["contexts"] == [0, 1, 2], name
        else:
            assert command["integration_types"] == [0], name
            assert command["contexts"] == [0], name
    dm = onair.fake.elsewhere(rules.BOT_DM)
    with pytest.raises(AssertionError, match="not offered"):
        await onair.fake.slash("stats", where=dm)
    with pytest.raises(AssertionError, match="not offered"):
        await onair.fake.slash("onair", sub=["status"], where=dm)


@pytest.mark.e2e
async def test_an_application_without_user_install_syncs_the_three_for_servers_and_starts(
    live_simulator, caplog
):
    async with FakeDiscord() as fake:
        fake.app_install_types = (rules.GUILD_INSTALL,)
        with caplog.at_level(logging.INFO, logger="onair.sync"):
            async with running_bot(live_simulator, fake=fake) as onair:
                puts = fake.sent("PUT", r"^/applications/\d+/commands$")
                assert [r.status for r in puts] == [200]
                for command in fake.commands:
                    assert command["integration_types"] == [0], command["name"]
                    assert command["contexts"] == [0], command["name"]
                message = await fake.final_message(await fake.slash("nowplaying"))
                assert message["embeds"][0]["footer"]["text"].startswith("Main FM · ")
                with pytest.raises(AssertionError, match="not offered"):
                    await fake.slash("nowplaying", where=fake.elsewhere(rules.BOT_DM))
                assert onair.bot.is_ready()
    said = [r.getMessage() for r in caplog.records if r.name == "onair.sync"]
    assert len(said) == 1, said
    assert said[0].startswith("User Install is off for this application")
    assert "/nowplaying, /recent, /listen are registered for servers only" in said[0]
    assert "Installation -> Installation Contexts" in said[0]


@pytest.mark.e2e
async def test_the_three_commands_answer_in_dms_and_in_servers_onair_is_not_in(onair):
    fake = onair.fake
    airing = onair.sim.station(1).programme.at(onair.sim.clock())
    for context in CONTEXTS:
        where = fake.elsewhere(context)
        message = await fake.final_message(await fake.slash("nowplaying", where=where))
        assert message["embeds"][0]["footer"]["text"].startswith("Main FM · ")
        assert message["embeds"][0]["title"] in (airing.item.title, *_titles_near(onair))
        # No ❤ (likes count in servers) and no "Play in voice": only the links.
        assert "Like" not in _buttons(message)
        assert "Listen" in _buttons(message)
        message = await fake.final_message(await fake.slash("recent", {"count": 3}, where=where))
        assert message["embeds"][0]["description"].count("\n") == 2
        message = await fake.final_message(await fake.slash("listen", where=where))
        assert "Listen" in _buttons(message)
    # Nothing was asked of the channels or servers OnAir cannot see, and nothing was refused.
    refused = [r for r in fake.requests if r.status >= 400]
    assert refused == []
    assert not fake.sent(pattern=r"^/channels/")
    assert not fake.sent(pattern=r"^/guilds/")


def _titles_near(onair) -> tuple[str, ...]:
    """The track on air now and just before (a change may fall between the look and the
    answer)."""
    sim = onair.sim
    now = sim.clock()
    programme = sim.station(1).programme
    return tuple(programme.at(now - delta).item.title for delta in (0, 5, 10))


@pytest.mark.e2e
async def test_a_personal_answer_is_in_the_users_own_language(onair):
    fake = onair.fake
    listener = 777
    fake.user_locales[listener] = "de"
    iid = await fake.slash("recent", where=fake.elsewhere(rules.BOT_DM), user_id=listener)
    footer = (await fake.final_message(iid))["embeds"][0]["footer"]["text"]
    english = (
        await fake.final_message(await fake.slash("recent", where=fake.elsewhere(rules.BOT_DM)))
    )["embeds"][0]["footer"]["text"]
    assert "▶ on air now" in english
    assert "▶ läuft gerade" in footer, footer


@pytest.mark.e2e
async def test_the_choice_of_station_is_remembered_per_user_and_guild_stations_are_not_offered(
    live_simulator,
):
    extra = THIRD.format(url=live_simulator.base_url)
    async with running_bot(live_simulator, stations=2, extra_config=extra) as onair:
        fake, bot = onair.fake, onair.bot
        guild = fake.guilds[0]
        bot.registry.add_guild_station(
            GuildStation(guild.id, "own", "Guild Own FM", live_simulator.base_url, 1, None), None
        )
        dm = fake.elsewhere(rules.BOT_DM)
        outside = fake.elsewhere(rules.GUILD_CONTEXT)
        # Only the owner's stations open to every server: not the guild's own, not "second1".
        for where in (dm, outside):
            iid = await fake.autocomplete("nowplaying", "station", "", where=where)
            choices = (await fake.response(iid)).json["data"]["choices"]
            assert [c["value"] for c in choices] == ["main", "third"]
        # In the guild that installed OnAir, its own stations are there as before.
        iid = await fake.autocomplete("nowplaying", "station", "")
        offered = [c["value"] for c in (await fake.response(iid)).json["data"]["choices"]]
        assert {"main", "second1", "third", f"g{guild.id}-own"} <= set(offered)

        # Two open stations and no default of the owner's ("main" is the test config's
        # default, so turn it off): the first personal /nowplaying asks to choose.
        listener, other = 9001, 9002
        bot.registry.settings = dataclasses.replace(bot.settings, default_station="")
        reply = await fake.final_message(await fake.slash("listen", where=dm, user_id=listener))
        assert "remember" in reply["content"]
        chosen = await fake.slash("nowplaying", {"station": "third"}, where=dm, user_id=listener)
        footer = (await fake.final_message(chosen))["embeds"][0]["footer"]["text"]
        assert footer.startswith("Third FM · ")
        assert await bot.storage.user_station(listener) == "third"
        # Remembered for this user, in every place, not for anyone else.
        for where in (dm, outside):
            iid = await fake.slash("nowplaying", where=where, user_id=listener)
            footer = (await fake.final_message(iid))["embeds"][0]["footer"]["text"]
            assert footer.startswith("Third FM · ")
        reply = await fake.final_message(await fake.slash("nowplaying", where=dm, user_id=other))
        assert "remember" in reply["content"]
        # A guild's station cannot be named from a user install either.
        iid = await fake.slash("nowplaying", {"station": f"g{guild.id}-own"}, where=dm)
        assert "don't know that station" in (await fake.final_message(iid))["content"]
        assert await bot.storage.user_station(fake.owner_id) is None


@pytest.mark.e2e
async def test_a_listen_link_menu_answers_in_a_dm(onair):
    fake = onair.fake
    dm = fake.elsewhere(rules.PRIVATE_CHANNEL)
    iid = await fake.slash("listen", where=dm)
    message = await fake.final_message(iid)
    menus = [
        c
        for row in message.get("components") or []
        for c in row["components"]
        if c.get("type") == rules.STRING_SELECT
    ]
    if not menus:
        pytest.skip("the station offers no further streams")
    menu = menus[0]
    iid = await fake.choose(
        fake.original(iid), menu["custom_id"], [menu["options"][0]["value"]], where=dm
    )
    answer = await fake.final_message(iid)
    assert answer["flags"] & rules.EPHEMERAL
    assert "Open" in _buttons(answer)


async def test_storage_keeps_one_station_per_user(storage):
    assert await storage.user_station(1) is None
    await storage.set_user_station(1, "main", now=100.0)
    await storage.set_user_station(2, "third", now=100.0)
    await storage.set_user_station(1, "third", now=200.0)  # a new choice replaces the old
    assert await storage.user_station(1) == "third"
    assert await storage.user_station(2) == "third"
    assert await storage.user_station(3) is None
