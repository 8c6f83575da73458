"""Shows through the real discord.py client against the fake Discord, on a manual clock: the
voice channel status (and stage topic) OnAir writes where it plays, and the Scheduled Events it
makes for live shows."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest

from bot import errors
from bot.shows.text import voice_status
from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, ManualClock, Programme, StationSimulator
from bot.station import Play
from bot.storage import EVENT_ACTIVE, create_storage

from .support import discord_rules as rules
from .support.botenv import BotEnv, running_bot
from .support.fakediscord import (
    MANAGE_EVENTS,
    SET_VOICE_CHANNEL_STATUS,
    STAGE_MODERATOR,
    FakeDiscord,
    Guild,
)
from .support.stations import serving
from .support.waiting import poll_watch, wait_for
from .test_alerts_bot import alerts_in, titles
from .test_alerts_bot import turn_on as alerts_on
from .test_announcer_bot import programme_sim
from .test_voice_bot import LISTENER, icecast, mp3, reply_of, voice_bot

pytestmark = pytest.mark.e2e

__all__ = ["icecast", "mp3", "programme_sim"]  # other tests' fixtures, used here too


def advance(sim: StationSimulator, seconds: float) -> None:
    clock = sim.clock
    assert isinstance(clock, ManualClock)
    clock.advance(seconds)


async def poll(env: BotEnv) -> None:
    """Run the station's watch now; wait for its listeners (the shows hook included)."""
    announcer = env.bot.announcer
    await wait_for(lambda: len(announcer.watched()) == 1, within=10)
    await poll_watch(announcer)
    await announcer.idle()


def shown(item: Any, *, live: bool = False) -> str:
    text = voice_status(Play(title=item.title, artist=item.artist, live=live))
    assert text is not None
    return text


def status_puts(fake: FakeDiscord, channel: int) -> list[Any]:
    return [r.json["status"] for r in fake.sent("PUT", rf"^/channels/{channel}/voice-status$")]


def channel_of(fake: FakeDiscord, guild: Guild, channel_id: int) -> Any:
    return next(vc for vc in guild.voice_channels if vc.id == channel_id)


@contextlib.asynccontextmanager
async def showing_first_track(programme_sim, icecast) -> AsyncIterator[tuple[Any, Any]]:  # type: ignore[no-untyped-def]
    """OnAir joined voice where it may set the status, and the status shows the first track:
    (the voice bot, the voice channel)."""
    async with voice_bot(programme_sim, icecast, bot_allow=SET_VOICE_CHANNEL_STATUS) as voice:
        vc = channel_of(voice.fake, voice.guild, voice.channels[voice.guild.id])
        await voice.join()
        await wait_for(lambda: vc.status == shown(TRACKS[0]))
        yield voice, vc


# Voice channel status ------------------------------------------------------------------------


async def test_the_status_shows_each_play_once_and_is_cleared_on_leave(programme_sim, icecast):
    async with showing_first_track(programme_sim, icecast) as (voice, vc):
        fake, guild, channel = voice.fake, voice.guild, vc.id
        assert vc.status_by == "bot"
        await poll(voice.env)
        await poll(voice.env)
        assert status_puts(fake, channel) == [shown(TRACKS[0])]  # no change: no write
        advance(programme_sim, 21)  # the jingle
        await poll(voice.env)
        await wait_for(lambda: vc.status == shown(JINGLES[0]))
        advance(programme_sim, 25)  # 46 s: the live show
        await poll(voice.env)
        await wait_for(lambda: vc.status == shown(LIVE_SHOW, live=True))
        assert vc.status.startswith("🔴 LIVE: ")
        assert status_puts(fake, channel) == [
            shown(TRACKS[0]),
            shown(JINGLES[0]),
            shown(LIVE_SHOW, live=True),
        ]
        message = await reply_of(
            voice.env, await fake.slash("leave", {}, guild=guild, user_id=LISTENER)
        )
        assert message["content"]
        assert vc.status is None  # cleared before OnAir left
        assert status_puts(fake, channel)[-1] is None
        assert await voice.env.bot.storage.written_statuses() == {}


