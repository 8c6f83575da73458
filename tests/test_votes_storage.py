"""Song votes in storage, on SQLite and on PostgreSQL: one claim per slot, each step leased to
one caller, closed once (whoever closes asks for the winner), a purge takes them."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime

from bot.storage import SongVote, VotePoll
from bot.storage.votes import CLOSED, CLOSING, OPEN, OPENING

POLL = VotePoll("vote|1|600", 1, 10, "main", 600.0, 1200.0, (("7", "A - B"), ("8", "C - D")))


async def test_a_schedule_is_saved_replaced_and_removed(storage):
    await storage.save_song_vote(SongVote(1, 10, "main", 1800.0, 600.0, 5.0))
    await storage.save_song_vote(SongVote(1, 11, "main", 3600.0, 300.0, 6.0))
    assert await storage.song_votes() == [SongVote(1, 11, "main", 3600.0, 300.0, 6.0)]
    assert await storage.remove_song_vote(1)
    assert await storage.song_votes(1) == []


async def test_a_slot_is_claimed_once_however_many_ask(storage):
    claims = await asyncio.gather(
        *(storage.claim_vote_poll(POLL, owner=f"p{i}", lease_until=700, now=600) for i in range(10))
    )
    assert claims.count(True) == 1
    (stored,) = await storage.vote_polls(1)
    assert stored.answers == POLL.answers
    assert stored.state == OPENING


async def test_each_step_is_leased_to_one_and_closed_once(storage):
    assert await storage.claim_vote_poll(POLL, owner="a", lease_until=700, now=600)
    assert not await storage.vote_poll_opened(POLL.key, "b", 99, now=601)  # not b's lease
    assert await storage.vote_poll_opened(POLL.key, "a", 99, now=601)
    assert await storage.due_vote_polls(1100) == []  # open, not yet ended
    (due,) = await storage.due_vote_polls(1200)
    assert (due.state, due.message_id) == (OPEN, 99)
    taken = await asyncio.gather(
        *(
            storage.take_vote_poll(POLL.key, (OPEN,), owner=f"p{i}", lease_until=1260, now=1200)
            for i in range(10)
        )
    )
    winners = [t for t in taken if t is not None]
    assert len(winners) == 1
    assert winners[0].state == CLOSING
    assert await storage.due_vote_polls(1230) == []  # leased
    owner = next(f"p{i}" for i, t in enumerate(taken) if t is not None)
    closes = await asyncio.gather(
        storage.vote_poll_closed(POLL.key, owner, "won:1", now=1201),
        storage.vote_poll_closed(POLL.key, owner, "won:1", now=1201),
    )
    assert sorted(closes) == [False, True]
    assert (await storage.vote_polls(1))[0].state == CLOSED
    assert await storage.due_vote_polls(5000) == []


async def test_a_lapsed_lease_is_taken_up_and_a_purge_takes_everything(storage):
    assert await storage.claim_vote_poll(POLL, owner="dead", lease_until=700, now=600)
    assert await storage.due_vote_polls(650) == []
    (due,) = await storage.due_vote_polls(701)  # the poster died: another takes it up
    assert due.state == OPENING
    await storage.save_song_vote(SongVote(1, 10, "main", 1800.0, 600.0, 5.0))
    await storage.purge_guild(1)
    assert await storage.vote_polls(1) == []
    assert await storage.song_votes() == []


async def test_the_six_hourly_prune_forgets_long_closed_vote_polls(storage):
    """The history prune (every six hours) drops closed polls past the history's days, one
    row per guild per slot; a poll not closed yet is kept however old."""
    assert await storage.claim_vote_poll(POLL, owner="p", lease_until=700, now=600)
    assert await storage.vote_poll_closed(POLL.key, "p", "won:0", now=1300)
    running = dataclasses.replace(POLL, key="vote|1|99")
    assert await storage.claim_vote_poll(running, owner="q", lease_until=700, now=600)
    await storage.prune(30, datetime.fromtimestamp(POLL.ends_at + 400 * 86400, UTC))
    assert [p.key for p in await storage.vote_polls(1)] == ["vote|1|99"]


async def test_a_guilds_unclosed_poll_is_found_until_it_is_closed(storage):
    """What keeps a guild to one poll at a time: its poll being posted, running or awaiting
    its count; none once closed, and none of another guild."""
    assert await storage.unclosed_vote_poll(1) is None
    assert await storage.claim_vote_poll(POLL, owner="p", lease_until=700, now=600)
    assert (await storage.unclosed_vote_poll(1)).key == POLL.key  # type: ignore[union-attr]
    assert await storage.unclosed_vote_poll(2) is None
    assert await storage.vote_poll_opened(POLL.key, "p", 55, now=601)
    assert (await storage.unclosed_vote_poll(1)).state == OPEN  # type: ignore[union-attr]
    assert await storage.take_vote_poll(POLL.key, (OPEN,), owner="p", lease_until=1300, now=1201)
    assert await storage.vote_poll_closed(POLL.key, "p", "empty", now=1202)
    assert await storage.unclosed_vote_poll(1) is None


async def test_a_schedule_is_paused_in_its_channel_once_and_saving_it_resumes_it(storage):
    """A pause names the channel its poll was refused in: votes moved to another channel
    meanwhile are not paused; saving the schedule again (/onair vote) clears the reason."""
    await storage.save_song_vote(SongVote(1, 10, "main", 1800.0, 600.0, 5.0))
    assert not await storage.pause_song_vote(1, 99, "the channel no longer exists")
    assert await storage.pause_song_vote(1, 10, "the channel no longer exists")
    assert not await storage.pause_song_vote(1, 10, "a later reason")  # the first one kept
    (paused,) = await storage.song_votes(1)
    assert paused.paused_reason == "the channel no longer exists"
    await storage.save_song_vote(dataclasses.replace(paused, paused_reason=None))
    assert (await storage.song_votes(1))[0].paused_reason is None
