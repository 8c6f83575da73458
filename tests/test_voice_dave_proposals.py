"""DAVE proposals refused for a user the gateway has not put in the channel yet: what davey
does with a refusal (the retry relies on it) and how long, and how many, OnAir keeps them."""

from __future__ import annotations

import davey
import pytest

from bot.voice.dave import RefusedProposals, unexpected_user

from .support.fakevoice.mls import ExternalSender, add

APPEND = davey.ProposalsOperationType.append
CHANNEL = 42
BOT, FIRST, LATE, STRANGER = 1, 11, 12, 13


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def session(user_id: int, sender: ExternalSender) -> davey.DaveSession:
    dave = davey.DaveSession(1, user_id, CHANNEL)
    dave.set_external_sender(sender.package)
    return dave


def test_upstream_a_refused_append_leaves_the_group_as_it_was_and_processes_again():
    """davey 0.1.7: refusing an op 27 for an unexpected user moves no epoch, and the same op 27
    processed again once the user is expected gives a commit the members and the new member
    take (proposals are kept by reference: the Adds before the refused one are not doubled).
    Should this fail, a kept proposal cannot be processed again: revisit bot/voice/dave.py."""
    sender = ExternalSender()
    bot, first = session(BOT, sender), session(FIRST, sender)
    bot.get_serialized_key_package()
    forming = sender.proposals(CHANNEL, 0, [add(first.get_serialized_key_package())])
    formed = bot.process_proposals(APPEND, forming[1:], [FIRST])
    assert isinstance(formed, davey.CommitWelcome)
    assert formed.welcome is not None
    first.process_welcome(formed.welcome)
    bot.process_commit(formed.commit)
    late, stranger = session(LATE, sender), session(STRANGER, sender)
    joining = [add(late.get_serialized_key_package()), add(stranger.get_serialized_key_package())]
    payload = sender.proposals(CHANNEL, bot.epoch or 0, joining)[1:]
    first.process_proposals(APPEND, payload)
    with pytest.raises(ValueError, match="UnexpectedUser") as refused:
        bot.process_proposals(APPEND, payload, [FIRST, LATE])
    assert unexpected_user(refused.value) == STRANGER
    assert bot.epoch == 1
    assert bot.status == davey.SessionStatus.active
    again = bot.process_proposals(APPEND, payload, [FIRST, LATE, STRANGER])
    assert isinstance(again, davey.CommitWelcome)
    assert again.welcome is not None
    first.process_commit(again.commit)
    late.process_welcome(again.welcome)
    stranger.process_welcome(again.welcome)
    bot.process_commit(again.commit)
    frame = bot.encrypt_opus(b"\xfc" + bytes(40))
    for member in (first, late, stranger):
        assert member.decrypt(BOT, davey.MediaType.audio, frame) == b"\xfc" + bytes(40)


def test_unexpected_user_is_read_from_daveys_refusal_only():
    assert unexpected_user(ValueError("Failed to process proposals: UnexpectedUser(42)")) == 42
    assert unexpected_user(ValueError("Failed to process proposals: WrongEpoch")) is None


def test_kept_proposals_wait_for_their_own_user_only():
    kept = RefusedProposals(clock=Clock())
    kept.keep(b"late", LATE)
    kept.keep(b"stranger", STRANGER)
    assert [k.payload for k in kept.take_for(LATE)] == [b"late"]
    assert kept.take_for(LATE) == []  # taken once
    assert len(kept) == 1  # the stranger's still waits


def test_kept_proposals_expire():
    clock = Clock()
    kept = RefusedProposals(clock=clock, keep_for=20.0)
    kept.keep(b"late", LATE)
    clock.now += 20.5
    assert kept.take_for(LATE) == []
    assert len(kept) == 0


def test_proposals_kept_again_keep_their_first_time():
    """A proposal refused again (another user of its batch is missing) expires as first kept."""
    clock = Clock()
    kept = RefusedProposals(clock=clock, keep_for=20.0)
    kept.keep(b"batch", LATE)
    clock.now += 15
    (first,) = kept.take_for(LATE)
    kept.keep(first.payload, STRANGER, first.kept_at)
    clock.now += 6
    assert kept.take_for(STRANGER) == []


def test_at_most_a_few_proposals_are_kept_the_oldest_dropped():
    kept = RefusedProposals(clock=Clock(), limit=4)
    for user in range(100, 110):
        kept.keep(bytes([user]), user)
    assert len(kept) == 4
    assert kept.take_for(105) == []
    assert [k.payload for k in kept.take_for(109)] == [bytes([109])]