async def test_a_moderators_disconnect_sends_no_clear_discord_would_refuse(programme_sim, icecast):
    # Out of the channel, only Manage Channels may set its status: a refused clear would only
    # count toward Discord's invalid-request limit, so OnAir does not send one.
    async with showing_first_track(programme_sim, icecast) as (voice, vc):
        fake, guild, channel = voice.fake, voice.guild, vc.id
        keeper = voice.env.bot.shows.status
        skipped = keeper.skipped_permission

        def puts() -> list[int]:
            return [r.status for r in fake.sent("PUT", rf"^/channels/{channel}/voice-status$")]

        await fake.disconnect_bot(guild)
        await wait_for(lambda: keeper.skipped_permission > skipped or len(puts()) > 1)
        assert puts() == [204]  # the write while playing; no refused clear after


async def test_one_station_change_sets_every_guild_that_plays_it(programme_sim, icecast):
    async with voice_bot(
        programme_sim, icecast, guilds=2, bot_allow=SET_VOICE_CHANNEL_STATUS
    ) as voice:
        fake = voice.fake
        for guild in fake.guilds:
            await voice.join(guild)
        for guild in fake.guilds:
            vc = channel_of(fake, guild, voice.channels[guild.id])
            await wait_for(lambda vc=vc: vc.status == shown(TRACKS[0]))
        polls = programme_sim.counters["info:1"]
        advance(programme_sim, 21)
        await poll(voice.env)
        for guild in fake.guilds:
            vc = channel_of(fake, guild, voice.channels[guild.id])
            await wait_for(lambda vc=vc: vc.status == shown(JINGLES[0]))
            assert status_puts(fake, vc.id) == [shown(TRACKS[0]), shown(JINGLES[0])]
        assert programme_sim.counters["info:1"] - polls == 1  # one poll for both guilds


async def test_a_persons_status_is_never_replaced_or_cleared(programme_sim, icecast):
    async with voice_bot(programme_sim, icecast, bot_allow=SET_VOICE_CHANNEL_STATUS) as voice:
        fake, guild = voice.fake, voice.guild
        channel = voice.channels[guild.id]
        vc = channel_of(fake, guild, channel)
        await fake.person_sets_status(guild, channel, "Karaoke night, all welcome")
        keeper = voice.env.bot.shows.status
        await wait_for(lambda: keeper.current(channel) == "Karaoke night, all welcome")
        await voice.join()
        await poll(voice.env)
        advance(programme_sim, 21)
        await poll(voice.env)
        assert status_puts(fake, channel) == []
        assert vc.status == "Karaoke night, all welcome"
        # Cleared by its author: OnAir shows what plays again; then someone writes over it.
        await fake.person_sets_status(guild, channel, None)
        await wait_for(lambda: keeper.current(channel) is None)
        advance(programme_sim, 5)
        await poll(voice.env)
        await wait_for(lambda: vc.status == shown(TRACKS[1]))
        await fake.person_sets_status(guild, channel, "Quiz at nine")
        await wait_for(lambda: keeper.current(channel) == "Quiz at nine")
        advance(programme_sim, 21)  # the live show
        await poll(voice.env)
        await fake.slash("leave", {}, guild=guild, user_id=LISTENER)
        await wait_for(lambda: guild.id not in fake.bot_voice)
        assert vc.status == "Quiz at nine"
        assert status_puts(fake, channel) == [shown(TRACKS[1])]


async def test_without_the_permission_nothing_is_sent(programme_sim, icecast):
    async with voice_bot(programme_sim, icecast) as voice:
        channel = voice.channels[voice.guild.id]
        await voice.join()
        await poll(voice.env)
        advance(programme_sim, 21)
        await poll(voice.env)
        await wait_for(lambda: voice.env.bot.shows.status.skipped_permission >= 2)
        assert voice.fake.sent("PUT", r"/voice-status$") == []  # no 403 counted against OnAir
        assert channel_of(voice.fake, voice.guild, channel).status is None


async def test_a_guild_turns_the_status_off_and_on(programme_sim, icecast):
    async with showing_first_track(programme_sim, icecast) as (voice, vc):
        fake, guild = voice.fake, voice.guild
        iid = await fake.slash("onair", {"status": False}, sub=["voice"], guild=guild)
        text = (await reply_of(voice.env, iid))["content"]
        assert "The voice channel's status is left alone" in text
        assert vc.status is None
        advance(programme_sim, 21)
        await poll(voice.env)
        assert status_puts(fake, vc.id) == [shown(TRACKS[0]), None]
        assert (await voice.env.bot.storage.guild_voice(guild.id)).channel_status is False
        iid = await fake.slash("onair", {"status": True}, sub=["voice"], guild=guild)
        text = (await reply_of(voice.env, iid))["content"]
        await wait_for(lambda: vc.status == shown(JINGLES[0]))
        # Said once (a bullet, no paragraph repeating it), with the status text itself.
        assert text.count("status") == 2  # "The voice channel's status" and "a status …"
        assert text.splitlines()[-1] == (
            "• The voice channel's status shows what I play (a status someone else set stays);"
            f" now: {shown(JINGLES[0])}"
        )


