"""Voice through the real discord.py client against the fake Discord: /join, /leave,
/onair voice and the "Play in" hints, with what each refuses and says."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from bot import errors
from bot.metrics import Metrics
from bot.simulator import StationSimulator
from bot.storage import GuildStation, VoiceSession
from bot.voice import find_ffmpeg
from bot.voice.presence import presence_text

from .support.botenv import BotEnv, running_bot
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import (
    CONNECT,
    MUTE_MEMBERS,
    REQUEST_TO_SPEAK,
    SPEAK,
    FakeDiscord,
    Guild,
)
from .support.fakeicecast import FakeIcecast, make_mp3
from .support.fakevoice import FrameStats
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


def no_sessions(env: BotEnv) -> Any:
    async def check() -> bool:
        return await env.bot.storage.voice_sessions() == []

    return check


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


# Playing: the fake voice server, the engine's fake Icecast and a real FFmpeg ----------------

LISTENER = 700000000000000001
SECOND = 700000000000000002


@pytest.fixture(scope="session")
def mp3(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    binary = find_ffmpeg()
    assert binary is not None, "no FFmpeg: install the imageio-ffmpeg wheel (pip install -e .)"
    return make_mp3(binary.path, tmp_path_factory.mktemp("voice") / "sine.mp3").read_bytes()


@pytest.fixture
async def icecast(mp3: bytes) -> AsyncIterator[FakeIcecast]:
    async with FakeIcecast(mp3) as server:
        yield server


@dataclass
class Voice:
    env: BotEnv
    fake: FakeDiscord
    icecast: FakeIcecast
    channels: dict[int, int]  # guild id → its voice channel

    @property
    def guild(self) -> Guild:
        return self.fake.guilds[0]

    async def join(self, guild: Guild | None = None, **options: str) -> dict:
        guild = guild or self.guild
        iid = await self.fake.slash("join", options, guild=guild, user_id=LISTENER)
        return await reply_of(self.env, iid)

    async def playing(self, guild: Guild | None = None, frames: int = 100) -> FrameStats:
        """Wait until ``frames`` audio frames from the guild's player reached the voice server."""
        guild = guild or self.guild
        await wait_for(lambda: self.fake.voice.stats(guild.id).audio >= frames, within=20)
        return self.fake.voice.stats(guild.id)


@contextlib.asynccontextmanager
async def voice_bot(
    sim: StationSimulator,
    icecast: FakeIcecast,
    *,
    fake: FakeDiscord | None = None,
    guilds: int = 1,
    stage: bool = False,
    bot_allow: int = 0,
    bot_deny: int = 0,
    station_extra: str = "",
    stream_url: str | None = None,
    **options: Any,
) -> AsyncIterator[Voice]:
    """The bot with a voice channel per guild (the listener in it), the main station's stream on
    the fake Icecast, short voice timeouts."""
    own = fake is None
    fake = fake or FakeDiscord(guild_count=guilds)
    channels: dict[int, int] = {}
    if own:
        for guild in fake.guilds:
            channels[guild.id] = fake.add_voice_channel(
                guild, "Radio", stage=stage, bot_allow=bot_allow, bot_deny=bot_deny
            )
        await fake.start()
        for guild in fake.guilds:
            await fake.set_member_voice(guild, LISTENER, channels[guild.id])
    else:
        channels = {g.id: g.voice_channels[0].id for g in fake.guilds}
    try:
        stream = stream_url or icecast.url
        extra = f'stream_url = "{stream}"\n{station_extra}' + options.pop("extra_config", "")
        async with running_bot(sim, fake=fake, extra_config=extra, **options) as env:
            env.bot.voice.connect_timeout = 5.0
            env.bot.voice.rejoin_delays = (0.2, 0.5, 1.0)
            yield Voice(env, fake, icecast, channels)
    finally:
        if own:
            await fake.stop()


