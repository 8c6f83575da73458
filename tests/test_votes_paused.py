"""Song votes Discord refuses for good are paused, as announcements are: Create Polls taken away
in the channel (403, 50013), the channel gone (404, 10003) or one where Discord allows no poll
(400, 520002). The guild's votes are paused with the reason, no later slot asks Discord again,
``/onair status`` says why and what to fix in the reader's language, and ``/onair vote`` run again
(the cause fixed) resumes them. A refusal of one message (400, 50035) is not lasting: the next
slot is posted as usual."""

from __future__ import annotations

from typing import Any

import pytest

from .support import discord_rules as rules
from .support.botenv import STATION_KEY, fake_discord_fixture
from .support.fakediscord import FakeDiscord
from .support.stations import programme_sim_fixture
from .test_votes_bot import SLOTS, closed, opened, polls, running, turn_on, vote_channel

pytestmark = pytest.mark.e2e

programme_sim = programme_sim_fixture("programme_sim", SLOTS, key=STATION_KEY)
fake = fake_discord_fixture(channels_per_guild=2)

NO_PERMISSION = "OnAir may not post there (Missing Permissions)"


def posts_tried(fake: FakeDiscord) -> int:
    """Every request to post in the vote channel, answered or refused."""
    return len(fake.sent("POST", rf"^/channels/{vote_channel(fake)}/messages$"))


async def votes_field(fake: FakeDiscord, locale: str) -> str:
    """The "Song votes" field of /onair status as an admin with ``locale`` reads it."""
    fake.user_locales[fake.owner_id] = locale
    try:
        status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
    finally:
        fake.user_locales.pop(fake.owner_id)
    titles = {"en-US": "Song votes", "de": "Song-Abstimmungen"}
    (field,) = [f for f in status["embeds"][0]["fields"] if f["name"] == titles[locale]]
    return str(field["value"])


async def paused_reason(env: Any) -> str | None:
    (vote,) = await env.bot.storage.song_votes()
    return vote.paused_reason


async def test_votes_pause_when_create_polls_is_taken_away_and_resume_with_the_command(
    programme_sim, fake
):
    async with running(programme_sim, fake) as env:
        guild, channel = fake.guilds[0], vote_channel(fake)
        await turn_on(fake)
        await opened(env)
        assert await closed(env, after=10 * 60) == "empty"
        assert "🟢 every 30 min in" in await votes_field(fake, "en-US")

        # An admin takes Create Polls away in the channel: the next slot's post is refused.
        await fake.set_bot_overwrite(guild, channel, deny=rules.SEND_POLLS)
        programme_sim.clock.advance(20 * 60)
        await env.bot.votes.tick()
        assert await paused_reason(env) == NO_PERMISSION
        tried = posts_tried(fake)
        for _ in range(3):  # slot after slot: Discord is not asked again
            programme_sim.clock.advance(30 * 60)
            await env.bot.votes.tick()
        assert posts_tried(fake) == tried
        assert len(polls(fake)) == 1

        english = await votes_field(fake, "en-US")
        assert english.startswith(f"🔴 paused in <#{channel}>: {NO_PERMISSION}.")
        assert "Create Polls" in english
        assert "`/onair vote` again" in english
        german = await votes_field(fake, "de")
        assert german.startswith(
            f"🔴 pausiert in <#{channel}>: OnAir darf dort nicht posten (fehlende Berechtigungen)."
        )
        assert "Umfragen erstellen" in german
        assert "`/onair vote`" in german

        # Run again before the fix: refused up front, still paused.
        assert "Create Polls" in await turn_on(fake)
        assert await paused_reason(env) == NO_PERMISSION

        # The permission is back and /onair vote is run again: a poll opens at once.
        await fake.set_bot_overwrite(guild, channel)
        assert "Song votes are on" in await turn_on(fake)
        assert await paused_reason(env) is None
        await opened(env)
        assert len(polls(fake)) == 2
        assert "🟢 every 30 min in" in await votes_field(fake, "en-US")


@pytest.mark.parametrize(
    ("status", "code", "message", "reason"),
    [
        (404, 10003, "Unknown Channel", "the channel no longer exists"),
        (400, 520002, "Invalid channel type", "Discord allows no polls in that channel"),
    ],
    ids=["channel-gone", "no-polls-there"],
)
async def test_a_channel_that_refuses_polls_for_good_pauses_the_votes(
    programme_sim, fake, status, code, message, reason
):
    route = rf"^/channels/{vote_channel(fake)}/messages$"
    async with running(programme_sim, fake) as env:
        await turn_on(fake)
        fake.fail("POST", route, status, code=code, message=message, times=None)
        await env.bot.votes.tick()
        await fake.wait_for(lambda: posts_tried(fake) >= 1)
        assert await paused_reason(env) == reason
        programme_sim.clock.advance(30 * 60)
        await env.bot.votes.tick()
        assert posts_tried(fake) == 1
        assert reason in await votes_field(fake, "en-US")


async def test_a_refused_message_is_not_lasting_and_pauses_nothing(programme_sim, fake):
    """400 50035 is about that one request: its slot fails, the next slot is posted."""
    route = rf"^/channels/{vote_channel(fake)}/messages$"
    async with running(programme_sim, fake) as env:
        await turn_on(fake)
        fake.fail("POST", route, 400, code=50035, message="Invalid Form Body", times=1)
        await env.bot.votes.tick()
        assert await paused_reason(env) is None
        assert polls(fake) == []
        programme_sim.clock.advance(30 * 60)
        await opened(env)
        assert len(polls(fake)) == 1
