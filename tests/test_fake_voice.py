"""The fake Discord's voice side works with the REAL discord.py voice client (2.7.1, davey).

A minimal ``discord.Client`` (intents guilds | voice_states) joins voice channels of the fake and
plays FFmpeg's sine source as Opus; the fake's voice server decrypts every RTP packet. Proven here:
GUILD_CREATE carries voice/stage channels, voice states and overwrites; member moves reach the
client; audio arrives at ~50 frames/s without sequence gaps (DAVE 0 and 1, passthrough); op 4 leave;
the stage route's permission rules and strict shapes; the voice IDENTIFY checks (4002, 4003, 4004,
4006, 4011, 4017, over a raw websocket); close codes 4006/4014/4015/4017 and what discord.py does
with each (the bot's rejoin logic depends on it); discord.py's own DEBUG logs carry voice secrets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import aiohttp
import discord
import imageio_ffmpeg
import pytest

from bot.simulator import StationSimulator

from .support import discord_rules as rules
from .support.botenv import running_bot
from .support.fakediscord import CONNECT, MUTE_MEMBERS, SPEAK, FakeDiscord, Guild
from .support.fakevoice import FrameStats
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs discord.py against the fake Discord

LISTENER = 424242424242424242
OTHER = 434343434343434343


@dataclass
class Voice:
    """The fake, its guild, its voice channels and a connected discord.py client."""

    fake: FakeDiscord
    guild: Guild
    radio: int  # a voice channel the listener is in from GUILD_CREATE on
    lounge: int  # a second voice channel
    stage: int  # a stage where the bot may not unsuppress itself
    podium: int  # a stage where it may (Mute Members allowed)
    locked: int  # Connect denied to the bot
    mute: int  # Speak denied to the bot
    client: discord.Client

    def channel(self, channel_id: int) -> discord.VoiceChannel | discord.StageChannel:
        found = self.client.get_channel(channel_id)
        assert isinstance(found, discord.VoiceChannel | discord.StageChannel)
        return found

    @property
    def me(self) -> discord.Member:
        guild = self.client.get_guild(self.guild.id)
        assert guild is not None
        return guild.me


def sine() -> discord.FFmpegOpusAudio:
    """FFmpeg's endless sine source, encoded by FFmpeg itself (no libopus in Python)."""
    return discord.FFmpegOpusAudio(
        "sine=frequency=440:sample_rate=48000",
        executable=imageio_ffmpeg.get_ffmpeg_exe(),
        before_options="-f lavfi",
    )


