"""The fake voice server's UDP side: kernel arrival stamps, IP discovery, RTCP reports and
counting RTP frames (a thread; decrypting never competes with the bot's event loop).
"""

from __future__ import annotations

import contextlib
import platform
import socket
import struct
import sys
import threading
import time

from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt,
)
from nacl.exceptions import CryptoError

from .dave import DaveCall
from .protocol import DAVE_MAGIC, OPUS_SILENCE, Stream

# Linux's SO_TIMESTAMPNS (= SCM_TIMESTAMPNS; 64-bit timespec) on x86-64 and arm64: the socket
# module does not export it.
SO_TIMESTAMPNS = (
    35 if sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64") else None
)


SO_RCVBUFFORCE = 33  # Linux: SO_RCVBUF past rmem_max, for a process with CAP_NET_ADMIN
_SILENCE_PACKET = 12 + len(OPUS_SILENCE) + 16 + 4  # header, Opus, tag, nonce


def _kernel_arrival(ancillary: list[tuple[int, int, bytes]]) -> float:
    """When the kernel received the datagram, on the ``time.monotonic()`` clock (now if the
    kernel gave no SO_TIMESTAMPNS stamp)."""
    now = time.monotonic()
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanoseconds = struct.unpack("qq", payload[:16])
            return float(min(now, now - time.time() + seconds + nanoseconds / 1e9))
    return now


class UdpSide:
    """The UDP half of ``FakeVoiceServer``: IP discovery, RTCP receiver reports, and decrypting
    and counting each RTP packet, in a thread of its own (off the event loop)."""

    # Set by FakeVoiceServer.__init__ and start().
    _udp: socket.socket | None
    _stopping: threading.Event
    _lock: threading.Lock
    _streams: dict[int, Stream]
    _next_report: float
    rtcp_interval: float | None
    decrypt_every: int
    lose_discovery_answers: int
    discovery_requests: int = 0
    dave_calls: dict[int, DaveCall]

    def _receive(self) -> None:
        udp = self._udp
        assert udp is not None
        while not self._stopping.is_set():
            try:
                data, ancillary, _flags, address = udp.recvmsg(2048, socket.CMSG_SPACE(16))
            except TimeoutError:
                self._report(udp)
                continue
            except OSError:
                return
            arrived = _kernel_arrival(ancillary)
            if len(data) == 74 and data[:4] == b"\x00\x01\x00\x46":
                self._discovery(udp, data, address)
            else:
                self._count(data, arrived, address)
            self._report(udp)

    def _report(self, udp: socket.socket) -> None:
        """An RTCP receiver report (encrypted like RTP, 8-byte header as AAD) to each sender."""
        now = time.monotonic()
        if self.rtcp_interval is None or now < self._next_report:
            return
        self._next_report = now + min(0.1, self.rtcp_interval)  # not on every packet
        due: list[tuple[int, bytes, tuple[str, int], int]] = []
        with self._lock:
            for ssrc, s in self._streams.items():
                if s.active and s.key and s.address and now - s.reported >= self.rtcp_interval:
                    s.reported = now
                    due.append((ssrc, s.key, s.address, s.last_seq or 0))
        for ssrc, key, address, last_seq in due:
            header = struct.pack(">BBHI", 0x81, 201, 7, 1)
            block = struct.pack(">IIIIII", ssrc, 0, last_seq, 0, 0, 0)
            nonce = struct.pack(">I", int(now * 1000) & 0xFFFFFFFF)
            sealed = crypto_aead_xchacha20poly1305_ietf_encrypt(
                block, header, nonce + b"\x00" * 20, key
            )
            with contextlib.suppress(OSError):
                udp.sendto(header + sealed + nonce, address)

    def _discovery(self, udp: socket.socket, data: bytes, address: tuple[str, int]) -> None:
        self.discovery_requests += 1
        if self.lose_discovery_answers > 0:
            self.lose_discovery_answers -= 1
            return
        ip = address[0].encode("ascii")
        answer = struct.pack(">HHI", 2, 70, struct.unpack_from(">I", data, 4)[0])
        answer += ip + b"\x00" * (64 - len(ip)) + struct.pack(">H", address[1])
        with contextlib.suppress(OSError):
            udp.sendto(answer, address)

    def _count(self, data: bytes, arrived: float, address: tuple[str, int]) -> None:
        if len(data) < 12 + 16 + 4:
            return
        ssrc = struct.unpack_from(">I", data, 8)[0]
        with self._lock:
            stream = self._streams.get(ssrc)
            if stream is None:
                return
            stats = stream.stats
            if data[0] != 0x80 or data[1] != 0x78 or stream.key is None or not stream.active:
                stats.rejected += 1
                return
            nonce = data[-4:] + b"\x00" * 20
            if self.decrypt_every <= 1 or stats.frames % self.decrypt_every == 0:
                try:
                    opus = crypto_aead_xchacha20poly1305_ietf_decrypt(
                        data[12:-4], data[:12], nonce, stream.key
                    )
                except CryptoError:
                    stats.rejected += 1
                    return
            else:
                opus = OPUS_SILENCE if len(data) == _SILENCE_PACKET else b""
            sequence = struct.unpack_from(">H", data, 2)[0]
            if stream.last_seq is not None and sequence != (stream.last_seq + 1) & 0xFFFF:
                stats.gaps += 1
            stream.last_seq = sequence
            timestamp = struct.unpack_from(">I", data, 4)[0]
            if stream.last_timestamp is not None:
                stats.steps.add((timestamp - stream.last_timestamp) & 0xFFFFFFFF)
            stream.last_timestamp = timestamp
            stream.address = address
            stats.frames += 1
            stats.arrivals.append(arrived)
            if opus == OPUS_SILENCE:
                stats.silence += 1
            else:
                stats.audio += 1
                stats.audio_arrivals.append(arrived)
            if opus.endswith(DAVE_MAGIC):
                stats.dave_frames += 1
            call = self.dave_calls.get(stream.guild_id)
            if call is not None and call.bot_id and opus and opus != OPUS_SILENCE:
                # The call's DAVE listeners take the frame as Discord forwards it to them.
                stats.media.append((arrived, call.decrypt(opus)))
