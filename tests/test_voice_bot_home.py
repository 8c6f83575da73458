"""Voice through the real bot and its home channel: a join elsewhere that cannot connect, a
moderator's move, the owner's stream URL, leaving in the home channel, and the races of a
join elsewhere right after or while the home channel is joined.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from bot import errors
from bot.storage import VoiceSession

from .support.botenv import BotEnv
from .support.fakediscord import (
    CONNECT,
    FakeDiscord,
)
from .support.voice_bot import (  # noqa: F401
    LISTENER,
    MANAGE_GUILD,
    SECOND,
    icecast_fixture,
    mp3_fixture,
    radio_and_lounge,
    reply_of,
    voice_bot,
)
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


async def _sessions_are(env: BotEnv, expected: list[VoiceSession]) -> bool:
    return await env.bot.storage.voice_sessions() == expected


async def test_a_join_elsewhere_that_cannot_connect_goes_back_where_it_played(
    live_simulator, icecast
):
    """OnAir leaves its channel to move to the invoker's, and that connection fails (Discord
    ignores a join the bot's stale cache thought allowed): it says so and plays on where it
    was, instead of falling silent until the next start."""
    fake, guild, radio, lounge = radio_and_lounge()
    async with fake:
        await fake.set_member_voice(guild, LISTENER, radio)
        async with voice_bot(live_simulator, icecast, fake=fake) as voice:
            await voice.join()
            await voice.playing(frames=20)
            voice.env.bot.voice.connect_timeout = 0.5
            closed = next(c for c in guild.voice_channels if c.id == lounge)
            closed.overwrites.append(
                {"id": str(fake.bot_id), "type": 1, "allow": "0", "deny": str(CONNECT)}
            )
            await fake.set_member_voice(guild, LISTENER, lounge)
            message = await voice.join()
            assert message["content"] == errors.VOICE_CONNECT_FAILED.format(channel=f"<#{lounge}>")
            await wait_for(lambda: fake.bot_voice == {guild.id: radio}, within=20)
            before = fake.voice.stats(guild.id).audio
            await voice.playing(frames=before + 50)  # playing again in the Radio
            sessions = [VoiceSession(guild.id, radio, "main")]
            await wait_for(lambda: _sessions_are(voice.env, sessions))


async def test_a_moderator_move_is_followed_and_stored(live_simulator, icecast):
    fake, guild, radio, lounge = radio_and_lounge()
    async with fake:
        await fake.set_member_voice(guild, LISTENER, radio)
        await fake.set_member_voice(guild, SECOND, lounge)
        async with voice_bot(live_simulator, icecast, fake=fake) as voice:
            await voice.join()
            await voice.playing(frames=20)
            await fake.move_bot(guild, lounge)
            before = fake.voice.stats(guild.id).audio
            await voice.playing(frames=before + 50)
            assert fake.bot_voice == {guild.id: lounge}
            sessions = [VoiceSession(guild.id, lounge, "main")]
            await wait_for(lambda: _sessions_are(voice.env, sessions))
            assert voice.env.bot.voice.listeners(guild.id) == 1  # the one in the Lounge


async def test_the_owners_stream_url_is_played_as_written_even_on_an_internal_host(
    live_simulator, icecast
):
    """``localhost`` is an internal name the guarded session refuses for anyone else's URL; a
    config station's own ``stream_url`` is the owner's choice, like its base URL."""
    own = icecast.url.replace("127.0.0.1", "localhost")
    async with voice_bot(live_simulator, icecast, stream_url=own) as voice:
        message = await voice.join()
        assert message["content"].startswith("▶ Playing **Main FM**")
        await voice.playing(frames=20)


async def test_leave_in_the_home_channel_holds_until_a_restart_unless_the_admin_clears_it(
    live_simulator, icecast, tmp_path
):
    """/leave stops now and says OnAir comes back to the home channel; no READY of
    this run brings OnAir back; the next start does while the admin keeps the home channel,
    and does not once it is cleared."""
    db = str(tmp_path / "voice.sqlite3")
    fake = FakeDiscord()
    guild = fake.guilds[0]
    home = fake.add_voice_channel(guild, "Radio")
    async with fake:
        await fake.set_member_voice(guild, LISTENER, home)
        async with voice_bot(live_simulator, icecast, fake=fake, db_path=db) as voice:
            iid = await fake.slash("onair", {"channel": str(home)}, sub=["voice"])
            assert "▶ Playing **Main FM**" in (await reply_of(voice.env, iid))["content"]
            await voice.playing(frames=20)
            # A listener (no Manage Server) reads one sentence: OnAir comes back there.
            listener = 0x6FFFFFFFF & ~MANAGE_GUILD
            iid = await fake.slash("leave", {}, user_id=LISTENER, permissions=listener)
            left = await reply_of(voice.env, iid)
            assert left["content"] == f"⏹ Stopped; I'll be back in <#{home}> after my next restart."
            assert fake.bot_voice == {}
            assert await voice.env.bot.storage.voice_sessions() == []
            # A new gateway session in this run (the same pass READY runs) keeps it out.
            await voice.env.bot.voice.rejoin_stored()
            assert not voice.env.bot.voice.present(guild.id)

        # Restarted: the admin still has the home channel, so OnAir plays there again.
        before = fake.voice.stats(guild.id).audio
        async with voice_bot(live_simulator, icecast, fake=fake, db_path=db) as again:
            await wait_for(lambda: fake.bot_voice == {guild.id: home}, within=15)
            await again.playing(frames=before + 50)
            assert again.env.bot.voice.rejoined == 1
            # The admin clears it, someone stops it: the reply no longer speaks of a home.
            iid = await fake.slash("onair", {"channel": "none"}, sub=["voice"])
            assert "No home channel" in (await reply_of(again.env, iid))["content"]
            left = await reply_of(again.env, await fake.slash("leave", {}, user_id=LISTENER))
            assert left["content"] == "⏹ Stopped and left the voice channel."

        async with voice_bot(live_simulator, icecast, fake=fake, db_path=db) as third:
            # The pass READY runs, run again and awaited: with no home channel, nothing to join.
            await third.env.bot.voice.rejoin_stored()
            assert not third.env.bot.voice.present(guild.id)
            assert third.env.bot.voice.rejoined == 0
            assert fake.bot_voice == {}


async def test_leaving_an_emptied_channel_goes_back_to_the_home_channel_at_once(
    live_simulator, icecast
):
    """With a 24/7 home channel set, OnAir played elsewhere (a /join) until that channel
    emptied: it leaves it and is back home at once, playing (no restart or READY needed, no
    new stream connection: the station's decoder lingers)."""
    fake, guild, home, lounge = radio_and_lounge()
    async with fake:
        await fake.set_member_voice(guild, LISTENER, lounge)
        async with voice_bot(live_simulator, icecast, fake=fake) as voice:
            service = voice.env.bot.voice
            options = {"channel": str(home), "leave_when_empty": 1}
            text = await reply_of(voice.env, await fake.slash("onair", options, sub=["voice"]))
            assert f"▶ Playing **Main FM** in <#{home}>" in text["content"]
            await voice.playing(frames=20)
            moved = await voice.join()  # the listener is in the Lounge: OnAir moves there
            assert moved["content"] == f"▶ Playing **Main FM** in <#{lounge}>."
            await wait_for(lambda: fake.bot_voice == {guild.id: lounge})
            before = fake.voice.stats(guild.id).audio
            await voice.playing(frames=before + 20)
            requests, rejoined = icecast.requests, service.rejoined

            await fake.set_member_voice(guild, LISTENER, None)  # the Lounge empties
            await wait_for(lambda: fake.bot_voice == {guild.id: home}, within=10)
            await wait_for(lambda: service.players.get(guild.id) is not None)
            assert service.players[guild.id].channel_id == home
            before = fake.voice.stats(guild.id).audio
            await voice.playing(frames=before + 50)
            assert icecast.requests == requests
            assert service.rejoined == rejoined + 1  # the way back home
            assert not service.idle.waiting(guild.id)  # home: it stays, nobody listening


async def test_a_join_elsewhere_right_after_the_home_channel_connected_moves_there(
    live_simulator, icecast, caplog
):
    """A listener in another channel runs /join the moment OnAir has joined its 24/7 home
    channel: OnAir moves there and is heard. (discord.py 2.7.1's own move_to timed out here:
    its socket reader still sat in select() on the home connection's socket, so the new
    connection's IP discovery went unread; the reply said "Playing" and nothing played.)"""
    fake, guild, home, lounge = radio_and_lounge()
    # No RTCP comes back (as in the first second of any connection with it): nothing wakes
    # that reader before the move, whatever the machine's pace.
    fake.voice.rtcp_interval = None
    async with fake:
        await fake.set_member_voice(guild, LISTENER, lounge)
        async with voice_bot(live_simulator, icecast, fake=fake) as voice:
            service = voice.env.bot.voice
            options = {"channel": str(home)}
            text = await reply_of(voice.env, await fake.slash("onair", options, sub=["voice"]))
            assert f"▶ Playing **Main FM** in <#{home}>" in text["content"]
            assert fake.bot_voice == {guild.id: home}
            moved = await voice.join()  # at once: no audio has flowed in the home channel yet
            assert moved["content"] == f"▶ Playing **Main FM** in <#{lounge}>."
            assert fake.bot_voice == {guild.id: lounge}
            connection = voice.env.bot.get_guild(guild.id).voice_client
            assert connection is not None
            assert connection.is_connected()
            assert service.players[guild.id].channel_id == lounge
            before = fake.voice.stats(guild.id).audio
            await voice.playing(frames=before + 50)  # heard in the Lounge
            assert await voice.env.bot.storage.voice_sessions() == [
                VoiceSession(guild.id, lounge, "main")
            ]
            assert service.listeners(guild.id) == 1
    assert "Timed out trying to move" not in caplog.text


@dataclasses.dataclass
class JoinOnOp4:
    """A listener's /join, sent the moment the bot's op 4 for ``channel`` reaches the fake
    Discord: before Discord answers it, so OnAir's connection there is in progress."""

    fake: FakeDiscord
    channel: int | None = None  # the channel whose op 4 triggers the /join (None: not yet)
    joined: str | None = None  # its interaction id

    async def __call__(self, data: Any) -> None:
        target = data.get("channel_id") if isinstance(data, dict) else None
        if self.channel is not None and target == self.channel:
            self.channel = None
            self.joined = await self.fake.slash(
                "join", {}, guild=self.fake.guilds[0], user_id=LISTENER
            )


async def test_a_join_elsewhere_while_the_home_channel_is_being_joined_moves_there(
    live_simulator, icecast, tmp_path
):
    """At a start, OnAir rejoins its 24/7 home channel; a listener in another channel runs
    /join while that connection is under way: the /join wins (the rejoin is cancelled
    mid-connect) and OnAir plays where the listener is."""
    db = str(tmp_path / "voice.sqlite3")
    fake, guild, home, lounge = radio_and_lounge()
    trigger = JoinOnOp4(fake)
    fake.before_voice_op = trigger
    fake.voice.rtcp_interval = None
    async with fake:
        await fake.set_member_voice(guild, LISTENER, lounge)
        async with voice_bot(live_simulator, icecast, fake=fake, db_path=db) as voice:
            iid = await fake.slash("onair", {"channel": str(home)}, sub=["voice"])
            assert f"<#{home}>" in (await reply_of(voice.env, iid))["content"]
        assert fake.bot_voice == {}

        trigger.channel = home
        async with voice_bot(live_simulator, icecast, fake=fake, db_path=db) as again:
            await wait_for(lambda: trigger.joined is not None, within=15)
            assert trigger.joined is not None
            moved = await reply_of(again.env, trigger.joined)
            assert moved["content"] == f"▶ Playing **Main FM** in <#{lounge}>."
            service = again.env.bot.voice
            await wait_for(lambda: fake.bot_voice == {guild.id: lounge})
            connection = again.env.bot.get_guild(guild.id).voice_client
            assert connection is not None
            assert connection.is_connected()
            before = fake.voice.stats(guild.id).audio
            await again.playing(frames=before + 50)
            assert service.players[guild.id].channel_id == lounge
            assert await again.env.bot.storage.voice_sessions() == [
                VoiceSession(guild.id, lounge, "main")
            ]
            # The cancelled rejoin does not take it back home while the listener is there.
            assert fake.bot_voice == {guild.id: lounge}
