"""The sender on a busy machine (issue 26): a send whose thread is runnable (on a CPU or queued
for one) is not a stalled connection. Replacing the sender thread then only adds a thread that
queues for the same CPUs and skips the paused guild's frame; measured at 300 guilds and load 12
it happened all the time. A send asleep on its guild (tests/test_voice_sender.py) still is."""

from __future__ import annotations

import hashlib
import sys
import threading

import pytest

from bot.voice import VoiceSender

from .support.waiting import wait_for
from .test_voice_sender import Counting, Link, numbers

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the thread's state comes from Linux's /proc"
)

WORK = bytes(48 << 20)  # hashed in one call: C code without the GIL, ~0.1-0.3 s of one CPU


class Computing(Link):
    """A link whose first send computes for many watchdog periods, its thread runnable all the
    while (hashlib releases the GIL for a large buffer), as a preempted sender thread is."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.computed = threading.Event()

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None:
        if not self.computed.is_set():
            hashlib.sha256(WORK).digest()
            self.computed.set()
        super().send_audio_packet(data, encode=encode)


async def test_a_runnable_send_is_waited_for_not_set_aside() -> None:
    sender = VoiceSender(stall_after=0.005, patience=100_000)
    try:
        source = Counting()
        busy, other = Computing("busy"), Link("other")
        lane = sender.play(busy, "station", source)
        sender.play(other, "station", source)
        await wait_for(busy.computed.is_set, within=30)
        await wait_for(lambda: len(busy.packets) >= 20 and len(other.packets) >= 20, within=20)
        assert sender.rescues == 0
        assert lane.stalls == 0
        assert not lane.stalled
        sent = numbers(busy.packets)
        assert sent == list(range(sent[0], sent[0] + len(sent)))  # no frame skipped
    finally:
        sender.close()
