"""Voice through the real discord.py client against the fake Discord: /join, /leave,
/onair voice and the "Play in" hints, with what each refuses and says.

Here: the commands, joining and leaving, and /onair voice's stream check. Staying on air
(rejoins, close codes, stages, drops, presence) is in test_voice_bot_resilience.py; the home
channel and moves in test_voice_bot_home.py.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from bot import errors
from bot.storage import GuildStation, VoiceSession
from bot.util.metrics import Metrics
from bot.voice.presence import presence_text

from .support.botenv import DEV_OVERRIDE, STATION_KEY
from .support.fakediscord import (
    CONNECT,
    SPEAK,
)
from .support.fakeicecast import FakeIcecast
from .support.voice_bot import LISTENER, Voice, icecast_fixture, mp3_fixture, reply_of, voice_bot  # noqa: F401
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


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
        assert stats.dave_frames == 0  # alone in the call (no DAVE listener): passthrough
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
        assert "onair_voice_sender_rescues 0" in text  # no send stalled
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
