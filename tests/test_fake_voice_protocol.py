"""The fake voice server against the real discord.py: what each close code makes discord.py do
(4006, 4017, 4015, 4014, a moderator's disconnect), guilds counted apart, the voice states
intent, voice secrets in discord.py's own logs, binary frames' sequence, the real bot in a guild
with voice and stage channels, and IDENTIFY and early ops checked like Discord.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

import aiohttp
import discord
import pytest

from bot.simulator import StationSimulator
from bot.voice.client import OnAirVoiceClient

from .support.botenv import running_bot
from .support.fakediscord import FakeDiscord
from .support.voice_world import (
    LISTENER,
    OTHER,
    Voice,
    frames_at_least,
    join_and_play,
    real_client,
    sine,
    world_fixture,  # noqa: F401
)
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs discord.py against the fake Discord


@pytest.mark.parametrize("code", [4006, 4017])
async def test_4006_and_4017_make_discord_py_identify_again_and_play_on(
    world: Voice, code: int
) -> None:
    """4006 (session invalid): op 4 leave, op 4 join, a NEW session (IDENTIFY, new SSRC).
    4017 (E2EE required) has no branch of its own in discord.py: handled the same way. With
    OnAir's voice client, whose IP discovery cannot lose its answer to the socket reader that
    still runs from the first connection (discord.py's own can, and then hangs)."""
    vc = await join_and_play(world, world.radio, OnAirVoiceClient)
    await frames_at_least(world, 100)
    await world.fake.voice.close(world.guild.id, code)
    closed = time.monotonic()
    await wait_for(
        lambda: world.fake.voice.stats(world.guild.id).audio_after(closed) >= 50, within=15
    )
    assert world.fake.voice.opcodes(world.guild.id).count(0) == 2
    assert vc.is_connected()
    assert world.fake.bot_voice == {world.guild.id: world.radio}


async def test_a_lost_ip_discovery_answer_is_asked_again(world: Voice) -> None:
    """UDP loses packets: OnAir's IP discovery sends again when no answer comes (discord.py's
    waits for ever, and its connect times out)."""
    world.fake.voice.lose_discovery_answers = 2
    vc = await join_and_play(world, world.radio, OnAirVoiceClient)
    await frames_at_least(world, 25)
    assert vc.is_connected()
    assert world.fake.voice.discovery_requests == 3


async def test_4015_resume_times_out_and_discord_py_leaves(world: Voice) -> None:
    """4015 (server crashed): discord.py tries a resume that needs both voice events again,
    gets stuck after the VOICE_SERVER_UPDATE, and after its connect timeout leaves voice."""
    vc = await world.channel(world.radio).connect(timeout=2.0, cls=discord.VoiceClient)
    vc.play(sine())
    await frames_at_least(world, 25)
    await world.fake.voice.close(world.guild.id, 4015)
    await wait_for(lambda: not world.client.voice_clients, within=10)
    await wait_for(lambda: world.fake.bot_voice == {})  # it left with op 4
    assert 7 not in world.fake.voice.opcodes(world.guild.id)  # no RESUME was ever sent


async def test_4014_alone_waits_for_a_move_then_leaves(world: Voice) -> None:
    """4014 without a voice event: discord.py waits (its timeout) for a VOICE_SERVER_UPDATE."""
    vc = await world.channel(world.radio).connect(timeout=2.0, cls=discord.VoiceClient)
    await world.fake.voice.close(world.guild.id, 4014)
    await wait_for(lambda: not world.client.voice_clients, within=10)
    await wait_for(lambda: world.fake.bot_voice == {})  # it left with op 4
    assert not vc.is_connected()
    assert world.fake.voice.opcodes(world.guild.id).count(0) == 1  # it never reconnected


async def test_a_moderator_disconnect_ends_the_voice_client_at_once(world: Voice) -> None:
    vc = await join_and_play(world, world.radio)
    await frames_at_least(world, 10)
    await world.fake.disconnect_bot(world.guild)
    await wait_for(lambda: not world.client.voice_clients, within=5)
    assert not vc.is_connected()
    assert world.fake.bot_voice == {}


async def test_two_guilds_are_counted_apart() -> None:
    """Each guild has its own voice session, SSRC, key and counters on the one voice server."""
    fake = FakeDiscord(guild_count=2)
    first, second = fake.guilds
    channels = [fake.add_voice_channel(first), fake.add_voice_channel(second)]
    await fake.start()
    try:
        async with real_client(fake) as client:
            for channel_id in channels:
                channel = client.get_channel(channel_id)
                assert isinstance(channel, discord.VoiceChannel)
                vc = await channel.connect(timeout=10, cls=discord.VoiceClient)
                vc.play(sine())
            await wait_for(lambda: all(fake.voice.stats(g.id).audio >= 100 for g in fake.guilds))
            stats = [fake.voice.stats(g.id) for g in fake.guilds]
            assert [s.gaps for s in stats] == [0, 0]
            assert all(45 <= s.rate(window=1.5) <= 55 for s in stats)
            assert [s.steps for s in stats] == [{960}, {960}]
            assert fake.bot_voice == {first.id: channels[0], second.id: channels[1]}
    finally:
        await fake.stop()


async def test_without_the_voice_states_intent_no_voice_state_arrives() -> None:
    """As on Discord: no GUILD_VOICE_STATES intent, no voice states (and joins time out)."""
    fake = FakeDiscord()
    guild = fake.guilds[0]
    radio = fake.add_voice_channel(guild)
    await fake.start()
    client = discord.Client(
        intents=discord.Intents(guilds=True), connector=fake.connector(), guild_ready_timeout=0.05
    )
    task: asyncio.Task[None] | None = None
    try:
        await fake.set_member_voice(guild, LISTENER, radio)
        await client.login(fake.expected_token)
        task = asyncio.create_task(client.connect())
        await asyncio.wait_for(client.wait_until_ready(), timeout=15)
        channel = client.get_channel(radio)
        assert isinstance(channel, discord.VoiceChannel)
        assert channel.voice_states == {}
        with pytest.raises(asyncio.TimeoutError):
            await channel.connect(timeout=1.0)
    finally:
        await client.close()
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=10)
        await fake.stop()