@contextlib.asynccontextmanager
async def real_client(fake: FakeDiscord) -> AsyncIterator[discord.Client]:
    """discord.py with the intents voice needs (guilds | voice_states), connected to the fake."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.voice_states = True
    client = discord.Client(intents=intents, connector=fake.connector(), guild_ready_timeout=0.05)
    task: asyncio.Task[None] | None = None
    try:
        await client.login(fake.expected_token)
        task = asyncio.create_task(client.connect(reconnect=True))
        await asyncio.wait_for(client.wait_until_ready(), timeout=15)
        yield client
    finally:
        for vc in list(client.voice_clients):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(vc.disconnect(force=True), timeout=5)
        await client.close()
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=10)


@contextlib.asynccontextmanager
async def voice_world(*, dave_version: int = 1) -> AsyncIterator[Voice]:
    fake = FakeDiscord()
    fake.voice.dave_version = dave_version
    guild = fake.guilds[0]
    radio = fake.add_voice_channel(guild, "Radio")
    lounge = fake.add_voice_channel(guild, "Lounge")
    stage = fake.add_voice_channel(guild, "Stage", stage=True)
    podium = fake.add_voice_channel(guild, "Podium", stage=True, bot_allow=MUTE_MEMBERS)
    locked = fake.add_voice_channel(guild, "Locked", bot_deny=CONNECT)
    mute = fake.add_voice_channel(guild, "Quiet", bot_deny=SPEAK)
    await fake.start()
    try:
        await fake.set_member_voice(guild, LISTENER, radio, name="early-listener")
        async with real_client(fake) as client:
            yield Voice(fake, guild, radio, lounge, stage, podium, locked, mute, client)
    finally:
        await fake.stop()


@pytest.fixture
async def world() -> AsyncIterator[Voice]:
    async with voice_world() as voice:
        yield voice


async def join_and_play(world: Voice, channel_id: int) -> discord.VoiceClient:
    vc = await world.channel(channel_id).connect(timeout=10.0, cls=discord.VoiceClient)
    vc.play(sine())
    return vc


async def frames_at_least(world: Voice, count: int, within: float = 15.0) -> None:
    await wait_for(lambda: world.fake.voice.stats(world.guild.id).audio >= count, within=within)


# GUILD_CREATE and member voice states ------------------------------------------------------------


async def test_guild_create_has_voice_and_stage_channels_with_their_listener(world: Voice) -> None:
    radio = world.channel(world.radio)
    assert isinstance(radio, discord.VoiceChannel)
    assert isinstance(world.channel(world.stage), discord.StageChannel)
    assert [m.id for m in radio.members] == [LISTENER]
    assert radio.voice_states[LISTENER].channel == radio


async def test_overwrites_give_the_bot_the_permissions_the_fake_enforces(world: Voice) -> None:
    allowed = {
        name: world.channel(cid).permissions_for(world.me)
        for name, cid in (
            ("radio", world.radio),
            ("locked", world.locked),
            ("mute", world.mute),
            ("stage", world.stage),
            ("podium", world.podium),
        )
    }
    assert (allowed["radio"].connect, allowed["radio"].speak) == (True, True)
    assert (allowed["locked"].connect, allowed["mute"].connect) == (False, True)
    assert allowed["mute"].speak is False
    assert (allowed["stage"].mute_members, allowed["podium"].mute_members) == (False, True)
    assert allowed["stage"].request_to_speak is True


async def test_member_moves_reach_the_client_as_voice_state_updates(world: Voice) -> None:
    seen: list[tuple[int, int | None, int | None]] = []

    async def on_voice_state_update(
        member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        seen.append(
            (
                member.id,
                before.channel.id if before.channel else None,
                after.channel.id if after.channel else None,
            )
        )

    world.client.event(on_voice_state_update)
    moves = [(OTHER, world.lounge), (LISTENER, world.lounge), (OTHER, None)]
    for count, (user, channel) in enumerate(moves, start=1):
        # One at a time: discord.py updates a VoiceState in place before handlers run.
        await world.fake.set_member_voice(world.guild, user, channel, name="late")
        await wait_for(lambda count=count: len(seen) == count)  # type: ignore[misc]
    assert seen == [
        (OTHER, None, world.lounge),
        (LISTENER, world.radio, world.lounge),
        (OTHER, world.lounge, None),
    ]
    assert [m.id for m in world.channel(world.lounge).members] == [LISTENER]


async def test_the_bot_cannot_be_put_in_voice_as_a_member(world: Voice) -> None:
    with pytest.raises(AssertionError, match="op 4"):
        await world.fake.set_member_voice(world.guild, world.fake.bot_id, world.radio)


# Playing -------------------------------------------------------------------------------------


def paced(frames: int, every: float, stalls: dict[int, float]) -> list[float]:
    """Send times of a drift-free player (frame n due at n x ``every``, late ones catch up)
    whose frame n is held up ``stalls[n]`` seconds."""
    now, times = 0.0, []
    for n in range(frames):
        now = max(now, n * every) + stalls.get(n, 0.0)
        times.append(now)
    return times


def test_the_rate_is_the_pace_kept_not_the_stalls_of_a_loaded_machine() -> None:
    """Stalls of a loaded machine and their catch-up bursts leave 50 frames/s at 50 (counting
    the frames in the window says 56); a player pacing 40 ms or not at all is caught."""
    stalled = paced(150, 0.02, {40: 0.25, 90: 0.2, 130: 0.05})
    inside = [t for t in stalled if t >= stalled[-1] - 2.0]
    assert (len(inside) - 1) / (inside[-1] - inside[0]) > 55  # a burst inflates a plain count
    assert FrameStats(arrivals=stalled).rate(window=2.0) == pytest.approx(50)
    assert FrameStats(arrivals=paced(150, 0.04, {})).rate(window=2.0) == pytest.approx(25)
    assert FrameStats(arrivals=paced(150, 0.001, {})).rate(window=2.0) > 500


@pytest.mark.parametrize("dave_version", [0, 1])
async def test_a_real_voice_client_plays_fifty_frames_a_second(dave_version: int) -> None:
    async with voice_world(dave_version=dave_version) as world:
        vc = await join_and_play(world, world.radio)
        assert world.fake.bot_voice == {world.guild.id: world.radio}
        assert vc.mode == "aead_xchacha20_poly1305_rtpsize"
        await frames_at_least(world, 150)  # 3 s of audio
        stats = world.fake.voice.stats(world.guild.id)
        assert stats.span() >= 2.0
        # Frames per second from the kernel's arrival stamps of the counted frames (the pace the
        # player kept to: a stall and its catch-up burst on a loaded machine do not count).
        assert 45 <= stats.rate(window=2.0) <= 55
        assert stats.steps == {960}  # every frame is 20 ms of 48 kHz audio
        assert stats.gaps == 0
        assert stats.rejected == 0
        assert stats.silence == 0  # a sine tone: every frame is audio
        assert stats.dave_frames == 0  # DAVE (if any) stays in passthrough offline
        ops = world.fake.voice.opcodes(world.guild.id)
        assert ops[:2] == [0, 1]  # IDENTIFY, SELECT_PROTOCOL
        assert 5 in ops  # SPEAKING
        # DAVE 1: the client sent its MLS key package (binary op 26); DAVE 0: it did not.
        assert ops.count(26) == dave_version
        assert world.fake.voice.dave_offered[world.guild.id] == 1  # discord.py with davey
        assert world.fake.voice.violations == []


async def test_heartbeats_acknowledge_the_server_sequence(world: Voice) -> None:
    """v8: the client's heartbeats carry seq_ack, the last server sequence it received."""
    vc = await world.channel(world.radio).connect(timeout=10, cls=discord.VoiceClient)
    # discord.py heartbeats every min(interval, 5 s); wait for the first one to be answered.
    await wait_for(lambda: vc.latency != float("inf"), within=10)
    assert 3 in world.fake.voice.opcodes(world.guild.id)
    assert vc.ws.seq_ack >= 2  # READY and SESSION_DESCRIPTION were sequenced
    assert world.fake.voice.violations == []