async def test_the_reply_names_a_missing_status_permission(programme_sim, icecast):
    async with voice_bot(programme_sim, icecast) as voice:
        await voice.join()
        iid = await voice.fake.slash("onair", {"status": True}, sub=["voice"])
        text = (await reply_of(voice.env, iid))["content"]
        channel = voice.channels[voice.guild.id]
        # What the admin has to act on comes first.
        missing = errors.NO_STATUS_PERMISSION.format(channel=f"<#{channel}>")
        assert text.splitlines()[0] == f"⚠️ {missing}"
        assert text.count(missing) == 1


async def test_a_stage_shows_the_play_as_its_topic_when_onair_moderates_it(programme_sim, icecast):
    async with voice_bot(programme_sim, icecast, stage=True, bot_allow=STAGE_MODERATOR) as voice:
        fake, guild = voice.fake, voice.guild
        stage = channel_of(fake, guild, voice.channels[guild.id])
        await voice.join()
        await wait_for(lambda: stage.topic == shown(TRACKS[0]))
        advance(programme_sim, 21)
        await poll(voice.env)
        await wait_for(lambda: stage.topic == shown(JINGLES[0]))
        assert [r.method for r in fake.sent(None, r"^/stage-instances")] == ["POST", "PATCH"]
        await fake.slash("leave", {}, guild=guild, user_id=LISTENER)
        await wait_for(lambda: stage.topic is None)  # the stage OnAir opened is closed
        assert fake.sent("PUT", r"/voice-status$") == []


async def test_a_stage_someone_opened_keeps_their_topic(programme_sim, icecast):
    fake = FakeDiscord()
    guild = fake.guilds[0]
    stage_id = fake.add_voice_channel(guild, "Stage", stage=True, bot_allow=STAGE_MODERATOR)
    await fake.start()
    try:
        await fake.set_member_voice(guild, LISTENER, stage_id)
        await fake.start_stage(guild, stage_id, "Town hall")
        async with voice_bot(programme_sim, icecast, fake=fake) as voice:
            await voice.join()
            await poll(voice.env)
            advance(programme_sim, 21)
            await poll(voice.env)
            await fake.slash("leave", {}, guild=guild, user_id=LISTENER)
            await wait_for(lambda: guild.id not in fake.bot_voice)
            assert channel_of(fake, guild, stage_id).topic == "Town hall"
            assert fake.sent(None, r"^/stage-instances") == []
    finally:
        await fake.stop()


# Scheduled events for live shows ---------------------------------------------------------------


@pytest.fixture
async def events_fake() -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord(guild_count=2)
    fake.guilds[0].bot_role_permissions = MANAGE_EVENTS  # the second guild lacks it
    async with fake:
        yield fake


def event_writes(fake: FakeDiscord, guild: Guild) -> list[tuple[str, Any]]:
    return [
        (r.method, (r.json or {}).get("status"))
        for r in fake.sent(None, rf"^/guilds/{guild.id}/scheduled-events")
        if r.method in ("POST", "PATCH")
    ]


async def turn_on(env: BotEnv, guild: Guild) -> str:
    iid = await env.fake.slash("onair", {"enabled": True}, sub=["events"], guild=guild)
    message = await env.fake.final_message(iid)
    return str(message["content"])


async def test_a_live_show_becomes_one_active_event_then_completed(programme_sim, events_fake):
    fake = events_fake
    guild = fake.guilds[0]
    async with running_bot(programme_sim, fake=fake) as env:
        assert "make a server event" in await turn_on(env, guild)
        await poll(env)
        advance(programme_sim, 46)  # the live show
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
        (event,) = guild.events.values()
        await wait_for(lambda: event["status"] == rules.ACTIVE)
        assert event["name"] == LIVE_SHOW.title or LIVE_SHOW.title in event["name"]
        assert event["entity_type"] == rules.EXTERNAL
        assert event["entity_metadata"]["location"]
        await poll(env)
        await poll(env)  # the same show again: no second event
        assert len(guild.events) == 1
        advance(programme_sim, 60)  # the track after the show
        await poll(env)
        await wait_for(lambda: event["status"] == rules.COMPLETED)
        assert event_writes(fake, guild) == [
            ("POST", None),
            ("PATCH", rules.ACTIVE),
            ("PATCH", rules.COMPLETED),
        ]
        assert await env.bot.storage.open_show_events() == []
        advance(programme_sim, 65)  # the show's next airing (the programme repeats)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
        assert len(guild.events) == 2  # a new event for the new airing
        keys = await env.bot.storage.show_event_keys(guild.id, "main")
        assert sorted(k.rpartition("@")[2].partition("~")[0] for k in keys) == ["0", "1"]


