"""A station of kind icecast in the real bot, against the fake Discord and the Icecast simulator:
each change announced once (seen on the ICY stream), a song again after another announced
again, and /nowplaying, /recent and /listen answering for it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from bot.simulator import TRACKS, ManualClock, Programme
from bot.simulator.hosts.icecast import IcecastSimulator
from bot.station.hosts.icecast import IcecastClient

from .support.botenv import fake_discord_fixture
from .support.fakediscord import FakeDiscord
from .support.icecast_bot import icecast_bot
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e

A, B, C = TRACKS[0], TRACKS[1], TRACKS[2]
SLOTS = [(C, 60.0), (A, 60.0), (B, 60.0), (A, 60.0), (C, 60.0)]

fake = fake_discord_fixture(channels_per_guild=2)


@pytest.fixture
async def sim() -> AsyncIterator[IcecastSimulator]:
    clock = ManualClock(1_800_000_000.0)
    simulator = IcecastSimulator(
        clock=clock, hostname="radio.example.org", metaint=1024, burst_bytes=4096
    )
    simulator.add_mount("/live", programme=Programme(SLOTS, epoch=clock() - 1.0))
    async with simulator:
        yield simulator


def posts(fake: FakeDiscord) -> list:
    channel = fake.guilds[0].channels[0]
    return [r for r in fake.sent("POST", rf"^/channels/{channel}/messages$") if r.status == 200]


def titles(fake: FakeDiscord) -> list[str]:
    return [p.json["embeds"][0]["title"] for p in posts(fake)]


async def test_each_change_is_announced_once_from_the_icy_stream(sim, fake):
    clock = sim.clock
    async with icecast_bot(sim, fake) as bot:
        client = bot.registry.clients["main"]
        assert isinstance(client, IcecastClient)
        client.clock = clock  # the plays' starts on the simulator's clock
        await fake.wait_for(lambda: titles(fake) == [C.title])
        await wait_for(lambda: client.push_live)
        polls = sim.counters["status"]
        for expected in ([C, A], [C, A, B], [C, A, B, A]):
            clock.advance(60.0)
            await fake.wait_for(lambda e=expected: titles(fake) == [t.title for t in e])
        # Seen on the stream: the status page was asked about once per change at most.
        assert sim.counters["status"] - polls <= 3
        assert client.icy_connections == 1
        body = posts(fake)[-1].json
        assert body["embeds"][0]["title"] == A.title
        labels = [b["label"] for b in body["components"][0]["components"]]
        assert labels[0] == "Listen"
        assert body["components"][0]["components"][0]["url"].startswith("http://radio.example.org:")

        reply = await fake.final_message(await fake.slash("nowplaying"))
        embed = reply["embeds"][0]
        assert embed["title"] == A.title
        assert A.artist in embed["description"]
        assert "started <t:" in embed["description"]  # since OnAir saw it begin
        assert "AutoDJ" not in embed["description"]  # Icecast does not say: a DJ may be on
        assert "thumbnail" not in embed or not embed["thumbnail"].get("url", "").startswith(
            sim.base_url
        )

        reply = await fake.final_message(await fake.slash("recent"))
        lines = reply["embeds"][0]["description"].splitlines()
        # The plays OnAir heard, newest first, the one on air marked.
        assert f"**▶ {A.artist} - {A.title}**" in lines[0]
        assert [line.split(" ", 1)[1] for line in lines[1:4]] == [
            f"{B.artist} - {B.title}",
            f"{A.artist} - {A.title}",
            f"{C.artist} - {C.title}",
        ]

        reply = await fake.final_message(await fake.slash("listen"))
        buttons = reply["components"][0]["components"]
        assert buttons[0]["label"] == "Listen"
        assert buttons[0]["url"] == f"http://radio.example.org:{sim.port}/live"
    stored = json.dumps(titles(fake))
    assert stored.count(A.title) == 2


async def test_push_off_polls_the_status_page_and_opens_no_stream(sim, fake):
    """`push = false`: no ICY connection is held (the stream carries the audio), each change
    is found by polling status-json.xsl instead."""
    clock = sim.clock
    fast = "[announcer]\nmin_interval = 1\nmax_interval = 2\nsteady_interval = 1\n"
    async with icecast_bot(sim, fake, station_extra="push = false", extra=fast) as bot:
        client = bot.registry.clients["main"]
        client.clock = clock
        await fake.wait_for(lambda: titles(fake) == [C.title])
        clock.advance(60.0)
        await fake.wait_for(lambda: titles(fake) == [C.title, A.title])
        assert not client.push_live
        assert sim.counters["stream"] == 0
        assert sim.counters["status"] >= 2
