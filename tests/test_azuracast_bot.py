"""An AzuraCast station end to end: the real bot against the fake Discord and the AzuraCast
simulator (a manual clock). Each change is announced once, from AzuraCast's push with no poll;
/nowplaying, /recent and /listen answer; /request suggests AzuraCast's requestable songs, the
request is taken, and its announcement credits the listener."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, ManualClock, Programme
from bot.simulator.hosts.azuracast import AzuraCastSimulator
from bot.simulator.programme import Slot

from .support.botenv import fake_discord_fixture, running_bot, subscription_config
from .support.discord_rules import AUTOCOMPLETE_RESULT, EPHEMERAL
from .support.fakediscord import FakeDiscord
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e

# Harbour Lights 0-20 s (on air at the start), a jingle 20-25 (a request takes this slot),
# the second track 25-45, the live show 45-105.
SLOTS = [
    Slot(TRACKS[0], 20.0),
    (JINGLES[0], 5.0),
    Slot(TRACKS[1], 20.0),
    (LIVE_SHOW, 60.0),
]
NEON = TRACKS[3]
STATION = 'kind = "azuracast"\nrequests = true'
RATE = "[requests]\nsearches_per_second = 100\n"

fake = fake_discord_fixture(channels_per_guild=2)


@pytest.fixture
async def azura() -> AsyncIterator[AzuraCastSimulator]:
    clock = ManualClock()
    sim = AzuraCastSimulator(clock=clock)
    programme = Programme(SLOTS, epoch=clock() - 1.0)
    sim.add_azura(1, "onair_radio", programme=programme, library_durations=True)
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


def posts(fake: FakeDiscord) -> list:
    channel = fake.guilds[0].channels[0]
    return [r for r in fake.sent("POST", rf"^/channels/{channel}/messages$") if r.status == 200]


def polls(sim: AzuraCastSimulator) -> int:
    return sim.counters["nowplaying"] + sim.counters["nowplaying_static"]


async def test_announced_from_pushes_and_requested_through_azuracast(azura, fake):
    guild = fake.guilds[0]
    config = subscription_config(guild.id, guild.channels[0]) + RATE
    async with running_bot(azura, fake=fake, extra_config=config, station_options=STATION) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        first = posts(fake)[0].json["embeds"][0]
        assert first["title"] == TRACKS[0].title
        client = env.bot.announcer.watched()[0].client
        await wait_for(lambda: client.push_live)

        # /request: the suggestions are AzuraCast's requestable songs, by its request ids.
        iid = await fake.autocomplete("request", "song", "neon")
        callback = await fake.response(iid)
        assert callback.json["type"] == AUTOCOMPLETE_RESULT
        choices = callback.json["data"]["choices"]
        station = azura.find("onair_radio")
        assert station is not None
        wanted = station.request_id(station.sim.song_requests.library.index(NEON))
        assert choices == [{"name": NEON.cast_title, "value": wanted}]
        assert azura.request_queries[-1]["searchPhrase"] == "neon"
        message = await fake.final_message(await fake.slash("request", {"song": wanted}))
        assert message["flags"] & EPHEMERAL
        assert message["content"].startswith("✅ **Main FM** accepted your request: **Kaito")

        # The request plays in the jingle's slot: pushed, announced with the credit, no poll.
        asked = polls(azura)
        azura.clock.advance(21)
        await fake.wait_for(lambda: len(posts(fake)) == 2)
        embed = posts(fake)[-1].json["embeds"][0]
        assert embed["title"] == NEON.title
        assert "🙋 Requested by" in embed["description"]
        assert polls(azura) == asked  # from the push alone

        azura.clock.advance(5)  # the second track
        await fake.wait_for(lambda: len(posts(fake)) == 3)
        assert posts(fake)[-1].json["embeds"][0]["title"] == TRACKS[1].title
        assert [p.json["embeds"][0]["title"] for p in posts(fake)].count(TRACKS[1].title) == 1

        now = await fake.final_message(await fake.slash("nowplaying"))
        assert now["embeds"][0]["title"] == TRACKS[1].title
        recent = await fake.final_message(await fake.slash("recent"))
        text = json.dumps(recent, ensure_ascii=False)
        # (plays shorter than 30 s on this compressed clock are left out as jingles)
        assert f"**▶ {TRACKS[1].cast_title}**" in text
        assert LIVE_SHOW.title in text
        listen = await fake.final_message(await fake.slash("listen"))
        assert "https://127.0.0.1/listen/onair_radio/radio.mp3" in json.dumps(listen)
