"""Shows through the real bot: a live show's event and voice status through outages, stops,
restarts and blips (completed once, never made twice, cleared when the station stops).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.simulator import LIVE_SHOW, TRACKS, ManualClock, Programme, StationSimulator

from .support import discord_rules as rules
from .support.botenv import running_bot
from .support.fakediscord import (
    CREATE_EVENTS,
    SET_VOICE_CHANNEL_STATUS,
    FakeDiscord,
    Guild,
)
from .support.shows_bot import (
    advance,
    channel_of,
    event_writes,
    events_fake_fixture,  # noqa: F401
    poll,
    shown,
    status_puts,
    turn_on,
)
from .support.stations import serving
from .support.voice_bot import LISTENER, icecast_fixture, mp3_fixture, voice_bot
from .support.waiting import wait_for
from .test_alerts_bot import alerts_in, titles
from .test_alerts_bot import turn_on as alerts_on
from .test_announcer_bot import programme_sim

pytestmark = pytest.mark.e2e

__all__ = ["icecast_fixture", "mp3_fixture", "programme_sim"]  # fixtures made elsewhere


@pytest.fixture
async def long_show_sim() -> AsyncIterator[StationSimulator]:
    """Track 0-20 s, a ten-minute live show 20-620 s, then a track: an outage fits in the show."""
    clock = ManualClock()
    simulator = StationSimulator(clock=clock)
    simulator.add_station(
        1,
        key="station-key-SECRET-42",
        programme=Programme(
            [(TRACKS[0], 20.0), (LIVE_SHOW, 600.0), (TRACKS[1], 20.0)], epoch=clock() - 1.0
        ),
        public_url="https://c9.radioboss.fm",
    )
    async with serving(simulator):
        yield simulator


async def _stopped_mid_show(v: Any, sim: StationSimulator) -> None:
    fake, guild = v.fake, v.guild
    vc = channel_of(fake, guild, v.channels[guild.id])
    await v.join()
    await wait_for(lambda: vc.status == shown(TRACKS[0]))
    await turn_on(v.env, guild)
    advance(sim, 21)
    await poll(v.env)
    await wait_for(lambda: vc.status == shown(LIVE_SHOW, live=True))
    await wait_for(lambda: len(fake.live_events(guild)) == 1)
    (event,) = guild.events.values()
    await wait_for(lambda: event["status"] == rules.ACTIVE)
    sim.set_quirks({"stopped"})
    await poll(v.env)
    advance(sim, 100)
    await poll(v.env)
    assert vc.status == shown(LIVE_SHOW, live=True)  # flapping: nothing changes
    advance(sim, 30)
    await poll(v.env)
    await wait_for(lambda: vc.status is None)
    await wait_for(lambda: event["status"] == rules.COMPLETED)
    sim.set_quirks(set())
    await poll(v.env)
    await wait_for(lambda: vc.status == shown(LIVE_SHOW, live=True))
    assert status_puts(fake, vc.id) == [
        shown(TRACKS[0]),
        shown(LIVE_SHOW, live=True),
        None,
        shown(LIVE_SHOW, live=True),
    ]
    assert len(guild.events) == 1  # the same airing: no second event


async def a_run_that_leaves_an_event_active(
    sim: StationSimulator, fake: FakeDiscord, guild: Guild, db: str
) -> dict[str, Any]:
    """A run that turns events on, sees the live show start and stops mid-show: its event."""
    async with running_bot(sim, fake=fake, db_path=db) as env:
        await turn_on(env, guild)
        advance(sim, 46)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
    (event,) = guild.events.values()
    await wait_for(lambda: event["status"] == rules.ACTIVE)
    return event


async def test_an_outage_mid_show_completes_its_event_and_the_return_makes_no_second(
    long_show_sim, events_fake, tmp_path
):
    """Down longer than offline_after (120 s): the event is completed (a Scheduled Event says
    nothing is live while nothing is). The station back on the same play of the show is the
    same airing: no second event, neither at once nor after a restart."""
    sim, fake = long_show_sim, events_fake
    guild = fake.guilds[0]
    clock = sim.clock
    db = str(tmp_path / "onair.sqlite3")
    async with running_bot(sim, fake=fake, db_path=db, clock=clock) as env:
        await turn_on(env, guild)
        advance(sim, 21)  # the live show
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
        (event,) = guild.events.values()
        await wait_for(lambda: event["status"] == rules.ACTIVE)
        sim.inject("status", status=404)  # the station stops answering
        await poll(env)
        advance(sim, 90)
        await poll(env)
        assert event["status"] == rules.ACTIVE  # not yet offline_after: it may be a blip
        advance(sim, 40)
        await poll(env)
        await wait_for(lambda: event["status"] == rules.COMPLETED)
        assert await env.bot.storage.open_show_events() == []
        await poll(env)  # still down: nothing more is sent
        sim.faults.clear()  # back, on the same play of the show
        await poll(env)
        await poll(env)
        assert len(guild.events) == 1
    async with running_bot(sim, fake=fake, db_path=db, clock=clock) as env:
        await poll(env)  # the restarted watch sees the show's play as new
        await poll(env)
        assert len(guild.events) == 1
        assert event_writes(fake, guild) == [
            ("POST", None),
            ("PATCH", rules.ACTIVE),
            ("PATCH", rules.COMPLETED),
        ]
        advance(sim, 480)  # 631 s: the track after the show
        await poll(env)
        advance(sim, 40)  # the show's next airing (the programme repeats): a new event
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
        assert len(guild.events) == 2


async def test_a_stopped_station_clears_the_status_and_completes_the_event(long_show_sim, icecast):
    """Play-out stopped (the station answers, nothing plays) for longer than offline_after: the
    voice channel no longer says LIVE and the show's event is completed; playing again, the
    channel shows the play on air (the player stayed, playing what the stream sends)."""
    sim = long_show_sim
    fake = FakeDiscord()
    guild = fake.guilds[0]
    guild.bot_role_permissions |= CREATE_EVENTS
    channel = fake.add_voice_channel(guild, "Radio", bot_allow=SET_VOICE_CHANNEL_STATUS)
    async with fake:
        await fake.set_member_voice(guild, LISTENER, channel)
        async with voice_bot(sim, icecast, fake=fake, clock=sim.clock) as v:
            await _stopped_mid_show(v, sim)


async def test_an_event_left_active_by_a_stopped_run_is_completed_at_the_first_poll(
    programme_sim, events_fake, tmp_path
):
    """OnAir was down when the show ended: the restarted bot's first poll, finding another
    play on air, completes the event the last run left ACTIVE."""
    fake = events_fake
    guild = fake.guilds[0]
    db = str(tmp_path / "onair.sqlite3")
    event = await a_run_that_leaves_an_event_active(programme_sim, fake, guild, db)
    advance(programme_sim, 60)  # the show ended while OnAir was not running
    async with running_bot(programme_sim, fake=fake, db_path=db) as env:
        await wait_for(lambda: event["status"] == rules.COMPLETED)  # its own first poll
        # Stored as ended once Discord has answered the PATCH: a moment after the fake saw it.
        await wait_for(lambda: _no_open_events(env))
        assert len(guild.events) == 1


async def test_the_left_event_is_completed_though_the_first_poll_comes_before_ready(
    programme_sim, events_fake, tmp_path
):
    """The station is polled from the bot's setup, before the gateway's READY names a single
    guild: a first poll that finds the show over then ends its event all the same (ending it
    needs only the stored ids, not the gateway's guild)."""
    fake = events_fake
    guild = fake.guilds[0]
    db = str(tmp_path / "onair.sqlite3")
    event = await a_run_that_leaves_an_event_active(programme_sim, fake, guild, db)
    advance(programme_sim, 60)
    held = fake.ready_held = asyncio.Event()
    route = rf"^/guilds/{guild.id}/scheduled-events/{event['id']}$"

    def statuses_sent() -> list[Any]:
        return [(r.json or {}).get("status") for r in fake.sent("PATCH", route)]

    async def ready_once_completed() -> None:
        try:
            await wait_for(lambda: rules.COMPLETED in statuses_sent(), within=10)
        finally:
            held.set()  # READY either way: without the fix the test fails here, not hangs

    releaser = asyncio.create_task(ready_once_completed())
    async with running_bot(programme_sim, fake=fake, db_path=db) as env:
        await releaser  # the PATCH was sent while READY was held
        assert event["status"] == rules.COMPLETED
        await wait_for(lambda: _no_open_events(env))
        assert env.bot.get_guild(guild.id) is not None


async def test_a_show_on_air_at_start_up_gets_its_event_once_the_guilds_are_known(
    programme_sim, events_fake, tmp_path
):
    """Events turned on while OnAir was down, the show already on air: the first poll (before
    READY) waits for the gateway's guilds instead of finding none and leaving the show
    without an event (its play is new only once)."""
    fake = events_fake
    guild = fake.guilds[0]
    db = str(tmp_path / "onair.sqlite3")
    async with running_bot(programme_sim, fake=fake, db_path=db) as env:
        await turn_on(env, guild)
    advance(programme_sim, 46)  # the live show, first seen by the next run
    held = fake.ready_held = asyncio.Event()
    polls = programme_sim.counters["info:1"]

    async def ready_after_the_first_poll() -> None:
        try:
            await wait_for(lambda: programme_sim.counters["info:1"] > polls, within=10)
        finally:
            held.set()

    releaser = asyncio.create_task(ready_after_the_first_poll())
    async with running_bot(programme_sim, fake=fake, db_path=db) as env:
        await releaser
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
        (event,) = guild.events.values()
        await wait_for(lambda: event["status"] == rules.ACTIVE)
        await poll(env)
        assert len(guild.events) == 1


@pytest.mark.parametrize("dated", [True, False], ids=["start_times", "no_start_times"])
async def test_one_poll_blips_mid_show_change_nothing_anywhere(long_show_sim, icecast, dated):
    """Issue 27: a station that answers "stopped", "nothing on air" or not at all for one poll
    at a time during a live show (four blips, each far shorter than offline_after) changes
    nothing: one LIVE NOW (one ping) and one end in the alerts channel, one event started and
    completed, the voice status set once for the show and once for what follows. With and
    without start times from the station (without, each blip used to ping the role again)."""
    sim = long_show_sim
    if not dated:
        sim.set_quirks({"no_recent_started"})
    fake = FakeDiscord()
    guild = fake.guilds[0]
    guild.bot_role_permissions |= CREATE_EVENTS
    channel = fake.add_voice_channel(guild, "Radio", bot_allow=SET_VOICE_CHANNEL_STATUS)
    text, role = guild.channels[0], guild.roles[1]
    async with fake:
        await fake.set_member_voice(guild, LISTENER, channel)
        async with voice_bot(sim, icecast, fake=fake, clock=sim.clock) as v:
            vc = channel_of(fake, guild, v.channels[guild.id])
            await v.join()
            await wait_for(lambda: vc.status == shown(TRACKS[0]))
            await turn_on(v.env, guild)
            await alerts_on(v.env, text, role)

            async def polled() -> None:
                await poll(v.env)
                await v.env.bot.posts.idle()

            advance(sim, 21)  # the live show
            await polled()
            await wait_for(lambda: vc.status == shown(LIVE_SHOW, live=True))
            await wait_for(lambda: len(fake.live_events(guild)) == 1)
            (event,) = guild.events.values()
            await wait_for(lambda: event["status"] == rules.ACTIVE)
            await wait_for(lambda: len(alerts_in(fake, text)) == 1)
            for blip in ("stopped", "nothing", "status", "stopped"):
                sim.inject(blip, status=404, times=1)
                advance(sim, 30)
                await polled()  # the blip
                advance(sim, 10)
                await polled()  # the show again
            assert titles(fake, text) == [f"🔴 LIVE NOW: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"]
            assert event["status"] == rules.ACTIVE
            # Dated: at 645 s the show ended at 620 s and the track after it at 640 s, before
            # this poll: that track (recovered from `recent`) is recorded, but it is not on
            # air, so neither the status nor the events show it. (Undated, nothing tells a
            # play in `recent` from a flap, and the detector's flap window runs on the real
            # clock: 621 s, the track after the show.)
            after = TRACKS[0] if dated else TRACKS[1]
            advance(sim, (645 if dated else 621) - 181)
            await polled()
            await wait_for(lambda: vc.status == shown(after))
            await wait_for(lambda: event["status"] == rules.COMPLETED)
            await wait_for(lambda: len(alerts_in(fake, text)) == 2)
            await polled()
            assert titles(fake, text) == [
                f"🔴 LIVE NOW: {LIVE_SHOW.artist} - {LIVE_SHOW.title}",
                f"Live show ended: {LIVE_SHOW.artist} - {LIVE_SHOW.title}",
            ]
            assert [m["content"] for m in alerts_in(fake, text)] == [f"<@&{role}>", ""]
            assert status_puts(fake, vc.id) == [
                shown(TRACKS[0]),
                shown(LIVE_SHOW, live=True),
                shown(after),
            ]
            if dated:  # (without start times nothing tells a play from a flap: not recovered)
                now = datetime.fromtimestamp(sim.clock(), UTC)
                history = await v.env.bot.storage.play_at("main", now, 3)
                assert [h.title for h in history] == [
                    TRACKS[0].title,
                    TRACKS[1].title,
                    LIVE_SHOW.title,
                ]
            assert event_writes(fake, guild) == [
                ("POST", None),
                ("PATCH", rules.ACTIVE),
                ("PATCH", rules.COMPLETED),
            ]
            assert len(guild.events) == 1


async def _no_open_events(env: Any) -> bool:
    return await env.bot.storage.open_show_events() == []