async def test_leaving_sends_op_4_with_no_channel(world: Voice) -> None:
    vc = await join_and_play(world, world.radio)
    await frames_at_least(world, 10)
    await vc.disconnect()
    assert world.fake.bot_voice == {}
    assert not world.fake.voice.connected(world.guild.id)
    assert world.me.voice is None


async def test_moving_the_bot_reconnects_it_in_the_new_channel(world: Voice) -> None:
    vc = await join_and_play(world, world.radio)
    await frames_at_least(world, 10)
    await vc.move_to(world.channel(world.lounge), timeout=10)
    await wait_for(lambda: vc.is_connected() and vc.channel.id == world.lounge, within=10)
    assert world.fake.bot_voice == {world.guild.id: world.lounge}
    before = time.monotonic()
    await wait_for(lambda: world.fake.voice.stats(world.guild.id).audio_after(before) >= 25)


# Permissions ---------------------------------------------------------------------------------


async def test_a_join_without_connect_is_ignored_like_discord_does(world: Voice) -> None:
    with pytest.raises(asyncio.TimeoutError):
        await world.channel(world.locked).connect(timeout=1.0)
    assert world.fake.bot_voice == {}
    assert "op 4 into a channel without Connect" in world.fake.voice_rejections


async def test_stage_unsuppress_needs_mute_members(world: Voice) -> None:
    await world.channel(world.stage).connect(timeout=10)
    state = world.fake.bot_voice_state(world.guild)
    assert state is not None
    assert state["suppress"] is True  # everyone joins a stage as audience
    with pytest.raises(discord.Forbidden) as refused:
        await world.me.edit(suppress=False)
    assert (refused.value.status, refused.value.code) == (403, 50013)
    await world.me.request_to_speak()
    await wait_for(
        lambda: world.me.voice is not None and world.me.voice.requested_to_speak_at is not None
    )
    state = world.fake.bot_voice_state(world.guild)
    assert state is not None
    assert state["suppress"] is True
    assert state["request_to_speak_timestamp"] is not None


async def test_stage_unsuppress_with_mute_members_is_dispatched(world: Voice) -> None:
    await world.channel(world.podium).connect(timeout=10)
    await wait_for(lambda: world.me.voice is not None and world.me.voice.suppress)
    await world.me.edit(suppress=False)
    await wait_for(lambda: world.me.voice is not None and not world.me.voice.suppress)
    state = world.fake.bot_voice_state(world.guild)
    assert state is not None
    assert state["suppress"] is False


async def test_stage_route_answers_unknown_voice_state_and_wrong_channel_type(
    world: Voice,
) -> None:
    http = world.client.http
    with pytest.raises(discord.NotFound) as outside:
        await http.edit_my_voice_state(world.guild.id, {"suppress": False})
    assert outside.value.code == 10065
    await world.channel(world.radio).connect(timeout=10)
    with pytest.raises(discord.HTTPException) as plain:
        await http.edit_my_voice_state(world.guild.id, {"suppress": False})
    assert (plain.value.status, plain.value.code) == (400, 50024)


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"suppress": "no"}, "suppress", "BASE_TYPE_BOOLEAN"),
        ({"surpress": False}, "surpress", "UNKNOWN_FIELD"),
        ({"channel_id": "radio"}, "channel_id", "NUMBER_TYPE_COERCE"),
        ({"request_to_speak_timestamp": "soon"}, "request_to_speak_timestamp", None),
        ({"request_to_speak_timestamp": 5}, "request_to_speak_timestamp", None),
    ],
)
async def test_stage_route_rejects_bad_shapes_with_50035(
    world: Voice, body: dict[str, object], field: str, code: str | None
) -> None:
    with pytest.raises(discord.HTTPException) as rejected:
        await world.client.http.edit_my_voice_state(world.guild.id, body)
    assert (rejected.value.status, rejected.value.code) == (400, 50035)
    errors = world.fake.requests[-1].response["errors"]
    assert field in errors
    if code is not None:
        assert errors[field]["_errors"][0]["code"] == code


