"""DAVE end to end through the real bot and discord.py: the fake voice server plays Discord's
part (MLS external sender, proposals, transitions) and holds DAVE listeners of its own that
decrypt every frame the bot sends.

Proven here: the group forms with the bot; after the transition (op 22) the listeners decrypt
the bot's audio to Opus and none of it is plaintext; a second listener is added and decrypts
too; the bot reconnects into a group the listener kept; the bot commits no Add for a user who
is not in its voice channel, and commits one the voice server proposed before the gateway put
the user in the channel once the gateway does; and, pinned, the upstream key switch at commit time.
"""

from __future__ import annotations

import logging

import pytest

from .support.fakevoice.dave import FAILED, OPUS, PLAIN, DaveCall
from .support.voice_bot import LISTENER, SECOND, Voice, icecast_fixture, mp3_fixture, voice_bot  # noqa: F401
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord

STRANGER = 700000000000000099  # in no voice channel of the guild
FRAMES = 150  # audio frames judged after a transition (3 s)


async def joined_with_a_listener(voice: Voice) -> DaveCall:
    """The listener joins the call as a DAVE member, then the bot joins and plays: the group
    forms with the bot as its first member."""
    guild = voice.guild
    await voice.fake.voice.add_listener(guild.id, LISTENER, voice.channels[guild.id])
    message = await voice.join()
    assert message["content"].startswith("▶ Playing")
    call = voice.fake.voice.dave_call(guild.id)
    await wait_for(lambda: len(call.executed) == 1, within=20)
    return call


async def judged_after_transition(voice: Voice, call: DaveCall) -> dict[str, int]:
    """What the listeners made of ``FRAMES`` audio frames sent after the last transition."""
    moment = call.executed[-1]
    stats = voice.fake.voice.stats

    def judged() -> int:
        return sum(stats(voice.guild.id).verdicts(moment).values())

    await wait_for(lambda: judged() >= FRAMES, within=20)
    verdicts = stats(voice.guild.id).verdicts(moment)
    return {kind: verdicts[kind] for kind in (OPUS, PLAIN, FAILED)}


def decrypts(verdicts: dict[str, int]) -> bool:
    """At least 95 % of the frames decrypted to Opus and none was plaintext."""
    total = sum(verdicts.values())
    return verdicts[PLAIN] == 0 and verdicts[OPUS] >= 0.95 * total


