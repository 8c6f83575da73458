"""UDP IP discovery that survives a lost or early answer.

discord.py 2.7.1 sends the 74-byte discovery packet, then registers the callback that waits for
the answer, and waits for ever. The socket reader runs in its own thread whenever a callback is
registered (after a reconnect it still is), so an answer that comes back before the callback is
in place is read and thrown away, and a UDP packet lost on the way is never asked for again:
either way the connection hangs in ``discover_ip``. Here the callback is in place before the
packet leaves, and the packet is sent again, a few times, when no answer comes.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from typing import Any

_LOGGER = logging.getLogger("onair.voice")

# Seconds to wait for each try's answer: 4 tries in 7.5 s, within discord.py's connect timeout.
TRY_WAITS = (0.5, 1.0, 2.0, 4.0)
ANSWER = 0x02
PACKET_LENGTH = 74


def discovery_packet(ssrc: int) -> bytes:
    packet = bytearray(PACKET_LENGTH)
    struct.pack_into(">HHI", packet, 0, 1, 70, ssrc)  # 1 = request, 70 = length
    return bytes(packet)


def read_answer(data: bytes) -> tuple[str, int]:
    """The address in an answer: ASCII from byte 8 to the first NUL, the port in the last two."""
    end = data.index(0, 8)
    return data[8:end].decode("ascii"), struct.unpack_from(">H", data, len(data) - 2)[0]


async def discover_ip(state: Any, loop: asyncio.AbstractEventLoop) -> tuple[str, int]:
    """Our public address and port as the voice server sees them (``state``: discord.py's
    ``VoiceConnectionState``). TimeoutError when no try is answered."""
    answer: asyncio.Future[bytes] = loop.create_future()

    def on_packet(data: bytes) -> None:  # in the socket reader's thread
        if len(data) == PACKET_LENGTH and data[1] == ANSWER:
            loop.call_soon_threadsafe(_settle, answer, data)

    state.add_socket_listener(on_packet)
    try:
        packet = discovery_packet(state.ssrc)
        for attempt, wait in enumerate(TRY_WAITS, start=1):
            await loop.sock_sendall(state.socket, packet)
            try:
                data = await asyncio.wait_for(asyncio.shield(answer), wait)
            except TimeoutError:
                _LOGGER.debug("IP discovery try %d got no answer in %.1f s", attempt, wait)
                continue
            return read_answer(data)
        raise TimeoutError("the voice server did not answer the IP discovery")
    finally:
        state.remove_socket_listener(on_packet)
        if not answer.done():
            answer.cancel()


def _settle(answer: asyncio.Future[bytes], data: bytes) -> None:
    if not answer.done():
        answer.set_result(data)
