"""An AzuraCast station's schedule as a guild's Discord events, through the real bot, the fake
Discord and the AzuraCast simulator (a manual clock): each upcoming streamer slot becomes one
SCHEDULED event with the slot's times; a moved slot moves its event and a removed one cancels
it; the slot's live show starts its event (no second one) and completes it; two processes make
one event per slot; without Create Events nothing is made."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import datetime

import pytest

from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, ManualClock, Programme
from bot.simulator.hosts.azuracast import AzuraCastSimulator, AzuraStation
from bot.simulator.programme import Slot

from .support import discord_rules as rules
from .support.botenv import running_bot
from .support.fakediscord import FakeDiscord, Guild
from .support.shows_bot import events_fake_fixture, turn_on  # noqa: F401
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e

# A track 0-20 s, a jingle 20-25, a track 25-45, the live show 45-105, then again: the live
# show is airing 4k+3 of the programme, from epoch + 45 + 105k.
SLOTS = [Slot(TRACKS[0], 20.0), (JINGLES[0], 5.0), Slot(TRACKS[1], 20.0), (LIVE_SHOW, 60.0)]
CYCLE = 105.0
STATION = 'kind = "azuracast"'
MAX_PLANNED = 10


@pytest.fixture
async def azura() -> AsyncIterator[AzuraCastSimulator]:
    clock = ManualClock()
    sim = AzuraCastSimulator(clock=clock)
    sim.add_azura(1, "onair_radio", programme=Programme(SLOTS, epoch=clock() - 1.0))
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


def station_of(sim: AzuraCastSimulator) -> AzuraStation:
    station = sim.find("onair_radio")
    assert station is not None
    return station


def slot_start(sim: AzuraCastSimulator, cycle: int) -> float:
    """The start of the live show of the programme's ``cycle`` (whole unix seconds)."""
    return float(int(station_of(sim).sim.programme.airing(4 * cycle + 3).started))


def start_of(event: dict) -> float:
    return datetime.fromisoformat(event["scheduled_start_time"]).timestamp()


def end_of(event: dict) -> float:
    return datetime.fromisoformat(event["scheduled_end_time"]).timestamp()


def creates(fake: FakeDiscord, guild: Guild) -> list:
    return fake.sent("POST", rf"^/guilds/{guild.id}/scheduled-events$")


async def read_schedule_now(env) -> None:  # type: ignore[no-untyped-def]
    """The next tick reads the host again (the shared read is due; the client's cache off)."""
    env.bot.shows.schedule_every = 0.0
    for config in env.bot.registry.visible(None):
        env.bot.registry.client(config).forget_cached()
    await env.bot.shows.schedule_tick()


async def test_upcoming_slots_become_scheduled_events_that_their_live_show_starts(
    azura, events_fake
):
    fake, guild = events_fake, events_fake.guilds[0]
    async with running_bot(azura, fake=fake, station_options=STATION, clock=azura.clock) as env:
        await turn_on(env, guild)
        await env.bot.shows.schedule_tick()
        events = sorted(guild.events.values(), key=start_of)
        # The show 44 s from now starts too soon for a new event: the next ten are planned.
        assert len(events) == MAX_PLANNED
        assert all(e["status"] == rules.SCHEDULED for e in events)
        assert [start_of(e) for e in events] == [slot_start(azura, k) for k in range(1, 11)]
        assert [end_of(e) - start_of(e) for e in events] == [60.0] * MAX_PLANNED
        assert events[0]["name"] == LIVE_SHOW.artist
        assert events[0]["entity_type"] == rules.EXTERNAL
        await env.bot.shows.schedule_tick()  # read again: nothing new
        await read_schedule_now(env)
        assert len(creates(fake, guild)) == MAX_PLANNED

        first = events[0]
        azura.clock.advance(slot_start(azura, 1) - azura.clock() + 1)  # the show goes live
        await wait_for(lambda: first["status"] == rules.ACTIVE)
        await env.bot.announcer.idle()
        assert len(creates(fake, guild)) == MAX_PLANNED  # its event, not a second one
        azura.clock.advance(60)  # the track after the show
        await wait_for(lambda: first["status"] == rules.COMPLETED)
        assert all(e["status"] == rules.SCHEDULED for e in events[1:])


async def test_a_moved_slot_moves_its_event_and_a_removed_one_is_cancelled(azura, events_fake):
    fake, guild = events_fake, events_fake.guilds[0]
    station = station_of(azura)
    async with running_bot(azura, fake=fake, station_options=STATION, clock=azura.clock) as env:
        await turn_on(env, guild)
        await env.bot.shows.schedule_tick()
        events = sorted(guild.events.values(), key=start_of)
        moved, removed = events[1], events[2]
        station.schedule_moves[4 * 2 + 3] = 1800.0  # half an hour later, the same day
        station.schedule_removed.add(4 * 3 + 3)
        await read_schedule_now(env)
        assert start_of(moved) == slot_start(azura, 2) + 1800
        assert end_of(moved) == slot_start(azura, 2) + 1860
        assert moved["status"] == rules.SCHEDULED
        assert removed["status"] == rules.CANCELED
        # The plan fills up again to ten, and the cancelled slot stays without an event.
        assert len(fake.live_events(guild)) == MAX_PLANNED
        assert len(creates(fake, guild)) == MAX_PLANNED + 1
        assert slot_start(azura, 3) not in {start_of(e) for e in fake.live_events(guild)}


async def test_two_processes_make_one_event_per_slot(azura, events_fake, tmp_path):
    fake, guild = events_fake, events_fake.guilds[0]
    db = str(tmp_path / "onair.sqlite3")
    options = {"station_options": STATION, "clock": azura.clock, "db_path": db}
    async with running_bot(azura, fake=fake, **options) as first:
        await turn_on(first, guild)
        async with running_bot(azura, fake=fake, **options) as second:
            await asyncio.gather(first.bot.shows.schedule_tick(), second.bot.shows.schedule_tick())
            await asyncio.gather(read_schedule_now(first), read_schedule_now(second))
    assert len(creates(fake, guild)) == MAX_PLANNED
    assert len(guild.events) == MAX_PLANNED
    # One read of the schedule for both at first (claimed), then one each when told to read.
    assert len(azura.schedule_queries) == 3


async def test_without_create_events_nothing_is_made(azura, events_fake, caplog):
    fake = events_fake
    without = fake.guilds[1]  # Manage Events only
    async with running_bot(azura, fake=fake, station_options=STATION, clock=azura.clock) as env:
        await env.bot.storage.set_show_events(without.id, "main", on=True)
        await env.bot.shows.schedule_tick()
        await read_schedule_now(env)
        assert fake.sent(None, rf"^/guilds/{without.id}/scheduled-events") == []
        assert await env.bot.storage.planned_slot_events() == []