async def test_discord_py_itself_logs_voice_secrets_at_debug(
    world: Voice, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fact for the bot: discord.py 2.7.1 logs the voice token (VOICE_SERVER_UPDATE, IDENTIFY)
    and the secret key (SESSION_DESCRIPTION) at DEBUG in ``discord.gateway``, so the bot must
    filter those records; ``fake.voice.leaks`` finds either without showing it."""
    # The raw library: without the filters an OnAirBot made earlier in this process left on it.
    monkeypatch.setattr(logging.getLogger("discord.gateway"), "filters", [])
    caplog.set_level(logging.DEBUG, logger="discord")
    await world.channel(world.radio).connect(timeout=10)
    leaked = world.fake.voice.leaks(caplog.text)
    assert leaked == {"token", "secret_key"}
    assert {r.name for r in caplog.records if world.fake.voice.leaks(r.getMessage())} == {
        "discord.gateway"
    }


async def test_binary_server_frames_carry_the_sequence_discord_py_acknowledges(
    world: Voice,
) -> None:
    """Server binary frames are [seq:2][op:1][payload]: discord.py acks their seq (v8)."""
    vc = await world.channel(world.radio).connect(timeout=10, cls=discord.VoiceClient)
    await world.fake.voice.send_binary(world.guild.id, 99, b"ignored")  # an op it ignores
    sent = world.fake.voice.server_seq(world.guild.id)
    await wait_for(lambda: vc.ws.seq_ack == sent)
    heartbeats = world.fake.voice.opcodes(world.guild.id).count(3)
    await wait_for(lambda: world.fake.voice.opcodes(world.guild.id).count(3) > heartbeats)
    assert world.fake.voice.acknowledged(world.guild.id) == sent


async def test_the_real_bot_starts_in_a_guild_with_voice_and_stage_channels(
    live_simulator: StationSimulator, caplog: pytest.LogCaptureFixture
) -> None:
    """The OnAir bot itself takes the fake's voice-shaped GUILD_CREATE without an error."""
    fake = FakeDiscord()
    guild = fake.guilds[0]
    radio = fake.add_voice_channel(guild, "Radio")
    stage = fake.add_voice_channel(guild, "Stage", stage=True)
    await fake.start()
    try:
        await fake.set_member_voice(guild, LISTENER, radio)
        async with running_bot(live_simulator, fake=fake) as env:
            assert isinstance(env.bot.get_channel(radio), discord.VoiceChannel)
            assert isinstance(env.bot.get_channel(stage), discord.StageChannel)
            await fake.set_member_voice(guild, OTHER, stage)
    finally:
        await fake.stop()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({}, None),  # the valid IDENTIFY is answered with READY
        ({"max_dave_protocol_version": 0}, 4017),  # DAVE required
        ({"token": "not-the-token"}, 4004),
        ({"session_id": "another-session"}, 4006),
        ({"server_id": "1"}, 4011),
        ({"extra": True}, 4002),
    ],
)
async def test_voice_identify_is_checked_like_discord(
    change: dict[str, object], code: int | None
) -> None:
    fake = FakeDiscord()
    guild = fake.guilds[0]
    await fake.voice.start()
    token = fake.voice.expect(guild.id, fake.bot_id, "voice-session", 1)
    identify = {
        "server_id": str(guild.id),
        "user_id": str(fake.bot_id),
        "session_id": "voice-session",
        "token": token,
        "max_dave_protocol_version": 1,
        **change,
    }
    try:
        async with (
            aiohttp.ClientSession(connector=fake.connector()) as http,
            http.ws_connect(f"wss://{fake.voice.endpoint}/?v=8") as ws,
        ):
            hello = await ws.receive_json(timeout=5)
            assert hello["op"] == 8
            await ws.send_json({"op": 0, "d": identify})
            answer = await ws.receive(timeout=5)
            if code is None:
                ready = json.loads(answer.data)
                assert (ready["op"], ready["d"]["port"]) == (2, fake.voice.udp_port)
                assert "aead_xchacha20_poly1305_rtpsize" in ready["d"]["modes"]
            else:
                assert (answer.type, ws.close_code) == (aiohttp.WSMsgType.CLOSE, code)
                assert token not in " ".join(fake.voice.violations)
    finally:
        await fake.stop()


async def test_voice_ops_before_identify_close_with_4003() -> None:
    fake = FakeDiscord()
    await fake.voice.start()
    try:
        async with (
            aiohttp.ClientSession(connector=fake.connector()) as http,
            http.ws_connect(f"wss://{fake.voice.endpoint}/?v=8") as ws,
        ):
            await ws.receive_json(timeout=5)  # HELLO
            await ws.send_json({"op": 3, "d": {"t": 1, "seq_ack": -1}})
            answer = await ws.receive(timeout=5)
            assert (answer.type, ws.close_code) == (aiohttp.WSMsgType.CLOSE, 4003)
    finally:
        await fake.stop()