async def test_an_events_place_is_never_a_link_discord_or_a_listener_should_not_get(
    programme_sim, events_fake
):
    # Issue 27: the place (entity_metadata.location, plain text Discord shows as a link) was the
    # station's https listen link as typed, ">[Free](…)" and all, whenever it fit in 100.
    station = programme_sim.station(1)
    station.typed_links = {
        "port443": "https://r.example/s>[Free](https://phish.example/y)",
        "ssl": "https://r.example/a b",
    }
    fake = events_fake
    guild = fake.guilds[0]
    async with running_bot(programme_sim, fake=fake) as env:
        await turn_on(env, guild)
        await poll(env)
        advance(programme_sim, 46)  # the live show
        await poll(env)
        await wait_for(lambda: len(guild.events) == 1)
        (event,) = guild.events.values()
        # The first https link that is one: the station's first mount.
        assert event["entity_metadata"]["location"] == "https://c9.radioboss.fm:18001/stream"


async def test_an_event_discord_would_not_start_is_canceled_when_the_show_ends(
    programme_sim, events_fake
):
    # The event exists once Discord made it: a refused start must not leave it in the server's
    # events for good.
    fake = events_fake
    guild = fake.guilds[0]
    async with running_bot(programme_sim, fake=fake) as env:
        await turn_on(env, guild)
        await poll(env)
        fake.fail("PATCH", rf"^/guilds/{guild.id}/scheduled-events/\d+$", 403, code=50013)
        advance(programme_sim, 46)  # the live show
        await poll(env)
        await wait_for(lambda: len(guild.events) == 1)
        (event,) = guild.events.values()
        await wait_for(lambda: bool(fake.sent("PATCH", rf"^/guilds/{guild.id}/scheduled-events")))
        advance(programme_sim, 60)  # the track after the show
        await poll(env)
        await wait_for(lambda: event["status"] == rules.CANCELED)
        assert await env.bot.storage.open_show_events() == []


async def test_a_restart_mid_show_makes_no_second_event(programme_sim, events_fake, tmp_path):
    fake = events_fake
    guild = fake.guilds[0]
    db = str(tmp_path / "onair.sqlite3")
    async with running_bot(programme_sim, fake=fake, db_path=db) as env:
        await turn_on(env, guild)
        advance(programme_sim, 46)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)
    async with running_bot(programme_sim, fake=fake, db_path=db) as env:
        await poll(env)  # the restarted watch sees the live show as a new play
        await poll(env)
        assert len(guild.events) == 1
        stored = await env.bot.storage.open_show_events(guild_id=guild.id)
        assert [row[4] for row in stored] == [EVENT_ACTIVE]
        advance(programme_sim, 60)
        await poll(env)
        (event,) = guild.events.values()
        await wait_for(lambda: event["status"] == rules.COMPLETED)


async def test_events_need_manage_events_and_other_guilds_go_on(programme_sim, events_fake):
    fake = events_fake
    first, second = fake.guilds
    async with running_bot(programme_sim, fake=fake) as env:
        iid = await fake.slash("onair", {"enabled": True}, sub=["events"], guild=second)
        message = await fake.final_message(iid)
        assert message["content"] == errors.EVENTS_NO_PERMISSION
        assert message["flags"] & rules.EPHEMERAL
        await turn_on(env, first)
        # Events on in the second guild too (stored earlier), but no permission there now.
        await env.bot.storage.set_show_events(second.id, "main", on=True)
        advance(programme_sim, 46)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(first)) == 1)
        assert fake.sent(None, rf"^/guilds/{second.id}/scheduled-events") == []


async def test_at_most_ten_open_events_per_guild(programme_sim, events_fake):
    fake = events_fake
    guild = fake.guilds[0]
    async with running_bot(programme_sim, fake=fake) as env:
        await turn_on(env, guild)
        for index in range(10):  # ten shows of other stations still open
            await env.bot.storage.claim_show_event(guild.id, f"other{index}", "show@1", now=1.0)
        advance(programme_sim, 46)
        await poll(env)
        assert fake.sent("POST", rf"^/guilds/{guild.id}/scheduled-events") == []