async def test_join_plays_50_frames_a_second_without_gaps_and_logs_no_voice_secret(
    live_simulator, icecast, caplog
):
    caplog.set_level(logging.DEBUG)
    async with voice_bot(live_simulator, icecast) as voice:
        message = await voice.join()
        channel = voice.channels[voice.guild.id]
        assert message["content"] == f"▶ Playing **Main FM** in <#{channel}>."
        await wait_for(lambda: voice.fake.bot_voice.get(voice.guild.id) == channel)
        stats = await voice.playing(frames=150)
        assert stats.gaps == 0
        assert 45 <= stats.rate(window=2.0) <= 55  # the pace the player kept (not load-skewed)
        assert stats.steps == {960}  # every frame is 20 ms of 48 kHz audio
        assert stats.dave_frames == 0  # DAVE passthrough: no group can form offline
        sessions = await voice.env.bot.storage.voice_sessions()
        assert sessions == [VoiceSession(voice.guild.id, channel, "main")]
        assert voice.env.bot.voice.listeners_by_station() == {"main": 1}
        state = voice.fake.bot_voice_state(voice.guild)
        assert state is not None
        assert state["self_deaf"] is True
        # Figures: metrics, /stats beside the station's own count, the presence.
        metrics = Metrics()
        voice.env.bot.voice.register_metrics(metrics)
        text = metrics.render()
        assert "onair_voice_guilds 1" in text
        assert 'onair_voice_listeners{station="main"} 1' in text
        assert voice.env.bot.voice.frames_sent() >= 150
        stats = await voice.env.fake.final_message(
            await voice.fake.slash("stats", {}, user_id=LISTENER), within=30
        )
        assert "**1** in Discord voice through OnAir" in stats["embeds"][0]["description"]
        main = voice.env.bot.registry.station("main")
        shown = presence_text(voice.env.bot.registry.client(main).last_info)
        await wait_for(lambda: voice.env.bot.voice.presence.current(0) == shown)
        # discord.py logged the voice frames at DEBUG: each with its token and key withheld.
        logged = "\n".join(r.getMessage() for r in caplog.records)
        assert "'token': '[withheld]'" in logged  # IDENTIFY and VOICE_SERVER_UPDATE
        assert "'secret_key': '[withheld]'" in logged  # SESSION_DESCRIPTION
        assert voice.fake.voice.leaks(caplog.text) == set()


async def test_join_names_the_missing_permission_and_joins_nothing(live_simulator, icecast):
    for deny, name in ((CONNECT, "Connect"), (SPEAK, "Speak")):
        async with voice_bot(live_simulator, icecast, bot_deny=deny) as voice:
            message = await voice.join()
            assert f"missing the **{name}** permission" in message["content"]
            assert voice.fake.bot_voice == {}
            assert icecast.requests == 0


async def test_join_refuses_a_station_without_voice(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast, station_extra="voice = false\n") as voice:
        message = await voice.join()
        assert message["content"] == errors.STATION_NO_VOICE.format(station="Main FM")
        assert voice.fake.bot_voice == {}


async def test_join_says_when_the_stream_is_unreachable(live_simulator, icecast):
    icecast.refuse_new = True
    async with voice_bot(live_simulator, icecast) as voice:
        message = await voice.join()
        assert message["content"] == errors.STREAM_UNREACHABLE.format(station="Main FM")
        assert voice.fake.bot_voice == {}
        assert await voice.env.bot.storage.voice_sessions() == []


async def test_two_guilds_on_one_station_share_one_stream_connection(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast, guilds=2) as voice:
        first, second = voice.fake.guilds
        await voice.join(first)
        await voice.playing(first)
        requests = icecast.requests  # the first guild's probe and the decoder's connection
        await voice.join(second)
        await voice.playing(second)
        assert icecast.requests == requests  # no probe, no second decoder
        assert icecast.open_connections == 1
        assert voice.fake.voice.stats(second.id).gaps == 0
        assert voice.env.bot.voice.listeners_by_station() == {"main": 2}


