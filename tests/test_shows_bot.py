"""Shows through the real discord.py client against the fake Discord, on a manual clock: the
voice channel status (and stage topic) OnAir writes where it plays, and the Scheduled Events it
makes for live shows.

Here: the voice channel status and a stage's topic. The Scheduled Events are in
test_shows_events_bot.py, a live show's events through outages and restarts in
test_shows_outages_bot.py.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot import errors
from bot.simulator import JINGLES, LIVE_SHOW, TRACKS
from bot.storage import create_storage

from .support.fakediscord import (
    SET_VOICE_CHANNEL_STATUS,
    STAGE_MODERATOR,
    FakeDiscord,
)
from .support.shows_bot import advance, channel_of, poll, shown, status_puts
from .support.voice_bot import LISTENER, icecast_fixture, mp3_fixture, reply_of, voice_bot
from .support.waiting import wait_for
from .test_announcer_bot import programme_sim

pytestmark = pytest.mark.e2e

__all__ = ["icecast_fixture", "mp3_fixture", "programme_sim"]  # fixtures made elsewhere


@contextlib.asynccontextmanager
async def showing_first_track(programme_sim, icecast) -> AsyncIterator[tuple[Any, Any]]:  # type: ignore[no-untyped-def]
    """OnAir joined voice where it may set the status, and the status shows the first track:
    (the voice bot, the voice channel)."""
    async with voice_bot(programme_sim, icecast, bot_allow=SET_VOICE_CHANNEL_STATUS) as voice:
        vc = channel_of(voice.fake, voice.guild, voice.channels[voice.guild.id])
        await voice.join()
        await wait_for(lambda: vc.status == shown(TRACKS[0]))
        yield voice, vc


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
