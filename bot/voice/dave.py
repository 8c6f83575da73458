"""DAVE (Discord's end-to-end voice encryption) proposals taken only for people in the channel.

The voice server proposes each new member of a call's MLS group (op 27) and a member commits
the Add, which lets the new member decrypt the call. discord.py 2.7.1 passes no
``expected_user_ids`` to davey's ``process_proposals``, so the bot would commit an Add for any
user the voice server names. OnAir knows who is in its voice channel from the main gateway's
voice states (an independent source): :class:`OnAirVoiceWebSocket` passes those users, and
davey refuses a proposal that adds anyone else (nothing is committed; the connection goes on).
"""

from __future__ import annotations

import logging
import struct

import davey
from discord.gateway import DiscordVoiceWebSocket
from discord.voice_state import VoiceConnectionState

_LOGGER = logging.getLogger("onair.voice")

APPEND = 0  # op 27's operation type (1: revoke)


def expected_user_ids(state: VoiceConnectionState) -> list[int]:
    """Everyone in the bot's voice channel but the bot, as the main gateway's voice states say."""
    channel = state.voice_client.channel
    me = state.voice_client.user.id
    voice_states = getattr(channel, "voice_states", {})
    return [user_id for user_id in voice_states if user_id != me]


class OnAirVoiceWebSocket(DiscordVoiceWebSocket):
    """discord.py's voice websocket whose op 27 (MLS proposals) names the users expected in
    the call; every other message is discord.py's."""

    async def received_binary_message(self, msg: bytes) -> None:
        state = self._connection
        if len(msg) < 4 or msg[2] != self.MLS_PROPOSALS or state.dave_session is None:
            await super().received_binary_message(msg)
            return
        self.seq_ack = struct.unpack_from(">H", msg, 0)[0]
        append = msg[3] == APPEND
        operation = (
            davey.ProposalsOperationType.append if append else davey.ProposalsOperationType.revoke
        )
        expected = expected_user_ids(state) if append else None
        try:
            result = state.dave_session.process_proposals(operation, msg[4:], expected)
        except Exception as error:  # an unexpected user, or proposals davey cannot read
            _LOGGER.warning(
                "DAVE proposals refused in guild %s: %s", state.guild.id, str(error)[:200]
            )
            return
        if isinstance(result, davey.CommitWelcome):
            welcome = result.welcome or b""
            await self.send_binary(self.MLS_COMMIT_WELCOME, result.commit + welcome)
