"""What each guild's player reads: a bounded packet queue and the AudioSource over it.

discord.py's AudioPlayer calls ``read()`` from its own thread every 20 ms and ends playback on an
empty read, so ``read()`` takes a lock for a few list operations at most, never waits, and
returns the Opus silence frame while the station's decoder restarts. The queue is filled on the
event loop by the station's broadcast; when a guild falls behind its queue drops the OLDEST
packets (it catches up with the live edge), never the broadcast's time.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

import discord

OPUS_SILENCE = b"\xf8\xff\xfe"  # one 20 ms Opus frame of silence
FRAME_SECONDS = 0.02


class PacketQueue:
    """Thread-safe bounded FIFO of Opus packets: one producer (the loop), one consumer (a
    player thread). Full means the oldest packet goes; ``dropped`` counts them."""

    def __init__(self, maxlen: int = 25) -> None:
        if maxlen < 1:
            raise ValueError("a packet queue holds at least one packet")
        self.maxlen = maxlen
        self._packets: deque[bytes] = deque()
        self._lock = threading.Lock()
        self.received = 0
        self.dropped = 0

    def put(self, packet: bytes) -> None:
        with self._lock:
            if len(self._packets) >= self.maxlen:
                self._packets.popleft()
                self.dropped += 1
            self._packets.append(packet)
            self.received += 1

    def get(self) -> bytes | None:
        """The oldest packet, or None at once when there is none."""
        with self._lock:
            return self._packets.popleft() if self._packets else None

    def clear(self) -> None:
        with self._lock:
            self._packets.clear()

    def __len__(self) -> int:
        return len(self._packets)


class StationAudio(discord.AudioSource):
    """One guild's view of a station: Opus packets from its queue, silence while there are
    none (so playback never ends on a decoder restart), ``b""`` only once closed.

    After running dry it waits for ``prefill`` packets before playing again, so network jitter
    costs one short silence instead of a stutter of many."""

    def __init__(
        self,
        queue: PacketQueue | None = None,
        *,
        release: Callable[[StationAudio], None] | None = None,
        prefill: int = 3,
    ) -> None:
        self.queue = queue if queue is not None else PacketQueue()
        self.prefill = max(1, min(prefill, self.queue.maxlen))
        self._release = release
        self._released = False
        self._closed = False
        self._dry = True  # nothing played yet: wait for the first prefill
        self.frames_sent = 0
        self.audio_frames = 0
        self.silence_frames = 0

    def is_opus(self) -> bool:
        return True

    def read(self) -> bytes:
        if self._closed:
            return b""
        packet: bytes | None = None
        if not self._dry or len(self.queue) >= self.prefill:
            packet = self.queue.get()
        self.frames_sent += 1
        if packet is None:
            self._dry = True
            self.silence_frames += 1
            return OPUS_SILENCE
        self._dry = False
        self.audio_frames += 1
        return packet

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """End playback: the next ``read()`` is empty (the station's broadcast was closed)."""
        self._closed = True
        self.queue.clear()

    def cleanup(self) -> None:
        """Unsubscribe from the broadcast (discord.py calls this from the player thread when
        playback stops; safe to call more than once, from any thread)."""
        if self._released:
            return
        self._released = True
        self._closed = True
        if self._release is not None:
            self._release(self)
