"""discord.py's UDP reader past file descriptor 1,023 (issue 26): a process with about 500 voice
connections holds such descriptors, and each later connection's IP discovery must still be read."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from .support.waiting import wait_for


async def test_the_udp_reader_reads_a_socket_past_file_descriptor_1023() -> None:
    """select() refuses a file descriptor past 1,023 (ValueError), which a process holding about
    500 voice connections reaches: discord.py 2.7.1's reader then never saw its IP discovery's
    answer and the join timed out (bench.voice: 503 of 1,000 guilds joined). OnAir's reader
    polls instead and reads it."""
    import resource

    from bot.voice.reader import CalmSocketReader

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    high = 1500
    if soft <= high:
        if hard != resource.RLIM_INFINITY and hard <= high:
            pytest.skip(f"this process may not open file descriptor {high} (limit {hard})")
        resource.setrlimit(resource.RLIMIT_NOFILE, (high + 1, hard))
    made = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    os.dup2(made.fileno(), high)
    made.close()
    udp = socket.socket(fileno=high)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)

    class State:
        socket = udp

    got: list[bytes] = []
    arrived = threading.Event()

    def callback(data: bytes) -> None:
        got.append(data)
        arrived.set()

    reader = CalmSocketReader(State(), start_paused=False)  # type: ignore[arg-type]
    reader.register(callback)
    reader.start()
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sender.sendto(b"discovery answer", udp.getsockname())
        await wait_for(arrived.is_set, within=10)
    finally:
        reader.stop()
        sender.sendto(b"wake", udp.getsockname())  # out of its wait, to see the stop
        reader.join(5)
        sender.close()
        udp.close()
    assert got[0] == b"discovery answer"
    assert reader.select_errors == 0
