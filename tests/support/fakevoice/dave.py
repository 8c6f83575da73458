"""Discord's part in DAVE: the voice gateway as the MLS external sender of each call, and the
call's other members (DAVE listeners: ``davey`` sessions of their own) that decrypt every frame
the bot sends.

A call forms its group as Discord's does: each pending member sends a key package; the gateway
sends its external sender (op 25) and the users connected to the call (op 11), proposes an Add
signed by itself (op 27, to every member); a member commits (op 28: commit and welcome); the
gateway announces the commit with a transition id (op 29) to the members and hands the welcome
(op 30) to the new one; each answers ready (op 23); the gateway executes the transition (op 22).
The bot's key package (op 26) starts a group with it as the first member when none exists, or
is added to the listeners' group (its old leaf removed) when one does (a reconnect).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import davey

from .mls import ExternalSender, add, remove, split_commit_welcome
from .protocol import Expected, Session

_LOGGER = logging.getLogger(__name__)

CLIENTS_CONNECT, EXECUTE_TRANSITION, TRANSITION_READY = 11, 22, 23
EXTERNAL_SENDER, PROPOSALS, COMMIT_WELCOME, ANNOUNCE_COMMIT, WELCOME = 25, 27, 28, 29, 30
INVALID_COMMIT_WELCOME = 31
APPEND = davey.ProposalsOperationType.append

OPUS, PLAIN, FAILED = "opus", "plain", "failed"  # what the listeners made of an audio frame


@dataclass(eq=False)
class Listener:
    """Another member of the call: a DAVE session of its own, decrypting the bot's frames."""

    user_id: int
    session: davey.DaveSession = field(repr=False)
    member: bool = False  # welcomed into the group
    decrypted: int = 0  # the bot's DAVE frames it decrypted to Opus
    failed: int = 0  # the bot's DAVE frames it could not decrypt


@dataclass(eq=False)
class DaveCall:
    """One guild's call as the voice gateway sees it. Listener sessions are used by the event
    loop (MLS messages) and the UDP thread (frames): always under ``lock``."""

    channel_id: int  # the MLS group id
    listeners: dict[int, Listener] = field(default_factory=dict)
    strangers: dict[int, Listener] = field(default_factory=dict)  # proposed, not in the call
    bot_id: int = 0
    bot_leaf: int | None = None  # the bot's leaf in the group, as the gateway tracks it
    leaves: list[int | None] = field(default_factory=list)  # user id per leaf index
    epoch: int = 0  # the group's, as the gateway tracks it
    pending: dict[int, float] = field(default_factory=dict)  # transition id → when announced
    executed: list[float] = field(default_factory=list)  # when each op 22 went out (monotonic)
    commits: int = 0  # op 28 taken from the bot
    welcomed: list[int] = field(default_factory=list)  # users a welcome let into the group
    refused_commits: int = 0  # op 28 for an epoch already committed (Discord drops it)
    held: bool = False  # the members take the next commit only on release_commit()
    deferred: tuple[bytes, bytes | None] | None = field(default=None, repr=False)
    bot_ready: set[int] = field(default_factory=set)  # transitions the bot sent op 23 for
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def established(self) -> bool:
        return any(listener.member for listener in self.listeners.values())

    def members(self) -> list[Listener]:
        return [listener for listener in self.listeners.values() if listener.member]

    def decrypt(self, frame: bytes) -> str:
        """What the member listeners make of one of the bot's audio frames (UDP thread):
        ``OPUS`` when each decrypted it, ``FAILED`` when one could not, ``PLAIN`` when it
        carries no DAVE at all."""
        if not frame.endswith(b"\xfa\xfa"):
            return PLAIN
        verdict = OPUS
        with self.lock:
            for listener in self.members():
                try:
                    listener.session.decrypt(self.bot_id, davey.MediaType.audio, frame)
                except Exception:
                    listener.failed += 1
                    verdict = FAILED
                else:
                    listener.decrypted += 1
            if not self.members():
                verdict = FAILED
        return verdict

    def seat(self, user_id: int, leaf: int) -> None:
        """Record ``user_id`` at ``leaf`` of the gateway's view of the tree."""
        self.leaves += [None] * (leaf + 1 - len(self.leaves))
        self.leaves[leaf] = user_id

    def next_leaf(self) -> int:
        """Where an Add puts its member: the leftmost blank leaf, else a new one (RFC 9420)."""
        return next((i for i, user in enumerate(self.leaves) if user is None), len(self.leaves))


