"""Voice through the real bot staying on air: an emptied channel, a restart, voice close codes,
a stage, a dropped stream, the "Play in" hint, no FFmpeg, a new gateway session, and the
presence that follows the track.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools

import pytest

from bot import errors
from bot.render import station_embeds
from bot.simulator import TRACKS, LibraryItem, ManualClock, Programme, StationSimulator
from bot.voice.presence import PresenceGate
from bot.voice.timers import ManualTimers

from .support.botenv import STATION_KEY
from .support.fakediscord import (
    MUTE_MEMBERS,
    REQUEST_TO_SPEAK,
    FakeDiscord,
)
from .support.voice_bot import (  # noqa: F401
    LISTENER,
    SECOND,
    icecast_fixture,
    mp3_fixture,
    no_sessions,
    reply_of,
    voice_bot,
)
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


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

            await voice.join()
            await wait_for(lambda: len(names()) >= 1, within=10)
            sent = voice.fake.presences[mark]
            assert sent.activity is not None
            assert sent.activity["type"] == 2  # Listening to
            assert sent.activity["name"] == f"{first.artist} - {first.title}"
            assert (sent.data["status"], sent.data["afk"], sent.shard) == ("online", False, 0)

            clock.advance(20)  # the hostile track is on air, 5 s after the last presence
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
            gate_clock.advance(14.9)
            await service.update_presence()
            gate_clock.advance(0.1)
            await service.update_presence()
            await wait_for(lambda: len(names()) >= 3, within=10)
            gate_clock.advance(600)  # the same track much later: nothing new to say
            await service.update_presence()
            clock.advance(20)  # the programme starts over: a change again, long after
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
