"""A Shoutcast station in the bot, through real discord.py and the fake Discord, against the
DNAS simulator on a manual clock: each play announced once, /nowplaying, /recent and /listen."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.simulator import TRACKS, ManualClock, Programme
from bot.simulator.hosts.shoutcast import ShoutcastSimulator

from .support.botenv import channel_subscription, fake_discord_fixture, running_bot
from .support.fakediscord import FakeDiscord
from .support.fakeicecast import FakeIcecast
from .support.stations import serving
from .support.voice_bot import icecast_fixture, mp3_fixture, voice_bot  # noqa: F401
from .support.waiting import poll_watch

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord

# 40 s each: /recent leaves out what played under 30 s (a jingle).
SLOTS = [(TRACKS[0], 40.0), (TRACKS[1], 40.0), (TRACKS[2], 40.0)]
SHOUTCAST = 'kind = "shoutcast"'

fake = fake_discord_fixture(channels_per_guild=2)


@pytest.fixture
async def dnas() -> AsyncIterator[ShoutcastSimulator]:
    clock = ManualClock()
    sim = ShoutcastSimulator(clock=clock)
    sim.add_station(1, key=None, programme=Programme(SLOTS, epoch=clock() - 1.0))
    async with serving(sim):
        yield sim


def posts(fake: FakeDiscord) -> list:
    channel = fake.guilds[0].channels[0]
    return [r for r in fake.sent("POST", rf"^/channels/{channel}/messages$") if r.status == 200]


async def poll(env) -> None:
    await poll_watch(env.bot.announcer)
    await env.bot.announcer.idle()


async def test_each_play_is_announced_once(dnas, fake):
    config = channel_subscription(fake)
    async with running_bot(dnas, fake=fake, extra_config=config, station_options=SHOUTCAST) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        await poll(env)
        await poll(env)
        assert len(posts(fake)) == 1
        for _ in range(2):
            dnas.clock.advance(40)
            await poll(env)
            await poll(env)
        titles = [p.json["embeds"][0]["title"] for p in posts(fake)]
        assert titles == [TRACKS[0].title, TRACKS[1].title, TRACKS[2].title]
        byline = posts(fake)[0].json["embeds"][0]["description"].splitlines()[0]
        assert TRACKS[0].artist in byline
        assert "thumbnail" not in posts(fake)[0].json["embeds"][0]  # a DNAS has no artwork
        assert dnas.counters["played"] == 3  # once per play, however often it was polled


async def test_nowplaying_recent_and_listen(dnas, fake):
    dnas.clock.advance(85)  # the third play: two before it in /played
    async with running_bot(dnas, fake=fake, station_options=SHOUTCAST) as env:
        now = await fake.final_message(await fake.slash("nowplaying"))
        embed = now["embeds"][0]
        assert embed["title"] == TRACKS[2].title
        assert TRACKS[2].artist in embed["description"]
        # A DNAS knows a stream, not whether an AutoDJ or a presenter feeds it: no badge.
        assert "AutoDJ" not in embed["description"]
        assert "LIVE" not in embed["description"]
        assert embed["footer"]["text"].startswith("Main FM · ")
        buttons = [b for row in now["components"] for b in row["components"]]
        listen = next(b for b in buttons if b.get("label") == "Listen")
        assert listen["url"] == f"{dnas.base_url}/;"

        recent = (await fake.final_message(await fake.slash("recent")))["embeds"][0]
        lines = recent["description"].splitlines()
        assert len(lines) == 3
        assert TRACKS[1].title in lines[1]
        assert TRACKS[0].title in lines[2]
        start = int(dnas.station(1).programme.airing(1).started)
        assert f"<t:{start}:" in lines[1]  # the start /played gave

        tune_in = await fake.final_message(await fake.slash("listen"))
        assert tune_in["content"] == "Tune in to **Main FM**:"
        urls = [b.get("url") for row in tune_in["components"] for b in row["components"]]
        assert f"{dnas.base_url}/;" in urls
        assert env.bot.registry.clients["main"].kind == "shoutcast"


async def test_join_plays_the_stream_at_its_listen_link(icecast: FakeIcecast):
    """No stream_url configured: voice plays the listen link /stats gave (the DNAS's "/;"),
    on the real clock (the decoder runs in real time)."""
    sim = ShoutcastSimulator()
    sim.add_station(1, key=None)
    async with (
        serving(sim),
        voice_bot(sim, icecast, stream_url="", station_extra=SHOUTCAST + "\n") as voice,
    ):
        message = await voice.join()
        assert message["content"].startswith("▶ Playing **Main FM**")
        await voice.playing(frames=50)
        assert sim.counters["listen"] >= 1  # the DNAS's stream, not the fake Icecast
        assert icecast.connections == 0