class DaveSide:
    """The DAVE half of ``FakeVoiceServer`` (its websocket side: events on the loop)."""

    # Set by FakeVoiceServer.
    _sessions: dict[int, Session]
    _expected: dict[int, Expected]
    _external: ExternalSender
    dave_calls: dict[int, DaveCall]
    violations: list[str]
    _transition_ids: itertools.count[int]

    async def _send(self, session: Session, op: int, data: Any, *, seq: bool = True) -> None:
        raise NotImplementedError

    async def send_binary(self, guild_id: int, op: int, payload: bytes) -> None:
        raise NotImplementedError

    def connected(self, guild_id: int) -> bool:
        raise NotImplementedError

    # What tests call --------------------------------------------------------------------------

    async def add_listener(self, guild_id: int, user_id: int, channel_id: int) -> Listener:
        """A DAVE member joins the call in ``channel_id`` (put the user in that voice channel
        with ``set_member_voice`` too, as Discord has it there). With the bot in the call, it is
        proposed at once; otherwise when the bot's key package comes."""
        call = self.dave_calls.setdefault(guild_id, DaveCall(channel_id))
        listener = Listener(user_id, self._dave_session(user_id, call.channel_id))
        call.listeners[user_id] = listener
        session = self._sessions.get(guild_id)
        expected = self._expected.get(guild_id)
        if (
            session is not None
            and expected is not None
            and self.connected(guild_id)
            and session.dave_key_package
        ):
            await self._send(session, CLIENTS_CONNECT, {"user_ids": [str(user_id)]})
            if not call.established:  # the bot played alone: the group forms with it first
                call.bot_id, call.epoch, call.leaves, call.bot_leaf = expected.user_id, 0, [], 0
                call.seat(expected.user_id, 0)
            package = listener.session.get_serialized_key_package()
            await self._propose(guild_id, call, [add(package)])
        return listener

    async def propose_stranger(self, guild_id: int, user_id: int) -> None:
        """Propose adding a user who is not in the call (a voice server gone wrong): every
        member must refuse to commit it (DAVE: unexpected user)."""
        call = self.dave_calls[guild_id]
        stranger = Listener(user_id, self._dave_session(user_id, call.channel_id))
        call.strangers[user_id] = stranger
        await self._propose(guild_id, call, [add(stranger.session.get_serialized_key_package())])

    def dave_call(self, guild_id: int) -> DaveCall:
        return self.dave_calls[guild_id]

    # The bot's messages -----------------------------------------------------------------------

    def _dave_session(self, user_id: int, channel_id: int) -> davey.DaveSession:
        session = davey.DaveSession(1, user_id, channel_id)
        session.set_external_sender(self._external.package)
        return session

    async def _dave_key_package(self, session: Session, user_id: int, package: bytes) -> None:
        """op 26: the external sender first (discord.py has its DAVE session by now), then the
        bot into the call's group (a new one with the bot first, or the listeners')."""
        guild_id = session.guild_id
        session.dave_key_package = package
        await self.send_binary(guild_id, EXTERNAL_SENDER, self._external.package)
        call = self.dave_calls.get(guild_id)
        if call is None or not call.listeners:
            return
        call.bot_id = user_id
        await self._send(session, CLIENTS_CONNECT, {"user_ids": [str(u) for u in call.listeners]})
        if not call.established:
            call.epoch, call.leaves, call.bot_leaf = 0, [user_id], 0
            pending = [
                add(li.session.get_serialized_key_package()) for li in call.listeners.values()
            ]
            await self._propose(guild_id, call, pending)
            return
        # A group without the bot (it reconnected): a member commits its removal and re-add.
        proposals = [add(package)]
        if call.bot_leaf is not None:
            proposals.insert(0, remove(call.bot_leaf))
            call.leaves[call.bot_leaf] = None
        results = await self._propose(guild_id, call, proposals, to_bot=False)
        if not results:
            self.violations.append("no DAVE member committed the bot's re-add")
            return
        commit, welcome = results[0].commit, results[0].welcome
        with call.lock:
            for member in call.members():
                member.session.process_commit(commit)
            call.epoch = call.members()[0].session.epoch or 0
        call.bot_leaf = call.next_leaf()
        call.seat(user_id, call.bot_leaf)
        transition = self._announce(call)
        assert welcome is not None
        await self.send_binary(guild_id, WELCOME, transition.to_bytes(2, "big") + welcome)

    async def _dave_commit(self, session: Session, data: bytes) -> None:
        """op 28 from the bot: the first commit of an epoch wins; announced to the bot (op 29),
        taken by the members, its welcome by whoever it adds."""
        guild_id = session.guild_id
        call = self.dave_calls.get(guild_id)
        if call is None:
            self.violations.append("op 28 without a DAVE call")
            return
        try:
            commit, welcome = split_commit_welcome(data)
        except (ValueError, IndexError):
            self.violations.append("op 28 that is no MLS commit")
            return
        if call.pending:
            call.refused_commits += 1  # a transition is under way: this epoch has its commit
            return
        call.commits += 1
        if call.held:
            call.deferred = (commit, welcome)  # the members take it on release_commit()
        else:
            self._take_commit(call, commit, welcome)
        transition = self._announce(call)
        await self.send_binary(guild_id, ANNOUNCE_COMMIT, transition.to_bytes(2, "big") + commit)

    def _take_commit(self, call: DaveCall, commit: bytes, welcome: bytes | None) -> None:
        """The member listeners take the commit; whoever it adds takes the welcome."""
        with call.lock:
            for member in call.members():
                member.session.process_commit(commit)
            joining = [li for li in call.listeners.values() if not li.member]
            for joiner in [*joining, *call.strangers.values()]:
                if welcome is None:
                    break
                with contextlib.suppress(Exception):  # a welcome not meant for it
                    joiner.session.process_welcome(welcome)
                    joiner.member = joiner.user_id in call.listeners
                    call.welcomed.append(joiner.user_id)
                    call.seat(joiner.user_id, joiner.session.own_leaf_index or 0)
            members = call.members()
            call.epoch = (members[0].session.epoch or 0) if members else call.epoch + 1

    async def release_commit(self, guild_id: int) -> None:
        """The held commit reaches the members now (they were slow); a transition the bot is
        ready for is executed."""
        call = self.dave_calls[guild_id]
        call.held = False
        if call.deferred is not None:
            commit, welcome = call.deferred
            call.deferred = None
            self._take_commit(call, commit, welcome)
        await self._execute_ready(self._sessions[guild_id], call)

    async def _dave_ready(self, session: Session, data: Any) -> None:
        """op 23: the bot is ready for the transition; once every listener is too (they are at
        once unless a commit is held), it is executed (op 22)."""
        call = self.dave_calls.get(session.guild_id)
        transition = data.get("transition_id") if isinstance(data, dict) else None
        if call is None or transition not in call.pending:
            self.violations.append(f"op 23 for no pending transition ({transition!r})")
            return
        call.bot_ready.add(transition)
        await self._execute_ready(session, call)

    async def _execute_ready(self, session: Session, call: DaveCall) -> None:
        if call.deferred is not None:
            return  # a member has not taken the commit yet
        for transition in sorted(call.bot_ready & set(call.pending)):
            del call.pending[transition]
            call.bot_ready.discard(transition)
            await self._send(session, EXECUTE_TRANSITION, {"transition_id": transition})
            call.executed.append(time.monotonic())

    def _announce(self, call: DaveCall) -> int:
        transition = next(self._transition_ids)
        call.pending[transition] = time.monotonic()
        return transition

    async def _propose(
        self, guild_id: int, call: DaveCall, proposals: list[bytes], *, to_bot: bool = True
    ) -> list[davey.CommitWelcome]:
        """op 27 to the bot (when it is in the group, or forming it) and the same proposals to
        every member listener (a member without them cannot take the commit)."""
        payload = self._external.proposals(call.channel_id, call.epoch, proposals)
        results: list[davey.CommitWelcome] = []
        with call.lock:
            for member in call.members():
                result = member.session.process_proposals(APPEND, payload[1:])
                if isinstance(result, davey.CommitWelcome):
                    results.append(result)
        if to_bot:
            await self.send_binary(guild_id, PROPOSALS, payload)
        return results
