"""discord.py's UDP reader thread, without its busy loop on a closed socket (issue 26).

Each voice connection of discord.py 2.7.1 has a reader thread that ``select()``s on the UDP
socket. While a connection reconnects, or after a connect that timed out, the socket can be
closed (or not made yet) while the reader runs: ``select()`` raises at once, the reader logs at
DEBUG and tries again at once, for as long as that lasts. Measured with 1,000 guilds joining
(``bench.voice``), a few such readers took the GIL from the event loop, the other connections
and the sender: one guild's reconnect delayed every other guild. :class:`CalmSocketReader` does
what discord.py's does, and waits ``SELECT_RETRY`` seconds after such an error; a connection
state builds it in place of discord.py's (``OnAirConnectionState``)."""

from __future__ import annotations

import logging
import select

import discord
from discord.voice_state import SocketReader, VoiceConnectionState

_LOGGER = logging.getLogger("onair.voice")

SELECT_RETRY = 0.1  # seconds: a closed socket is looked at again ten times a second, not always


class CalmSocketReader(SocketReader):
    """discord.py's ``SocketReader._do_run`` with a wait after a failed ``select()``."""

    select_errors = 0

    def _do_run(self) -> None:
        while not self._end.is_set():
            if not self._running.is_set():
                self._running.wait()
                continue
            try:
                readable, _, _ = select.select([self.state.socket], [], [], 30)
            except (ValueError, TypeError, OSError):
                # The socket is closed or not made yet (a reconnect): look again in a moment.
                self.select_errors += 1
                self._end.wait(SELECT_RETRY)
                continue
            if not readable:
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
    """discord.py's connection state with a :class:`CalmSocketReader`."""

    def __init__(self, voice_client: discord.VoiceClient) -> None:
        super().__init__(voice_client)
        started = self._socket_reader  # discord.py's, started paused in its __init__: ended
        started.stop()
        self._socket_reader = CalmSocketReader(self)
        self._socket_reader.start()