async def test_an_op_4_of_another_shape_closes_the_gateway_with_4002(world: Voice) -> None:
    resumes = world.fake.resume_count
    bad = {"guild_id": world.guild.id, "channel_id": world.radio, "self_mute": 0}
    assert world.client.ws is not None
    await world.client.ws.send_as_json({"op": 4, "d": bad})
    await wait_for(lambda: world.fake.resume_count > resumes, within=15)  # discord.py resumed
    assert world.fake.voice_rejections
    assert world.fake.bot_voice == {}


async def test_op_3_presences_are_recorded_and_a_malformed_one_closes_with_4002(
    world: Voice,
) -> None:
    """discord.py's own change_presence passes (its ``since: 0.0`` included); an activity name
    over Discord's 128 characters is refused with 4002, and discord.py resumes."""
    listening = discord.Activity(type=discord.ActivityType.listening, name="A - " + "x" * 124)
    await world.client.change_presence(activity=listening)
    await wait_for(lambda: len(world.fake.presences) == 1)
    sent = world.fake.presences[0]
    assert sent.activity == {**listening.to_dict(), "name": "A - " + "x" * 124}
    assert (sent.shard, sent.data["status"], sent.data["since"]) == (0, "online", 0)
    await world.client.change_presence(activity=None, status=discord.Status.idle)
    await wait_for(lambda: len(world.fake.presences) == 2)
    assert world.fake.presences[1].data["activities"] == []
    resumes = world.fake.resume_count
    too_long = discord.Activity(type=discord.ActivityType.listening, name="x" * 129)
    await world.client.change_presence(activity=too_long)
    await wait_for(lambda: world.fake.resume_count > resumes, within=15)  # discord.py resumed
    assert world.fake.presence_rejections == ["op 3 activity name is 129 characters (at most 128)"]
    assert len(world.fake.presences) == 2


VALID_PRESENCE = {
    "since": None,
    "activities": [{"name": "A - B", "type": 2, "state": "live", "url": None}],
    "status": "dnd",
    "afk": False,
}


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({}, None),
        ({"since": 1_700_000_000_000}, None),
        ({"since": 0.0}, None),  # what discord.py sends
        ({"since": 1.5}, "since"),
        ({"since": "0"}, "since"),
        ({"status": "away"}, "status"),
        ({"afk": 0}, "afk"),
        ({"activities": {}}, "activities"),
        ({"activities": [{"type": 2}]}, "without a name"),
        ({"activities": [{"name": "", "type": 2}]}, "without a name"),
        ({"activities": [{"name": "x" * 129, "type": 2}]}, "129 characters"),
        ({"activities": [{"name": "x", "type": 6}]}, "type"),
        ({"activities": [{"name": "x", "type": True}]}, "type"),
        ({"activities": [{"name": "x", "type": 2, "state": 5}]}, "state"),
        ({"activities": [{"name": "x", "type": 1, "url": ["u"]}]}, "url"),
        ({"extra": 1}, "fields"),
    ],
)
def test_presence_payloads_are_checked_as_discord_documents_them(
    change: dict[str, object], problem: str | None
) -> None:
    found = rules.check_presence_update({**VALID_PRESENCE, **change})
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found
    assert rules.check_presence_update([]) == "op 3 without an object"


# Close codes: what discord.py 2.7.1 does with each ------------------------------------------------


@pytest.mark.parametrize("code", [4006, 4017])
async def test_4006_and_4017_make_discord_py_identify_again_and_play_on(
    world: Voice, code: int
) -> None:
    """4006 (session invalid): op 4 leave, op 4 join, a NEW session (IDENTIFY, new SSRC).
    4017 (E2EE required) has no branch of its own in discord.py: handled the same way."""
    vc = await join_and_play(world, world.radio)
    await frames_at_least(world, 100)
    await world.fake.voice.close(world.guild.id, code)
    closed = time.monotonic()
    await wait_for(
        lambda: world.fake.voice.stats(world.guild.id).audio_after(closed) >= 50, within=15
    )
    assert world.fake.voice.opcodes(world.guild.id).count(0) == 2
    assert vc.is_connected()
    assert world.fake.bot_voice == {world.guild.id: world.radio}


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