async def test_the_group_forms_and_the_listener_decrypts_the_bots_audio(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        call = await joined_with_a_listener(voice)
        assert call.commits == 1
        assert call.welcomed == [LISTENER]
        verdicts = await judged_after_transition(voice, call)
        assert decrypts(verdicts), verdicts
        listener = call.listeners[LISTENER]
        assert listener.session.epoch == 1
        assert listener.decrypted >= FRAMES
        assert voice.fake.voice.stats(voice.guild.id).dave_frames >= FRAMES
        assert voice.fake.voice.violations == []


async def test_listeners_join_a_bot_that_played_alone_and_each_decrypts(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        guild, channel = voice.guild, voice.channels[voice.guild.id]
        await voice.join()
        before = await voice.playing(frames=50)
        assert before.dave_frames == 0  # alone in the call: no group, DAVE in passthrough
        await voice.fake.voice.add_listener(guild.id, LISTENER, channel)
        call = voice.fake.voice.dave_call(guild.id)
        await wait_for(lambda: len(call.executed) == 1, within=20)
        await voice.fake.set_member_voice(guild, SECOND, channel)
        bot_channel = voice.env.bot.get_channel(channel)
        await wait_for(lambda: SECOND in getattr(bot_channel, "voice_states", {}))
        await voice.fake.voice.add_listener(guild.id, SECOND, channel)
        await wait_for(lambda: len(call.executed) == 2, within=20)
        assert call.welcomed == [LISTENER, SECOND]
        assert call.commits == 2
        verdicts = await judged_after_transition(voice, call)
        assert decrypts(verdicts), verdicts  # "opus": each of the two decrypted the frame
        assert call.listeners[SECOND].decrypted >= FRAMES * 0.95
        assert voice.fake.voice.violations == []


async def test_the_bot_reconnects_into_the_group_the_listener_kept(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        guild = voice.guild
        call = await joined_with_a_listener(voice)
        epoch = call.listeners[LISTENER].session.epoch
        # discord.py gives up after 4015 (its resume times out) and OnAir rejoins: a new
        # connection, a new DAVE session, into the group the listener kept.
        await voice.fake.voice.close(guild.id, 4015)
        await wait_for(lambda: len(call.executed) == 2, within=30)
        assert voice.fake.voice.key_packages[guild.id] == 2
        # The listener committed the bot's removal and re-add: the group lived on.
        assert call.listeners[LISTENER].session.epoch == (epoch or 0) + 1
        assert call.commits == 1  # the bot's one commit was the group's first
        verdicts = await judged_after_transition(voice, call)
        assert decrypts(verdicts), verdicts
        assert voice.fake.voice.violations == []


async def test_the_bot_commits_no_add_for_a_user_outside_its_channel(
    live_simulator, icecast, caplog
):
    caplog.set_level(logging.WARNING, logger="onair.voice")
    async with voice_bot(live_simulator, icecast) as voice:
        guild, channel = voice.guild, voice.channels[voice.guild.id]
        call = await joined_with_a_listener(voice)
        await voice.fake.voice.propose_stranger(guild.id, STRANGER)
        # A user who is in the channel comes next: the bot commits that Add, and only it.
        await voice.fake.set_member_voice(guild, SECOND, channel)
        bot_channel = voice.env.bot.get_channel(channel)
        await wait_for(lambda: SECOND in getattr(bot_channel, "voice_states", {}))
        await voice.fake.voice.add_listener(guild.id, SECOND, channel)
        await wait_for(lambda: SECOND in call.welcomed, within=20)
        assert STRANGER not in call.welcomed
        assert call.welcomed == [LISTENER, SECOND]
        assert "DAVE proposals refused" in caplog.text
        verdicts = await judged_after_transition(voice, call)
        assert decrypts(verdicts), verdicts


async def test_a_listener_proposed_before_the_gateway_names_them_is_added_when_it_does(
    live_simulator, icecast, caplog
):
    """The voice server's op 27 Add for a joining listener can come before the main gateway's
    VOICE_STATE_UPDATE for them (a resuming shard replays it later): the bot refuses it then,
    and commits it once the gateway puts the listener in its channel. The bot is the only
    other member of the call, so without that commit the listener hears nothing."""
    caplog.set_level(logging.WARNING, logger="onair.voice")
    async with voice_bot(live_simulator, icecast) as voice:
        guild, channel = voice.guild, voice.channels[voice.guild.id]
        await voice.join()
        await voice.playing(frames=50)
        bot_channel = voice.env.bot.get_channel(channel)
        voice.fake.hold_voice_states()
        await voice.fake.set_member_voice(guild, SECOND, channel)
        await voice.fake.voice.add_listener(guild.id, SECOND, channel)
        await wait_for(lambda: "DAVE proposals refused" in caplog.text, within=20)
        assert SECOND not in getattr(bot_channel, "voice_states", {})
        call = voice.fake.voice.dave_call(guild.id)
        assert call.commits == 0
        assert call.welcomed == []
        await voice.fake.release_voice_states()
        await wait_for(lambda: len(call.executed) == 1, within=20)
        assert call.welcomed == [SECOND]
        verdicts = await judged_after_transition(voice, call)
        assert decrypts(verdicts), verdicts
        assert call.listeners[SECOND].decrypted >= FRAMES * 0.95
        assert voice.fake.voice.violations == []


async def test_upstream_the_bot_takes_the_new_key_at_commit_not_at_the_transition(
    live_simulator, icecast
):
    """Known, upstream (discord.py 2.7.1 with davey 0.1.7; see docs/features/voice.md): the bot
    encrypts with the new epoch's key once it processed the commit (op 29), before Discord
    executes the transition (op 22), so a member that takes the commit later cannot decrypt
    the bot's frames meanwhile. Should this test fail, upstream switches at op 22 now: correct
    the voice docs."""
    async with voice_bot(live_simulator, icecast) as voice:
        guild, channel = voice.guild, voice.channels[voice.guild.id]
        call = await joined_with_a_listener(voice)
        await judged_after_transition(voice, call)
        first = call.listeners[LISTENER]
        failed = first.failed
        call.held = True  # the listener is slow to take the next commit
        await voice.fake.set_member_voice(guild, SECOND, channel)
        bot_channel = voice.env.bot.get_channel(channel)
        await wait_for(lambda: SECOND in getattr(bot_channel, "voice_states", {}))
        await voice.fake.voice.add_listener(guild.id, SECOND, channel)
        await wait_for(lambda: bool(call.bot_ready), within=20)  # the bot took its commit (op 23)
        await wait_for(lambda: first.failed >= failed + 25, within=20)  # half a second lost
        assert len(call.executed) == 1  # and no transition was executed meanwhile
        await voice.fake.voice.release_commit(guild.id)
        assert len(call.executed) == 2
        verdicts = await judged_after_transition(voice, call)
        assert decrypts(verdicts), verdicts
