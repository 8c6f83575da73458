"""The engine harness of ``bench.voice --through engine``: no Discord at all; discord.py's own
``AudioPlayer`` threads (or the process's ``VoiceSender``) in this process, each guild into a
stand-in that does per packet what ``VoiceClient.send_audio_packet`` does in the
``aead_xchacha20_poly1305_rtpsize`` mode (RTP header, XChaCha20-Poly1305 with PyNaCl, one UDP
datagram to a loopback sink)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
from dataclasses import dataclass, field
from typing import Any

import nacl.secret
from discord.player import AudioPlayer

from bot.voice import OPUS_SILENCE, Broadcasts, VoiceSender
from tests.support.waiting import wait_for

from ..common import LoopLag
from .shared import make_source, measure, stream_session


class _Speaker:
    async def speak(self, state: Any) -> None:
        return None


@dataclass
class _Loop:
    loop: asyncio.AbstractEventLoop


@dataclass
class BenchVoiceClient:
    """What ``AudioPlayer`` needs of a VoiceClient, sending as VoiceClient does per packet."""

    loop: asyncio.AbstractEventLoop
    sink: tuple[str, int]
    ssrc: int
    timeout: float = 30.0
    frames: int = 0
    audio: int = 0
    sequence: int = 0
    timestamp: int = 0
    ws: _Speaker = field(default_factory=_Speaker)

    def __post_init__(self) -> None:
        self.client = _Loop(self.loop)
        self._box = nacl.secret.Aead(os.urandom(32))
        self._nonce = 0
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.setblocking(False)

    def is_connected(self) -> bool:
        return True

    def speaking(self, on: bool) -> None:
        return None

    def wait_until_connected(self, timeout: float | None = 30.0) -> bool:
        return True

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None:
        self.sequence = (self.sequence + 1) & 0xFFFF
        header = bytearray(12)
        header[0], header[1] = 0x80, 0x78
        struct.pack_into(">HII", header, 2, self.sequence, self.timestamp, self.ssrc)
        nonce = bytearray(24)
        nonce[:4] = struct.pack(">I", self._nonce)
        self._nonce = (self._nonce + 1) & 0xFFFFFFFF
        sealed = self._box.encrypt(bytes(data), bytes(header), bytes(nonce)).ciphertext
        # A full loopback buffer drops the datagram, as a congested network would.
        with contextlib.suppress(OSError):
            self._socket.sendto(bytes(header) + sealed + nonce[:4], self.sink)
        self.timestamp = (self.timestamp + 960) & 0xFFFFFFFF
        self.frames += 1
        if data != OPUS_SILENCE:
            self.audio += 1

    def close(self) -> None:
        self._socket.close()


async def run_engine(
    mode: str, guilds: int, *, ffmpeg: str, url: str, seconds: float
) -> dict[str, Any]:
    """N discord.py AudioPlayer threads in this process, each into a transport stand-in."""
    loop = asyncio.get_running_loop()
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # never read: datagrams just drop
    sink.bind(("127.0.0.1", 0))
    clients = [BenchVoiceClient(loop, sink.getsockname(), ssrc=1000 + n) for n in range(guilds)]
    session = stream_session()
    broadcasts = Broadcasts(ffmpeg, session=session)
    sources = [make_source(mode, broadcasts, url, ffmpeg) for _ in clients]
    sender = VoiceSender() if mode == "sender" else None
    if sender is not None:
        for source, client in zip(sources, clients, strict=True):
            sender.play(client, "bench", source)
    players = [
        AudioPlayer(source, client)  # type: ignore[arg-type]
        for source, client in zip(sources, clients, strict=True)
        if sender is None
    ]
    start = loop.time()
    for index, player in enumerate(players):
        # Spread the players' 20-ms phases as voice connections made one after another would
        # (started all at once, every thread wakes in the same millisecond and they queue for
        # the GIL: a cost no real bot has).
        await asyncio.sleep(max(0.0, start + index * 0.02 / guilds - loop.time()))
        player.start()
    with contextlib.suppress(AssertionError):  # measured anyway: the figures will show it
        await wait_for(lambda: all(client.audio for client in clients), within=20, step=0.1)
    await asyncio.sleep(1.0)  # past the start-up burst
    lag = LoopLag().start()
    result = await measure(os.getpid(), lambda: [(c.frames, c.audio, 0) for c in clients], seconds)
    await lag.stop()
    result["decoder_restarts"] = sum(s.restarts for s in broadcasts.stats().values())
    result["loop_worst_lag_ms"] = round(lag.worst * 1000, 1)
    if sender is not None:
        sender.close()
    for player in players:
        player.stop()
    for player in players:
        await asyncio.to_thread(player.join, 5)
    await broadcasts.close()
    await session.close()
    for source in sources:
        source.cleanup()
    for client in clients:
        client.close()
    sink.close()
    return result
