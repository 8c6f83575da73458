"""Voice through the real discord.py client against the fake Discord: /join, /leave,
/onair voice and the "Play in" hints, with what each refuses and says."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web

from bot import errors
from bot.render import station_embeds
from bot.simulator import TRACKS, LibraryItem, ManualClock, Programme, StationSimulator
from bot.storage import GuildStation, VoiceSession
from bot.util.metrics import Metrics
from bot.voice import find_ffmpeg
from bot.voice.presence import PresenceGate, presence_text
from bot.voice.timers import ManualTimers

from .support.botenv import DEV_OVERRIDE, STATION_KEY, BotEnv, running_bot
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
        assert "once nobody has listened there for 45 seconds" in text
        assert "No home channel" in text  # and so no "24/7" beside a leave: no contradiction
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
MANAGE_GUILD = 1 << 5  # Discord's Manage Server permission


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
            env.bot.voice.rejoins.delays = (0.2, 0.5, 1.0)
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
        # The probe was the only request; nothing stays open, no decoder started.
        assert icecast.requests == 1
        assert icecast.open_connections == 0
        hub = voice.env.bot.voice.hub
        assert hub is not None
        assert not hub.is_running("main")
        assert hub.stats() == {}


async def test_the_first_join_opens_one_stream_connection(live_simulator, icecast):
    """The probe's connection is the decoder's first: one request, one connection, audio."""
    async with voice_bot(live_simulator, icecast) as voice:
        message = await voice.join()
        assert message["content"].startswith("▶ Playing **Main FM**")
        stats = await voice.playing(frames=100)
        assert stats.gaps == 0
        assert (icecast.requests, icecast.connections, icecast.open_connections) == (1, 1, 1)
        hub = voice.env.bot.voice.hub
        assert hub is not None
        assert hub.stats()["main"].restarts == 0


async def test_a_join_refused_after_the_probe_leaves_no_stream_open(live_simulator, icecast):
    """The probe opened the stream, then the voice connection fails (Discord ignores a join
    the bot's stale cache thought allowed): the probe's connection is closed, nothing plays."""
    async with voice_bot(live_simulator, icecast) as voice:
        voice.env.bot.voice.connect_timeout = 0.5
        guild = voice.guild
        guild.voice_channels[0].overwrites.append(
            {"id": str(voice.fake.bot_id), "type": 1, "allow": "0", "deny": str(CONNECT)}
        )
        message = await voice.join()
        channel = voice.channels[guild.id]
        assert message["content"] == errors.VOICE_CONNECT_FAILED.format(channel=f"<#{channel}>")
        assert icecast.requests == 1  # the probe ran...
        await wait_for(lambda: icecast.open_connections == 0)  # ...and its stream is closed
        assert voice.env.bot.voice.hub is not None
        assert voice.env.bot.voice.hub.stats() == {}  # no decoder was started
        assert voice.fake.bot_voice == {}
        assert await voice.env.bot.storage.voice_sessions() == []


async def test_two_guilds_on_one_station_share_one_stream_connection(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast, guilds=2) as voice:
        first, second = voice.fake.guilds
        await voice.join(first)
        await voice.playing(first)
        requests = icecast.requests  # the first guild's probe (the decoder's connection)
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
        assert f"Home channel: <#{channel}>. I stay there around the clock" in text
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
        # The main action first, on its own row (three buttons do not fit a phone's row).
        first, second = message["components"]
        (play,) = first["components"]
        assert play["custom_id"] == "onair:play:main"
        assert play["label"] == "🔊 Play in voice"
        assert [b["label"] for b in second["components"]] == ["Listen", "Web player", "Like"]
        # The rendered answer is shared by everyone asking about the same snapshot: adding the
        # button for one listener changes nothing for the next.
        for _ in range(5):  # (more than the five rows a message has)
            again = await voice.fake.final_message(
                await voice.fake.slash("nowplaying", {}, user_id=LISTENER)
            )
            assert again["components"] == message["components"]
        info = voice.env.bot.registry.clients["main"].last_info
        _, shared = station_embeds.nowplaying(info, "Main FM", stale=False)  # the cached one
        assert shared is not None
        assert [item.row for item in shared.children] == [0, 0]  # left as rendered
        elsewhere = await voice.fake.final_message(await voice.fake.slash("nowplaying"))
        (row,) = elsewhere["components"]  # someone in no voice channel: no button
        assert [b["label"] for b in row["components"]] == ["Listen", "Web player", "Like"]
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


def radio_and_lounge() -> tuple[FakeDiscord, Guild, int, int]:
    """A fake Discord whose first guild has two voice channels: (fake, guild, Radio, Lounge)."""
    fake = FakeDiscord()
    guild = fake.guilds[0]
    return (
        fake,
        guild,
        fake.add_voice_channel(guild, "Radio"),
        fake.add_voice_channel(guild, "Lounge"),
    )


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


async def test_presence_on_the_wire_follows_the_track_at_most_once_per_15_s(icecast):
    """op 3 through the real client: "Listening to <artist - title>" (type 2) on a track change,
    never twice within 15 s on the shard (the gate's clock is moved by hand), station text
    bounded to one clean line of at most 128 characters. The fake validates every op 3 as
    Discord documents it and would close the gateway with 4002 on a malformed one."""
    clock = ManualClock()
    hostile = LibraryItem("DJ \u202eEvil\u200b", "Loud\nTitle " + "ä" * 300, 20.0)
    first, last = TRACKS[0], TRACKS[1]
    slots = [(first, 20.0), (hostile, 20.0), (last, 20.0)]
    sim = StationSimulator(clock=clock)
    sim.add_station(1, key=STATION_KEY, programme=Programme(slots, epoch=clock() - 1))
    await sim.start()
    try:
        async with voice_bot(sim, icecast) as voice:
            service = voice.env.bot.voice
            main = voice.env.bot.registry.station("main")
            assert main is not None
            client = voice.env.bot.registry.client(main)
            client.cache_times = dataclasses.replace(client.cache_times, info=0.0)
            gate_clock = ManualTimers(start=1000.0)
            service.presence_updater.gate = PresenceGate(gate_clock)
            mark = len(voice.fake.presences)

            def names() -> list[str]:
                return [(p.activity or {}).get("name", "") for p in voice.fake.presences[mark:]]

            async def moved_on(before: str) -> None:
                """Until the bot's client has an answer after the clock moved: an update that
                joined a request answered before it (the presence loop's) said the old track."""

                async def moved() -> bool:
                    return presence_text(await client.info(max_age=0)) != before

                await wait_for(moved)

            await voice.join()
            await wait_for(lambda: len(names()) >= 1, within=10)
            sent = voice.fake.presences[mark]
            assert sent.activity is not None
            assert sent.activity["type"] == 2  # Listening to
            assert sent.activity["name"] == f"{first.artist} - {first.title}"
            assert (sent.data["status"], sent.data["afk"], sent.shard) == ("online", False, 0)

            clock.advance(20)  # the hostile track is on air, 5 s after the last presence
            await moved_on(names()[0])
            gate_clock.advance(5)
            await service.update_presence()
            assert service.presence.current(0) == f"{first.artist} - {first.title}"
            gate_clock.advance(10)  # 15 s: due
            await service.update_presence()
            await wait_for(lambda: len(names()) >= 2, within=10)
            bounded = names()[1]
            assert bounded.startswith("DJ Evil - Loud Title ää")
            assert len(bounded) <= 128
            assert bounded.endswith("…")
            assert not any(ch in bounded for ch in "\u202e\u200b\n")

            clock.advance(20)  # the next track, 14.9 s after: held back
            await moved_on(bounded)
            gate_clock.advance(14.9)
            await service.update_presence()
            gate_clock.advance(0.1)
            await service.update_presence()
            await wait_for(lambda: len(names()) >= 3, within=10)
            gate_clock.advance(600)  # the same track much later: nothing new to say
            await service.update_presence()
            clock.advance(20)  # the programme starts over: a change again, long after
            await moved_on(names()[2])
            await service.update_presence()
            await wait_for(lambda: len(names()) >= 4, within=10)
            # The gateway is one ordered stream: a presence sent in between would be here.
            assert names() == [
                f"{first.artist} - {first.title}",
                bounded,
                f"{last.artist} - {last.title}",
                f"{first.artist} - {first.title}",
            ]
            assert voice.fake.presence_rejections == []
    finally:
        await sim.stop()


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


TOKEN = "listener-token-SECRET-91"


@contextlib.asynccontextmanager
async def web_page() -> AsyncIterator[str]:
    """A station's web player page on loopback (200, text/html): its URL."""

    async def page(request: web.Request) -> web.Response:
        body = "<html><audio src=/stream></audio></html>"
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/player?token={TOKEN}"
    finally:
        await runner.cleanup()


async def test_onair_voice_sets_a_guild_stations_stream_probed_played_and_switched_live(
    live_simulator, icecast, mp3, caplog
):
    """``/onair voice station stream_url``: refused without a station, for a config station
    (the owner's config.toml) and for a bad or non-audio address (nothing saved); a good one is
    probed, stored, played by /join and, set again while playing, switched to at once;
    ``default`` clears it back to the best listen link. Replies and logs show scheme://host
    only."""
    caplog.set_level(logging.DEBUG)
    async with (
        FakeIcecast(mp3) as other,
        voice_bot(live_simulator, icecast, bot_extra=DEV_OVERRIDE) as voice,
    ):
        env, guild = voice.env, voice.guild
        stored = GuildStation(guild.id, "mine", "Guild Radio", live_simulator.base_url, 2, None)
        await env.bot.storage.save_guild_station(stored)
        env.bot.registry.add_guild_station(stored, STATION_KEY)
        slug = f"g{guild.id}-mine"

        async def configure(**options: str) -> str:
            iid = await voice.fake.slash("onair", options, sub=["voice"])
            return (await reply_of(env, iid))["content"]

        async def stored_stream() -> str:
            (row,) = await env.bot.storage.guild_stations(guild.id)
            return row.stream_url

        assert await configure(stream_url=icecast.url) == errors.STREAM_URL_NEEDS_STATION
        text = await configure(station="main", stream_url=icecast.url)
        assert text == errors.STREAM_URL_CONFIG_STATION.format(station="Main FM")
        assert "config.toml" in text
        for bad, why in (
            ("ftp://example.com/live", "must be an http:// or https:// address"),
            ("http://example.com/a\x07b", "spaces or control characters"),
            (f"http://user:pw@127.0.0.1:1/{TOKEN}", "user name or password"),
        ):
            text = await configure(station=slug, stream_url=bad)
            assert text.startswith("That stream address cannot be used: ")
            assert why in text
            assert TOKEN not in text
        async with web_page() as page:
            text = await configure(station=slug, stream_url=page)
        host = page.split("/player", 1)[0]
        assert text == (
            "I did not save that stream address: "
            f"The station's stream at {host} is a web page, not an audio stream."
        )
        assert await stored_stream() == ""
        assert env.bot.registry.station(slug).voice is False  # nothing saved, not even voice
        assert icecast.requests == 0

        # A good address: probed once (then closed), stored, shown as scheme://host only.
        first = f"{icecast.url}?token={TOKEN}"
        text = await configure(station=slug, stream_url=first)
        assert "Voice is now on for **Guild Radio**." in text
        assert f"Stream for **Guild Radio**: {icecast.base_url}/… (it plays)." in text
        assert "switched" not in text  # nothing played it yet
        assert TOKEN not in text
        assert "stream.mp3" not in text
        assert await stored_stream() == first
        assert env.bot.registry.station(slug).stream_url == first
        assert icecast.requests == 1
        await wait_for(lambda: icecast.open_connections == 0)

        # /join plays it (not a listen link of the station's info).
        message = await voice.join(station=slug)
        assert message["content"].startswith("▶ Playing **Guild Radio**")
        await voice.playing(frames=50)
        assert icecast.open_connections == 1

        # Set again while it plays: the decoder moves to the new stream at once.
        text = await configure(station=slug, stream_url=f"{other.url}?token={TOKEN}")
        assert "I switched to it where it plays now." in text
        # (The probe's own connection satisfies "one open" too, before the decoder's replaces
        # it: waited for with the count, not read at the first moment one is open.)
        await wait_for(
            lambda: (
                icecast.open_connections == 0
                and other.open_connections == 1
                and other.connections >= 2
            )
        )
        assert other.connections == 2  # the probe's, then the decoder's
        before = voice.fake.voice.stats(guild.id).audio
        await voice.playing(frames=before + 50)
        assert voice.fake.voice.stats(guild.id).gaps == 0

        # "default": back to the best listen link of the station's info.
        text = await configure(station=slug, stream_url="default")
        assert "Stream for **Guild Radio**: its best listen link (the default)." in text
        assert await stored_stream() == ""
        assert env.bot.registry.station(slug).stream_url == ""
        await wait_for(lambda: other.open_connections == 0)
        hub = env.bot.voice.hub
        broadcast = hub.get(slug)
        assert broadcast is not None
        links = (await env.bot.registry.snapshot(env.bot.registry.station(slug))).info.links
        assert broadcast.stream_url == links.port443

    # (aiosqlite logs SQL parameters at DEBUG; the bot's setup_logging holds it at INFO.)
    leaked = [
        f"{r.name}: {r.getMessage()[:300]}"
        for r in caplog.records
        if TOKEN in r.getMessage() and r.name != "aiosqlite"
    ]
    assert leaked == []


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
