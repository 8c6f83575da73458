"""A fleet of two OnAir processes (two real bots on one PostgreSQL, one fake Discord, one clock the
test moves): each alert reaches each subscribed guild once, also when both processes sweep and
try to send every alert at once and when the other process takes the station over; the weekly
recap is posted once though both processes reach its slot together."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.simulator import LIVE_SHOW, TRACKS, StationSimulator
from bot.station import StationInfo
from bot.storage import AlertSubscription

from .support.botenv import STATION_KEY, running_bot, subscription_config
from .support.fakediscord import FakeDiscord
from .support.stations import programme_sim_fixture
from .support.storage_backends import reset_postgres
from .support.waiting import poll_watch, wait_for
from .test_alerts_bot import alerts_in

pytestmark = pytest.mark.e2e
SLOTS = [(TRACKS[0], 20.0), (LIVE_SHOW, 3600.0), (TRACKS[1], 3600.0)]
FLEET = "[announcer]\nwatch_lease = 1\ndelivery_lease = 3\n"


fleet_sim = programme_sim_fixture("fleet_sim", SLOTS, key=STATION_KEY)


async def owner_poll(envs: list[Any]) -> Any:
    """Poll the station in the process that holds its watch lease; that process's env."""
    await wait_for(lambda: any(e.bot.announcer.watched()[0].owned for e in envs), within=10)
    env = next(e for e in envs if e.bot.announcer.watched()[0].owned)
    announcer = env.bot.announcer
    await poll_watch(announcer)
    await announcer.idle()
    for each in envs:
        await each.bot.posts.idle()
    return env


async def start_fleet(
    sim: StationSimulator,
    fake: FakeDiscord,
    url: str,
    stacks: list[contextlib.AsyncExitStack],
    *,
    extra: str = "",
) -> list[Any]:
    options: dict[str, Any] = {
        "fake": fake,
        "extra_config": FLEET + extra,
        "env_extra": {"ONAIR_DATABASE_URL": url},
        "clock": sim.clock,
    }
    return [await stack.enter_async_context(running_bot(sim, **options)) for stack in stacks]


async def test_two_processes_post_each_alert_once_in_every_guild(postgres_url, fleet_sim):
    await reset_postgres(postgres_url)
    clock = fleet_sim.clock
    fake = FakeDiscord(guild_count=2)
    await fake.start()
    channels = [g.channels[0] for g in fake.guilds]
    stacks = [contextlib.AsyncExitStack(), contextlib.AsyncExitStack()]
    try:
        # The station is watched for an announcement channel; alerts are turned on later in
        # the process that does not poll it (the poller learns of them within followed_ttl).
        announce = subscription_config(fake.guilds[0].id, fake.guilds[0].channels[1])
        envs = await start_fleet(fleet_sim, fake, postgres_url, stacks, extra=announce)
        first_poller = await owner_poll(envs)
        (elsewhere,) = [e for e in envs if e is not first_poller]
        first_poller.bot.alerts.followed_ttl = 0.0
        for guild in fake.guilds:
            await elsewhere.bot.alerts.subscribe(
                AlertSubscription(guild.id, "main", guild.channels[0], guild.roles[1])
            )
        await elsewhere.bot.announcer.refresh()
        await owner_poll(envs)
        clock.advance(21)  # the live show starts
        poller = await owner_poll(envs)
        assert [len(alerts_in(fake, c)) for c in channels] == [1, 1]
        # Both processes sweep and try every alert at once: nothing is sent twice.
        keys = list(await envs[0].bot.storage.post_states("alert|"))
        assert len(keys) == 2
        for env in envs:
            env.bot.posts.send_soon(keys)
        await asyncio.gather(*(env.bot.posts.sweep() for env in envs))
        for env in envs:
            await env.bot.posts.idle()
        assert [len(alerts_in(fake, c)) for c in channels] == [1, 1]
        # The poller stops; the other process takes the station over from the stored state:
        # the show still on air is not announced again; the outage is, once, and the show
        # ends with it (down for offline_after); back on the same airing, it stays ended.
        await stacks[envs.index(poller)].aclose()
        (other,) = [e for e in envs if e is not poller]
        await owner_poll([other])
        fleet_sim.inject("status", status=404)
        await owner_poll([other])
        clock.advance(130)
        await owner_poll([other])
        fleet_sim.faults.clear()
        clock.advance(5)
        await owner_poll([other])
    finally:
        for stack in stacks:
            await stack.aclose()
        await fake.stop()
    for channel in channels:
        titles = [m["embeds"][0]["title"] for m in alerts_in(fake, channel)]
        # (The end and the down alert are decided by one poll and sent side by side.)
        assert titles[:1] + sorted(titles[1:3]) + titles[3:] == [
            f"🔴 LIVE NOW: {LIVE_SHOW.artist} - {LIVE_SHOW.title}",
            f"Live show ended: {LIVE_SHOW.artist} - {LIVE_SHOW.title}",
            "⚠️ Main FM is down",
            "✅ Main FM is back",
        ], titles


