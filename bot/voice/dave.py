"""DAVE (Discord's end-to-end voice encryption) proposals taken only for people in the channel.

The voice server proposes each new member of a call's MLS group (op 27) and a member commits
the Add, which lets the new member decrypt the call. discord.py 2.7.1 passes no
``expected_user_ids`` to davey's ``process_proposals``, so the bot would commit an Add for any
user the voice server names. OnAir knows who is in its voice channel from the main gateway's
voice states (an independent source): :class:`OnAirVoiceWebSocket` passes those users, and
davey refuses a proposal that adds anyone else (nothing is committed; the connection goes on).

Nothing orders the two connections: the voice server can propose a listener before the main
gateway's VOICE_STATE_UPDATE puts them in the channel (a resuming shard replays voice states
later). A proposal refused only for such a user is kept a short while (:class:`RefusedProposals`)
and processed again, with the gateway's users of that moment, when that user's voice state
arrives in the bot's channel. davey 0.1.7 leaves the session's epoch as it was after a refusal
and keys proposals by reference, so processing the same op 27 again is sound; one for an epoch
that has moved on is refused by davey and dropped.
"""

from __future__ import annotations

import logging
import re
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import davey
from discord.gateway import DiscordVoiceWebSocket
from discord.voice_state import VoiceConnectionState

from .discovery import discover_ip

_LOGGER = logging.getLogger("onair.voice")

APPEND = 0  # op 27's operation type (1: revoke)
KEPT_LIMIT = 4  # refused proposals kept per connection (the oldest goes first)
KEPT_SECONDS = 20.0  # how long one waits for its user's voice state
_UNEXPECTED_USER = re.compile(r"UnexpectedUser\((\d{1,20})\)")


def expected_user_ids(state: VoiceConnectionState) -> list[int]:
    """Everyone in the bot's voice channel but the bot, as the main gateway's voice states say."""
    channel = state.voice_client.channel
    me = state.voice_client.user.id
    voice_states = getattr(channel, "voice_states", {})
    return [user_id for user_id in voice_states if user_id != me]


def unexpected_user(error: Exception) -> int | None:
    """The user davey refused proposals for as not expected, or None for any other refusal."""
    found = _UNEXPECTED_USER.search(str(error)[:200])
    return int(found.group(1)) if found else None


@dataclass(frozen=True)
class KeptProposals:
    """An op 27 append refused because ``user_id`` was not in the channel yet."""

    payload: bytes
    user_id: int
    kept_at: float


class RefusedProposals:
    """Op 27 appends refused only for a user the gateway has not put in the channel yet: at most
    ``limit``, each for ``keep_for`` seconds (a voice server naming strangers fills nothing)."""

    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        limit: int = KEPT_LIMIT,
        keep_for: float = KEPT_SECONDS,
    ) -> None:
        self._clock = clock
        self._limit = limit
        self._keep_for = keep_for
        self._kept: list[KeptProposals] = []

    def __len__(self) -> int:
        return len(self._kept)

    def keep(self, payload: bytes, user_id: int, kept_at: float | None = None) -> None:
        """Keep ``payload`` until ``user_id`` arrives (``kept_at``: when first refused)."""
        since = self._clock() if kept_at is None else kept_at
        self._kept.append(KeptProposals(payload, user_id, since))
        del self._kept[: max(0, len(self._kept) - self._limit)]

    def take_for(self, user_id: int) -> list[KeptProposals]:
        """The unexpired proposals waiting for ``user_id``, no longer kept; expired ones go."""
        now = self._clock()
        live = [kept for kept in self._kept if now - kept.kept_at <= self._keep_for]
        taken = [kept for kept in live if kept.user_id == user_id]
        self._kept = [kept for kept in live if kept.user_id != user_id]
        return taken

    def clear(self) -> None:
        self._kept.clear()


class OnAirVoiceWebSocket(DiscordVoiceWebSocket):
    """discord.py's voice websocket whose op 27 (MLS proposals) names the users expected in
    the call and whose IP discovery cannot hang (``bot.voice.discovery``); every other message
    is discord.py's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.refused_proposals = RefusedProposals()

    async def discover_ip(self) -> tuple[str, int]:
        return await discover_ip(self._connection, self.loop)

    async def received_binary_message(self, msg: bytes) -> None:
        state = self._connection
        if len(msg) < 4 or msg[2] != self.MLS_PROPOSALS or state.dave_session is None:
            await super().received_binary_message(msg)
            return
        self.seq_ack = struct.unpack_from(">H", msg, 0)[0]
        if msg[3] != APPEND:
            self.refused_proposals.clear()  # revoked: nothing kept may be committed any more
            await self._process(davey.ProposalsOperationType.revoke, msg[4:])
            return
        await self._process(davey.ProposalsOperationType.append, msg[4:])

    async def member_arrived(self, user_id: int) -> None:
        """The main gateway put ``user_id`` in the bot's channel: proposals refused for them
        are processed again, checked against the channel's users as they are now."""
        if self.ws.closed:  # the connection is gone, and its group with it
            self.refused_proposals.clear()
            return
        for kept in self.refused_proposals.take_for(user_id):
            await self._process(davey.ProposalsOperationType.append, kept.payload, kept.kept_at)

    async def _process(
        self,
        operation: davey.ProposalsOperationType,
        payload: bytes,
        kept_at: float | None = None,
    ) -> None:
        state = self._connection
        session = state.dave_session
        if session is None:
            return
        append = operation == davey.ProposalsOperationType.append
        expected = expected_user_ids(state) if append else None
        try:
            result = session.process_proposals(operation, payload, expected)
        except Exception as error:  # an unexpected user, or proposals davey cannot read
            waiting_for = unexpected_user(error) if append else None
            if waiting_for is not None:
                self.refused_proposals.keep(payload, waiting_for, kept_at)
            _LOGGER.warning(
                "DAVE proposals refused in guild %s: %s%s",
                state.guild.id,
                str(error)[:200],
                " (kept until that user is in the channel)" if waiting_for is not None else "",
            )
            return
        if isinstance(result, davey.CommitWelcome):
            welcome = result.welcome or b""
            await self.send_binary(self.MLS_COMMIT_WELCOME, result.commit + welcome)
