"""The fake Discord's voice side works with the REAL discord.py voice client (2.7.1, davey).

A minimal ``discord.Client`` (intents guilds | voice_states) joins voice channels of the fake and
plays FFmpeg's sine source as Opus; the fake's voice server decrypts every RTP packet. Proven here:
GUILD_CREATE carries voice/stage channels, voice states and overwrites; member moves reach the
client; audio arrives at ~50 frames/s without sequence gaps (DAVE 0 and 1, passthrough); op 4 leave;
the stage route's permission rules and strict shapes; the voice IDENTIFY checks (4002, 4003, 4004,
4006, 4011, 4017, over a raw websocket); close codes 4006/4014/4015/4017 and what discord.py does
with each (the bot's rejoin logic depends on it); discord.py's own DEBUG logs carry voice secrets.

Here: GUILD_CREATE and voice states, playing, permissions and presences. Close codes and
the voice protocol's own rules are in test_fake_voice_protocol.py.
"""

from __future__ import annotations

import asyncio
import time

import discord
import pytest

from .support import discord_rules as rules
from .support.fakevoice import FrameStats
from .support.voice_world import (
    LISTENER,
    OTHER,
    Voice,
    frames_at_least,
    join_and_play,
    voice_world,
    world_fixture,  # noqa: F401
)
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs discord.py against the fake Discord


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
        assert stats.dave_frames == 0  # no DAVE listener in the call: passthrough
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
