"""The song votes' tick runs in the background: start-up never waits for the first one (it
runs once OnAir is connected), and within a tick each guild is worked on its own, so one guild
whose poll hangs at Discord or whose station fails holds up no other guild's vote.

A hang is Discord holding a channel's posts until the test lets them go (discord.py waits for
Discord without a limit): nothing here is ordered by a sleep or by OnAir's own timeouts."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from bot.simulator import Programme, StationSimulator

from .support import discord_rules as rules
from .support.botenv import STATION_KEY, fake_discord_fixture
from .support.delivery import POST
from .support.fakediscord import FakeDiscord, Guild, Recorded
from .support.stations import programme_sim_fixture
from .test_votes_bot import SLOTS, polls, running, turn_on, vote_channel

pytestmark = pytest.mark.e2e

programme_sim = programme_sim_fixture("programme_sim", SLOTS, key=STATION_KEY)
fake = fake_discord_fixture(channels_per_guild=2)
two_guilds = fake_discord_fixture("two_guilds", guild_count=2, channels_per_guild=2)
WITHIN = 10.0  # seconds a step may take before the test gives up on it (a bound, not a wait)


class ChannelGate:
    """Discord holds the posts to one channel until ``open()``; ``arrived`` is set by the
    first."""

    def __init__(self, channel: int) -> None:
        self.channel = channel
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()

    async def __call__(self, record: Recorded) -> None:
        found = POST.match(record.route) if record.method == "POST" else None
        if found is not None and int(found.group(1)) == self.channel:
            self.arrived.set()
            await self.released.wait()

    def open(self) -> None:
        self.released.set()


def other_station(sim: StationSimulator) -> str:
    """Station 2 of the simulator, taking requests, open to every guild."""
    return (
        '[[stations]]\nid = "other"\nname = "Other FM"\n'
        f'base_url = "{sim.base_url}"\nstation_id = 2\n'
        'key_env = "ONAIR_TEST_STATION_KEY"\ntimezone = "Europe/Berlin"\nrequests = true\n'
    )


def counted(message: dict[str, Any]) -> bool:
    """Not a poll, or one Discord has finished counting."""
    poll = message.get("poll")
    return poll is None or bool(poll["results"]["is_finalized"])


def polls_in(fake: FakeDiscord, guild: Guild) -> int:
    channel = guild.channels[1]
    return len(
        [
            r
            for r in fake.sent("POST", rf"^/channels/{channel}/messages$")
            if r.status == 200 and (r.json or {}).get("poll")
        ]
    )


async def test_start_up_and_commands_never_wait_for_the_first_tick(programme_sim, fake, tmp_path):
    """The guild's slot is due at start-up and Discord holds its poll: OnAir connects and
    answers /onair status meanwhile; once Discord lets the post through, the poll is there."""
    db = str(tmp_path / "onair.sqlite3")
    async with running(programme_sim, fake, db_path=db):
        assert "Song votes are on" in await turn_on(fake)
    assert polls(fake) == []
    gate = ChannelGate(vote_channel(fake))
    fake.hold = gate
    async with contextlib.AsyncExitStack() as stack:
        starting = asyncio.ensure_future(
            stack.enter_async_context(running(programme_sim, fake, db_path=db))
        )
        try:
            await asyncio.wait_for(gate.arrived.wait(), WITHIN)  # the first tick: posting
            done, _ = await asyncio.wait({starting}, timeout=WITHIN)
            assert starting in done, "start-up waited for the first tick"
            status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
            names = [f["name"] for f in status["embeds"][0]["fields"]]
            assert "Song votes" in names
            assert polls(fake) == []  # the first tick's post is still held
        finally:
            gate.open()
            await asyncio.wait({starting}, timeout=WITHIN)  # entered: the stack closes it
        await fake.wait_for(lambda: len(polls(fake)) == 1)


async def test_one_guilds_failing_station_or_hang_holds_up_no_other_guilds_vote(
    programme_sim, two_guilds
):
    """Two guilds vote on two stations, the first guild's worked on first. The first guild's
    station fails its searches: it gets no poll and the second guild's is posted. At the next
    slot Discord holds the first guild's poll: the second guild's is posted meanwhile, in the
    same tick, and the first guild's once Discord lets it through."""
    fake = two_guilds
    first, second = sorted(fake.guilds, key=lambda g: g.id)
    for guild in fake.guilds:
        guild.bot_role_permissions |= rules.SEND_POLLS
    other = programme_sim.add_station(
        2, key=STATION_KEY, programme=Programme(SLOTS, epoch=programme_sim.clock() - 1.0)
    )
    other.library_durations = True
    other.song_requests.recent = 0
    async with running(programme_sim, fake, more=other_station(programme_sim)) as env:
        votes, registry = env.bot.votes, env.bot.registry
        main, second_station = registry.station("main"), registry.station("other")
        assert main is not None
        assert second_station is not None
        await votes.configure(first.id, first.channels[1], main, 30, 10)
        await votes.configure(second.id, second.channels[1], second_station, 30, 10)

        programme_sim.inject("status", endpoint="songrequestsearch", station="1", status=500)
        await votes.tick()
        assert (polls_in(fake, first), polls_in(fake, second)) == (0, 1)
        assert programme_sim.counters["songrequestsearch:1"] > 0  # asked, and failed

        programme_sim.faults.clear()  # the station answers again
        programme_sim.clock.advance(10 * 60)  # the second guild's poll ends, Discord counts it
        await votes.tick()
        await fake.wait_for(lambda: all(counted(m) for m in fake.messages.values()))
        await votes.tick()
        programme_sim.clock.advance(20 * 60)  # the next slot
        gate = ChannelGate(first.channels[1])
        fake.hold = gate
        ticking = asyncio.ensure_future(votes.tick())
        try:
            await asyncio.wait_for(gate.arrived.wait(), WITHIN)
            await fake.wait_for(lambda: polls_in(fake, second) == 2, within=WITHIN)
            assert not ticking.done()  # the first guild's poll is still held
        finally:
            gate.open()
        await asyncio.wait_for(ticking, WITHIN)
        assert (polls_in(fake, first), polls_in(fake, second)) == (1, 2)
