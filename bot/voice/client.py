"""discord.py's voice client, told why it closed.

discord.py 2.7.1 already handles the voice close codes itself (``VoiceConnectionState.
_poll_voice_ws``): 4015 (voice server crashed) resumes; 4014/4022 (disconnected, moved) waits
for a new voice server and reconnects, or disconnects when the main gateway said the bot left
the channel; 4006 (session no longer valid) and other codes reconnect from scratch with an
exponential backoff, for ever. What it does not do is come back after it gives up: a resume or
reconnect that times out, 4021 (rate limited), or a failed first handshake end in
``disconnect()`` and the player is gone. This client reports each final close to the voice
service with its cause, and the service rejoins with a backoff of its own, except after a
moderator's disconnect (or the channel's deletion): then the bot stays out.

Seen against the fake voice server: the 4015 resume sends op 4 for the channel the bot is in and
waits for both voice events, which do not both come while it is connected, so it times out after
the connect timeout; and after a 4006 reconnect the "left the channel" event stays set, so a
later 4014 is taken as final. Both end in ``disconnect()``, and the service's rejoin brings the
audio back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import discord
from discord.enums import SpeakingState
from discord.voice_state import VoiceConnectionState

from .dave import OnAirVoiceWebSocket
from .reader import OnAirConnectionState
from .transport import MODE, NONCE, RTP_HEADER, seal

if TYPE_CHECKING:
    from .sender import After, Lane, VoiceSender

_LOGGER = logging.getLogger("onair.voice")

Closed = Callable[["OnAirVoiceClient"], None]
Moved = Callable[["OnAirVoiceClient"], None]


class OnAirVoiceClient(discord.VoiceClient):
    """A :class:`discord.VoiceClient` that says why it closed (``leaving``: OnAir left;
    ``kicked``: Discord said the bot left the channel without OnAir asking), plays on the
    process's one :class:`~bot.voice.sender.VoiceSender` (``play_on``; ``stop``,
    ``is_playing`` and ``disconnect`` cover it as they cover discord.py's own player) and
    seals its packets with :func:`bot.voice.transport.seal` (discord.py's bytes, cheaper)."""

    on_closed: Closed | None = None
    on_moved: Moved | None = None

    def __init__(self, client: discord.Client, channel: discord.abc.Connectable) -> None:
        super().__init__(client, channel)
        self.leaving = False
        self.kicked = False
        self._reported = False
        self.lane: Lane | None = None
        self._key_list: object = None
        self._key = b""

    def create_connection_state(self) -> VoiceConnectionState:
        """discord.py's state with a UDP reader that does not spin on a closed socket."""
        return OnAirConnectionState(self)

    # Playing on the sender ---------------------------------------------------------------

    def play_on(
        self, sender: VoiceSender, station: str, source: discord.AudioSource, *, after: After | None
    ) -> Lane:
        """Play ``station`` (a slug) through ``sender`` (not a player thread of its own)."""
        if not self.is_connected():
            raise discord.ClientException("Not connected to voice.")
        if self.is_playing():
            raise discord.ClientException("Already playing audio.")
        self.lane = sender.play(self, station, source, after=after)
        return self.lane

    def is_playing(self) -> bool:
        lane = self.lane
        return super().is_playing() or (lane is not None and lane.playing)

    def stop(self) -> None:
        super().stop()
        lane, self.lane = self.lane, None
        if lane is not None:
            lane.stop()

    def speaking(self, on: bool) -> None:
        """Op 5 from any thread, as discord.py's player thread sends it."""
        state = SpeakingState.voice if on else SpeakingState.none
        try:
            asyncio.run_coroutine_threadsafe(self.ws.speak(state), self.client.loop)
        except Exception as error:  # not connected any more, or the loop is closed
            _LOGGER.debug("speaking update skipped: %s", type(error).__name__)

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None:
        """discord.py's ``send_audio_packet`` for Opus in the one transport mode Discord offers
        with it, without its three ``checked_add`` lookups per packet (same counters, same
        wrap: the sequence at 65535, the timestamp back to 0 past 2**32 - 1)."""
        if encode or self._connection.mode != MODE:
            super().send_audio_packet(data, encode=encode)
            return
        sequence = self.sequence + 1
        self.sequence = sequence if sequence <= 65535 else 0
        packet = self._get_voice_packet(data)
        # (discord.py logs a dropped packet at DEBUG; a full socket buffer drops it)
        with contextlib.suppress(OSError):
            self._connection.send_packet(packet)
        timestamp = self.timestamp + 960
        self.timestamp = timestamp if timestamp <= 4294967295 else 0

    def _get_voice_packet(self, data: bytes) -> bytes:
        """discord.py's packet (DAVE, then the RTP header and transport encryption), with the
        key kept as bytes and libsodium called directly; other modes as discord.py does."""
        connection = self._connection
        if connection.mode != MODE:
            return bytes(super()._get_voice_packet(data))
        dave = connection.dave_session
        payload = dave.encrypt_opus(data) if dave and connection.can_encrypt else data
        header = RTP_HEADER.pack(0x80, 0x78, self.sequence, self.timestamp, self.ssrc)
        key = connection.secret_key
        if key is not self._key_list:
            self._key_list, self._key = key, bytes(key)
        counter = self._incr_nonce
        nonce = NONCE.pack(counter)
        self._incr_nonce = counter + 1 if counter < 4294967295 else 0
        return header + seal(self._key, header, bytes(payload), nonce) + nonce

    async def on_voice_state_update(self, data: Any) -> None:
        before = getattr(self.channel, "id", None)
        # discord.py marks the leaves it starts itself (reconnects, give-ups) as expected; one
        # it did not expect came from outside: a moderator or a deleted channel.
        expected = getattr(self._connection, "_expecting_disconnect", False)
        if data.get("channel_id") is None and not self.leaving and not expected:
            self.kicked = True
        await super().on_voice_state_update(data)
        after = getattr(self.channel, "id", None)
        if after is not None and after != before and self.on_moved is not None:
            self.on_moved(self)

    async def member_arrived(self, user_id: int) -> None:
        """The main gateway put ``user_id`` in this client's channel (DAVE proposals kept)."""
        ws = getattr(self._connection, "ws", None)
        if isinstance(ws, OnAirVoiceWebSocket):
            await ws.member_arrived(user_id)

    def drop(self) -> None:
        """Let go of this connection here, whatever Discord said (a stop past its budget): the
        audio stops and discord.py forgets it, so its own close does not wait on it again."""
        self.stop()
        self.cleanup()

    def cleanup(self) -> None:
        super().cleanup()
        if not self._reported:
            self._reported = True
            if self.on_closed is not None:
                self.on_closed(self)


def voice_client_class(on_closed: Closed, on_moved: Moved) -> type[OnAirVoiceClient]:
    """A client class reporting to one service (discord.py builds ``cls(client, channel)``)."""
    return type(
        "BoundVoiceClient",
        (OnAirVoiceClient,),
        {"on_closed": staticmethod(on_closed), "on_moved": staticmethod(on_moved)},
    )