async def test_two_processes_reaching_the_recap_slot_together_post_it_once(postgres_url, fleet_sim):
    await reset_postgres(postgres_url)
    clock = fleet_sim.clock
    fake = FakeDiscord(guild_count=2)
    await fake.start()
    stacks = [contextlib.AsyncExitStack(), contextlib.AsyncExitStack()]
    channels = [g.channels[1] for g in fake.guilds]
    try:
        envs = await start_fleet(fleet_sim, fake, postgres_url, stacks)
        slot = (datetime.fromtimestamp(clock(), UTC) + timedelta(hours=2)).replace(
            minute=0, second=0, microsecond=0
        )
        for guild, channel in zip(fake.guilds, channels, strict=True):
            await envs[0].bot.recaps.configure(guild.id, channel, "main", slot.weekday(), slot.hour)
        for env in envs:
            await env.bot.announcer.refresh()
        await owner_poll(envs)  # the track on air goes into the history
        clock.now = slot.timestamp() + 30
        recorded = await asyncio.gather(*(env.bot.recaps.tick() for env in envs))
        year, week, _ = slot.isocalendar()  # the guilds' zone is UTC
        assert sorted(k for keys in recorded for k in keys) == sorted(
            f"recap|{g.id}|{year}-W{week:02d}" for g in fake.guilds
        )
        for env in envs:
            await env.bot.posts.idle()
        again = await asyncio.gather(*(env.bot.recaps.tick() for env in envs))
        assert again == [[], []]
        await asyncio.gather(*(env.bot.posts.sweep() for env in envs))
        for env in envs:
            await env.bot.posts.idle()
    finally:
        for stack in stacks:
            await stack.aclose()
        await fake.stop()
    for channel in channels:
        recaps = [
            m
            for m in (fake.messages[i] for i in fake.channel_messages[channel])
            if m.get("embeds") and m["embeds"][0]["title"] == "📊 The week on Main FM"
        ]
        assert len(recaps) == 1
        assert (
            f"**{TRACKS[0].title}** · {TRACKS[0].artist}"
            in recaps[0]["embeds"][0]["fields"][0]["value"]
        )


async def test_two_processes_evaluating_one_show_start_at_once_post_it_once(
    postgres_url, fleet_sim
):
    """A watch handed over mid-evaluation: the old and the new owner evaluate the same live
    show's start from the same stored state, each at its own time (the station does not date
    the show): the state's compare-and-set lets one record its alert; one LIVE NOW."""
    await reset_postgres(postgres_url)
    clock = fleet_sim.clock
    fake = FakeDiscord()
    await fake.start()
    guild = fake.guilds[0]
    channel = guild.channels[0]
    stacks = [contextlib.AsyncExitStack(), contextlib.AsyncExitStack()]
    try:
        envs = await start_fleet(fleet_sim, fake, postgres_url, stacks)
        await envs[0].bot.alerts.subscribe(
            AlertSubscription(guild.id, "main", channel, guild.roles[1])
        )
        for env in envs:
            await env.bot.alerts.stations()  # both know the station's alerts are on
        show = f"{LIVE_SHOW.artist} - {LIVE_SHOW.title}"
        raw = {"nowplaying": show, "live": True, "playback": {"pos": 1000, "state": "play"}}
        info = StationInfo.parse(raw, UTC, datetime.fromtimestamp(clock(), UTC))
        evaluations = []
        for env in envs:
            evaluations.append(env.bot.alerts.observe(["main"], info, None))
            clock.advance(1.5)  # each process's own time
        await asyncio.gather(*evaluations)
        for env in envs:
            await env.bot.posts.idle()
        assert [m["embeds"][0]["title"] for m in alerts_in(fake, channel)] == [
            f"🔴 LIVE NOW: {show}"
        ]
        assert len(await envs[0].bot.storage.post_states("alert|")) == 1
    finally:
        for stack in stacks:
            await stack.aclose()
        await fake.stop()
