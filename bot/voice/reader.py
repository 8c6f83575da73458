"""discord.py's UDP reader thread, without its busy loop on a closed socket and without
``select()``'s limit of 1,024 file descriptors.

Each voice connection of discord.py 2.7.1 has a reader thread that ``select()``s on the UDP
socket. While a connection reconnects, or after a connect that timed out, the socket can be
closed (or not made yet) while the reader runs: ``select()`` raises at once, the reader logs at
DEBUG and tries again at once, for as long as that lasts: a few such readers take the GIL from
the event loop, the other connections and the sender, so one guild's reconnect delays every
other guild. :class:`CalmSocketReader` does what discord.py's does, and waits ``SELECT_RETRY``
seconds after such an error; a connection state builds it in place of discord.py's
(``OnAirConnectionState``).

It waits with ``poll()``, not ``select()``: ``select()`` takes no file descriptor past 1,023
(FD_SETSIZE) and raises ValueError for one. A process with about 500 voice connections (a
websocket and a UDP socket each) is past that, so every later connection's reader would fail,
its IP discovery never get its answer and its join time out. ``poll()`` has no such limit (what
``bench.voice`` measured: docs/features/voice.md)."""

from __future__ import annotations

import logging
import select

import discord
from discord.gateway import DiscordVoiceWebSocket
from discord.utils import MISSING
from discord.voice_state import ConnectionFlowState, SocketReader, VoiceConnectionState

from .dave import OnAirVoiceWebSocket

_LOGGER = logging.getLogger("onair.voice")

SELECT_RETRY = 0.1  # seconds: a closed socket is looked at again ten times a second, not always
POLL_MS = 30_000  # discord.py's select() timeout


class CalmSocketReader(SocketReader):
    """discord.py's ``SocketReader._do_run`` with ``poll()`` and a wait after a failed one."""

    select_errors = 0

    def _do_run(self) -> None:
        while not self._end.is_set():
            if not self._running.is_set():
                self._running.wait()
                continue
            try:
                poller = select.poll()
                poller.register(self.state.socket, select.POLLIN)
                events = poller.poll(POLL_MS)
            except (ValueError, TypeError, AttributeError, OSError):
                events = [(-1, select.POLLNVAL)]
            if any(mask & select.POLLNVAL for _, mask in events):
                # The socket is closed or not made yet (a reconnect): look again in a moment.
                self.select_errors += 1
                self._end.wait(SELECT_RETRY)
                continue
            if not events:
                continue
            try:
                data = self.state.socket.recv(2048)
            except OSError:
                continue
            for callback in list(self._callbacks):
                try:
                    callback(data)
                except Exception:
                    _LOGGER.debug("a voice socket callback failed", exc_info=True)


class OnAirConnectionState(VoiceConnectionState):
    """discord.py's connection state with a :class:`CalmSocketReader` and a voice websocket
    that commits DAVE Adds only for users in the channel (:class:`OnAirVoiceWebSocket`)."""

    def __init__(self, voice_client: discord.VoiceClient) -> None:
        super().__init__(voice_client)
        started = self._socket_reader  # discord.py's, started paused in its __init__: ended
        started.stop()
        self._socket_reader = CalmSocketReader(self)
        self._socket_reader.start()

    async def _connect_websocket(self, resume: bool) -> DiscordVoiceWebSocket:
        """discord.py 2.7.1's, with OnAir's websocket class (it names no class to replace)."""
        seq_ack = -1 if self.ws is MISSING else self.ws.seq_ack
        ws = await OnAirVoiceWebSocket.from_connection_state(
            self, resume=resume, hook=self.hook, seq_ack=seq_ack
        )
        self.state = ConnectionFlowState.websocket_connected
        return ws