async def test_leave_stops_forgets_and_closes_the_stream(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        await voice.join()
        await voice.playing()
        iid = await voice.fake.slash("leave", {}, user_id=LISTENER)
        message = await reply_of(voice.env, iid)
        assert message["content"].startswith("⏹ Stopped")
        assert voice.fake.bot_voice == {}
        assert await voice.env.bot.storage.voice_sessions() == []
        await wait_for(lambda: icecast.open_connections == 0)  # the last guild: FFmpeg stops


async def test_an_empty_channel_is_left_but_the_home_channel_is_kept(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        guild, channel = voice.guild, voice.channels[voice.guild.id]
        options = {"leave_when_empty": 1}
        await reply_of(voice.env, await voice.fake.slash("onair", options, sub=["voice"]))
        await voice.join()
        await voice.playing(frames=20)
        await voice.fake.set_member_voice(guild, LISTENER, None)
        await wait_for(lambda: voice.fake.bot_voice == {}, within=10)
        assert await voice.env.bot.storage.voice_sessions() == []
        # The home channel: joined at once, kept when nobody listens.
        options = {"channel": str(channel), "leave_when_empty": 1}
        iid = await voice.fake.slash("onair", options, sub=["voice"])
        text = (await reply_of(voice.env, iid))["content"]
        assert f"home channel <#{channel}> (24/7)" in text
        assert f"▶ Playing **Main FM** in <#{channel}>" in text
        await voice.playing(frames=20)
        await voice.fake.set_member_voice(guild, SECOND, channel)
        await voice.fake.set_member_voice(guild, SECOND, None)
        bot_channel = voice.env.bot.get_channel(channel)
        await wait_for(lambda: SECOND not in bot_channel.voice_states)
        assert voice.env.bot.voice.listeners(guild.id) == 0
        assert not voice.env.bot.voice.idle.waiting(guild.id)  # no leave pending: it stays
        assert voice.fake.bot_voice == {guild.id: channel}


async def test_a_restart_rejoins_the_stored_channel(live_simulator, icecast, tmp_path):
    db = str(tmp_path / "voice.sqlite3")
    fake = FakeDiscord()
    guild = fake.guilds[0]
    channel = fake.add_voice_channel(guild, "Radio")
    await fake.start()
    await fake.set_member_voice(guild, LISTENER, channel)
    try:
        async with voice_bot(live_simulator, icecast, fake=fake, db_path=db) as voice:
            await voice.join()
            await voice.playing(frames=20)
        assert fake.bot_voice == {}  # stopped with the process; the session stays stored
        before = fake.voice.stats(guild.id).audio
        async with voice_bot(live_simulator, icecast, fake=fake, db_path=db) as again:
            await wait_for(lambda: fake.bot_voice == {guild.id: channel}, within=15)
            await again.playing(frames=before + 50)
            assert again.env.bot.voice.rejoined == 1
            assert again.env.bot.voice.players[guild.id].channel_id == channel
    finally:
        await fake.stop()


async def test_voice_close_codes_are_survived(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        guild = voice.guild
        await voice.join()
        await voice.playing(frames=20)
        requests = icecast.requests
        for code in (4015, 4006, 4014):
            before = voice.fake.voice.stats(guild.id).audio
            await voice.fake.voice.close(guild.id, code)
            await wait_for(
                lambda b=before: voice.fake.voice.stats(guild.id).audio >= b + 50, within=20
            )
        assert voice.fake.bot_voice == {guild.id: voice.channels[guild.id]}
        # Rejoins found the station's decoder still running (it lingers): no new connection.
        assert icecast.requests == requests
        # A moderator's disconnect (gateway says: no channel; voice closes 4014): stays out.
        await voice.fake.disconnect_bot(guild)
        await wait_for(lambda: not voice.env.bot.voice.present(guild.id))
        await wait_for(no_sessions(voice.env))
        assert voice.fake.bot_voice == {}


async def test_stage_unsuppressed_else_request_to_speak_else_says_why(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast, stage=True, bot_allow=MUTE_MEMBERS) as voice:
        message = await voice.join()
        assert message["content"].startswith("▶ Playing")
        await wait_for(
            lambda: (voice.fake.bot_voice_state(voice.guild) or {}).get("suppress") is False
        )
    async with voice_bot(live_simulator, icecast, stage=True) as voice:
        message = await voice.join()
        assert "asked to speak" in message["content"]
        state = voice.fake.bot_voice_state(voice.guild)
        assert state is not None
        assert state["request_to_speak_timestamp"] is not None
        assert state["suppress"] is True
    # Neither: it says why and joins nothing.
    async with voice_bot(live_simulator, icecast, stage=True, bot_deny=REQUEST_TO_SPEAK) as voice:
        message = await voice.join()
        channel = voice.channels[voice.guild.id]
        assert message["content"] == errors.STAGE_CANNOT_SPEAK.format(channel=f"<#{channel}>")
        assert voice.fake.bot_voice == {}


async def test_a_stream_drop_is_bridged_within_3_s(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        guild = voice.guild
        await voice.join()
        await voice.playing(frames=50)
        queued = 25  # Broadcasts' default queue_frames: the half second a guild has in hand
        before = voice.fake.voice.stats(guild.id).audio
        connected = icecast.connections  # the /join probe's and the decoder's
        assert icecast.drop_all() >= 1
        # The decoder reconnects, and past the packets already queued new audio (not silence)
        # flows. The wait is generous (a loaded machine is slow, not wrong): the 3 s claim is
        # read from the fake's kernel arrival stamps of what the listener got, not from how
        # soon this test saw it. Measured: audio back 0.55-0.62 s after the drop, with two
        # busy loops on the 2 cores as well.
        await wait_for(
            lambda: (
                icecast.connections > connected
                and voice.fake.voice.stats(guild.id).audio >= before + queued + 10
            ),
            within=20,
        )
        stats = voice.fake.voice.stats(guild.id)
        audio = stats.audio_arrivals[before - 1 :]  # the last audio frame before the drop on
        longest = max(b - a for a, b in itertools.pairwise(audio))
        assert longest <= 3.0, f"the listener heard no audio for {longest:.2f} s"
        assert stats.gaps == 0  # silence frames filled the rest: the stream never paused


async def test_nowplaying_offers_play_in_channel_and_the_button_joins(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        iid = await voice.fake.slash("nowplaying", {}, user_id=LISTENER)
        message = await voice.fake.final_message(iid)
        buttons = [c for row in message["components"] for c in row["components"]]
        play = next(b for b in buttons if b.get("custom_id") == "onair:play:main")
        assert play["label"] == "▶ Play in Radio"
        target = voice.fake.original(iid)
        click = await voice.fake.click(target, play["custom_id"], user_id=LISTENER)
        reply = await voice.fake.final_message(click)
        assert reply["content"].startswith("▶ Playing **Main FM**")
        await voice.playing(frames=20)


async def test_without_ffmpeg_voice_is_one_start_up_line_and_a_polite_answer(
    live_simulator, icecast, caplog, monkeypatch
):
    monkeypatch.setenv("ONAIR_FFMPEG", "/nonexistent/ffmpeg")
    async with voice_bot(live_simulator, icecast) as voice:
        message = await voice.join()
        assert message["content"] == errors.VOICE_UNAVAILABLE
        assert voice.fake.bot_voice == {}
        lines = [r for r in caplog.records if "voice is off" in r.getMessage()]
        assert len(lines) == 1
        assert lines[0].exc_info is None
        assert "ONAIR_FFMPEG" in lines[0].getMessage()


async def test_a_new_gateway_session_keeps_or_rejoins_the_channel(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        guild = voice.guild
        await voice.join()
        await voice.playing(frames=20)
        await voice.fake.invalid_session(resumable=False)
        await asyncio.wait_for(voice.fake.identified.wait(), timeout=20)
        before = voice.fake.voice.stats(guild.id).audio
        await voice.playing(frames=before + 100)
        assert voice.fake.bot_voice == {guild.id: voice.channels[guild.id]}


async def test_a_moderator_move_is_followed_and_stored(live_simulator, icecast):
    fake = FakeDiscord()
    guild = fake.guilds[0]
    radio = fake.add_voice_channel(guild, "Radio")
    lounge = fake.add_voice_channel(guild, "Lounge")
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


async def _sessions_are(env: BotEnv, expected: list[VoiceSession]) -> bool:
    return await env.bot.storage.voice_sessions() == expected


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
