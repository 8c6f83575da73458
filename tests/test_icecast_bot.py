"""A station of kind icecast in the real bot, against the fake Discord and the Icecast simulator:
each change announced once (seen on the ICY stream), a song again after another announced
again, and /nowplaying, /recent and /listen answering for it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import pytest

from bot.app import create_bot
from bot.config import parse_settings
from bot.runtime.core import OnAirBot
from bot.simulator import TRACKS, ManualClock, Programme
from bot.simulator.hosts.icecast import IcecastSimulator
from bot.station.hosts.icecast import IcecastClient

from .support.botenv import fake_discord_fixture
from .support.fakediscord import FakeDiscord
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e

A, B, C = TRACKS[0], TRACKS[1], TRACKS[2]
SLOTS = [(C, 60.0), (A, 60.0), (B, 60.0), (A, 60.0), (C, 60.0)]

fake = fake_discord_fixture(channels_per_guild=2)


def config(sim: IcecastSimulator, fake: FakeDiscord) -> str:
    guild = fake.guilds[0]
    return (
        '[bot]\ndefault_station = "main"\n\n[database]\npath = ":memory:"\n\n'
        '[[stations]]\nid = "main"\nname = "Main FM"\n'
        f'base_url = "{sim.base_url}"\nkind = "icecast"\nstation_id = "/live"\n'
        'timezone = "Europe/Berlin"\n\n'
        f"[[subscriptions]]\nguild = {guild.id}\nchannel = {guild.channels[0]}\n"
        'station = "main"\n'
    )


@contextlib.asynccontextmanager
async def icecast_bot(sim: IcecastSimulator, fake: FakeDiscord) -> AsyncIterator[OnAirBot]:
    settings = parse_settings(config(sim, fake), {"ONAIR_DISCORD_TOKEN": fake.expected_token})
    bot = create_bot(settings, connector=fake.connector(), guild_ready_timeout=0.05)
    await bot.login(settings.token or "")
    task = asyncio.create_task(bot.connect(reconnect=True))
    try:
        await asyncio.wait_for(bot.wait_until_ready(), timeout=15)
        yield bot
    finally:
        await bot.close()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=10)


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
