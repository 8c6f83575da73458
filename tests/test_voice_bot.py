"""Voice through the real discord.py client against the fake Discord: /join, /leave,
/onair voice and the "Play in" hints, with what each refuses and says."""

from __future__ import annotations

import pytest

from bot import errors
from bot.storage import GuildStation

from .support.discord_rules import EPHEMERAL

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


async def reply_of(env, iid: str) -> dict:
    """The command's final message, checked to be ephemeral (every voice error is)."""
    message = await env.fake.final_message(iid)
    callback = (await env.fake.response(iid)).json
    flags = (callback.get("data") or {}).get("flags", 0) | message.get("flags", 0)
    assert flags & EPHEMERAL, message
    return message


async def test_join_without_being_in_a_voice_channel_joins_nothing(onair):
    iid = await onair.fake.slash("join", {})
    message = await reply_of(onair, iid)
    assert message["content"] == errors.JOIN_NO_CHANNEL
    assert onair.bot.voice.players == {}
    guild = onair.bot.get_guild(onair.guild.id)
    assert guild is not None
    assert guild.voice_client is None
    assert await onair.bot.storage.voice_sessions() == []


async def test_leave_when_not_playing_says_so(onair):
    message = await reply_of(onair, await onair.fake.slash("leave", {}))
    assert message["content"] == errors.NOT_IN_VOICE


async def test_onair_voice_turns_voice_on_for_a_guild_station_with_the_rebroadcast_terms(
    dev_bot, guild_sim
):
    async with dev_bot() as env:
        guild_id = env.guild.id
        stored = GuildStation(guild_id, "mine", "Guild Radio", guild_sim.base_url, 5, None)
        await env.bot.storage.save_guild_station(stored)
        env.bot.registry.add_guild_station(stored, None)
        assert env.bot.registry.station(f"g{guild_id}-mine").voice is False  # off until opted in
        iid = await env.fake.slash(
            "onair", {"station": f"g{guild_id}-mine", "leave_when_empty": 45}, sub=["voice"]
        )
        text = (await reply_of(env, iid))["content"]
        assert "Voice is now on for **Guild Radio**" in text
        assert "relaying" in text  # the station owner's rebroadcast terms
        assert "leaves an empty channel after 45 s" in text
        assert env.bot.registry.station(f"g{guild_id}-mine").voice is True
        (row,) = await env.bot.storage.guild_stations(guild_id)
        assert row.voice is True
        voice = await env.bot.storage.guild_voice(guild_id)
        assert (voice.leave_when_empty, voice.station) == (45.0, f"g{guild_id}-mine")


async def test_onair_voice_refuses_a_text_channel_as_home(dev_bot):
    async with dev_bot() as env:
        text_channel = env.guild.channels[0]
        iid = await env.fake.slash("onair", {"channel": str(text_channel)}, sub=["voice"])
        message = await reply_of(env, iid)
        assert message["content"] == errors.NOT_A_VOICE_CHANNEL
        assert (await env.bot.storage.guild_voice(env.guild.id)).home_channel == 0