async def test_after_a_crash_onair_knows_its_own_status_and_not_a_persons(
    programme_sim, icecast, tmp_path
):
    """A kill -9 leaves OnAir's status behind (a clean stop clears it): the restarted bot finds
    what it wrote in storage and Discord's status in GUILD_CREATE, and replaces only its own."""
    db = str(tmp_path / "onair.sqlite3")
    fake = FakeDiscord(guild_count=2)
    own, theirs = fake.guilds
    channels = {
        g.id: fake.add_voice_channel(g, "Radio", bot_allow=SET_VOICE_CHANNEL_STATUS)
        for g in fake.guilds
    }
    for guild, text in ((own, "🎵 Old - Song"), (theirs, "🎵 Old - Song")):
        vc = channel_of(fake, guild, channels[guild.id])
        vc.status = text
    async with fake:
        for guild in fake.guilds:
            await fake.set_member_voice(guild, LISTENER, channels[guild.id])
        # What the crashed run had written: only in the first guild's channel.
        storage = await create_storage(db).open()
        await storage.save_written_status(own.id, channels[own.id], "🎵 Old - Song")
        await storage.close()
        async with voice_bot(programme_sim, icecast, fake=fake, db_path=db) as voice:
            for guild in fake.guilds:
                await voice.join(guild)
            mine = channel_of(fake, own, channels[own.id])
            await wait_for(lambda: mine.status == shown(TRACKS[0]))
            await poll(voice.env)
            assert channel_of(fake, theirs, channels[theirs.id]).status == "🎵 Old - Song"
            assert status_puts(fake, channels[theirs.id]) == []


async def test_a_clean_stop_clears_the_status(programme_sim, icecast):
    async with showing_first_track(programme_sim, icecast) as (voice, vc):
        fake = voice.fake
    assert vc.status is None
    assert status_puts(fake, vc.id) == [shown(TRACKS[0]), None]


async def test_a_guild_discord_refuses_does_not_hold_up_the_others(programme_sim, icecast):
    async with voice_bot(
        programme_sim, icecast, guilds=2, bot_allow=SET_VOICE_CHANNEL_STATUS
    ) as voice:
        fake = voice.fake
        first, second = fake.guilds
        for guild in fake.guilds:
            await voice.join(guild)
        good = channel_of(fake, second, voice.channels[second.id])
        await wait_for(lambda: good.status == shown(TRACKS[0]))
        # Discord refuses the first guild's next status (the permission was just taken away).
        fake.fail("PUT", rf"^/channels/{voice.channels[first.id]}/voice-status$", 403, code=50013)
        advance(programme_sim, 21)
        await poll(voice.env)
        await wait_for(lambda: good.status == shown(JINGLES[0]))
        bad = channel_of(fake, first, voice.channels[first.id])
        assert bad.status == shown(TRACKS[0])
        assert fake.sent("PUT", rf"^/channels/{bad.id}/voice-status$")[-1].status == 403
        # Allowed again: OnAir still knows the status there as its own and updates it.
        advance(programme_sim, 5)
        await poll(voice.env)
        await wait_for(lambda: bad.status == shown(TRACKS[1]))


async def test_the_config_file_turns_events_on_and_the_status_off(programme_sim, events_fake):
    fake = events_fake
    guild = fake.guilds[0]
    config = f"[[guilds]]\nid = {guild.id}\nlive_events = ['main']\nvoice_status = false\n"
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        assert await env.bot.storage.show_event_guilds() == [(guild.id, "main")]
        assert env.bot.voice.status_enabled(guild.id) is False
        advance(programme_sim, 46)
        await poll(env)
        await wait_for(lambda: len(fake.live_events(guild)) == 1)


# A live show's events through outages and restarts ----------------------------------------------


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
    guild.bot_role_permissions |= MANAGE_EVENTS
    channel = fake.add_voice_channel(guild, "Radio", bot_allow=SET_VOICE_CHANNEL_STATUS)
    async with fake:
        await fake.set_member_voice(guild, LISTENER, channel)
        async with voice_bot(sim, icecast, fake=fake, clock=sim.clock) as v:
            await _stopped_mid_show(v, sim)


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
        assert await env.bot.storage.open_show_events() == []
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
        assert await env.bot.storage.open_show_events() == []
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
    guild.bot_role_permissions |= MANAGE_EVENTS
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
