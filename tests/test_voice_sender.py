"""The process's one voice sender (issue 26): one clock for every guild of a station, one send
per guild per frame, a stalled guild never delays the others, and what discord.py's AudioPlayer
does per connection (SPEAKING, the closing silence, nothing sent while reconnecting).

The links stand in for ``OnAirVoiceClient`` (the sender needs only ``send_audio_packet``,
``is_connected`` and ``speaking``); the real client against the fake Discord is in
tests/test_voice_bot.py. Everything waits on counters with a deadline, never on the clock.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import AsyncIterator

import discord
import nacl.secret
import pytest

from bot.voice import OPUS_SILENCE, Lane, VoiceSender
from bot.voice.transport import NONCE, RTP_HEADER, seal

from .support.waiting import wait_for


class Link:
    """A guild's connection as the sender sees it; ``gate`` (when set) holds its sends."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.packets: list[bytes] = []
        self.speaking_states: list[bool] = []
        self.connected = True
        self.gate: threading.Event | None = None
        self.blocked = threading.Event()  # a send is waiting at the gate

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None:
        assert not encode
        gate = self.gate
        if gate is not None:
            self.blocked.set()
            gate.wait()
        self.packets.append(data)

    def is_connected(self) -> bool:
        return self.connected

    def speaking(self, on: bool) -> None:
        self.speaking_states.append(on)


class Counting(discord.AudioSource):
    """Numbered packets, one per read; ``cleanup`` recorded."""

    def __init__(self) -> None:
        self.reads = 0
        self.cleaned = threading.Event()
        self.closed = False

    def is_opus(self) -> bool:
        return True

    def read(self) -> bytes:
        if self.closed:
            return b""
        self.reads += 1
        return b"pkt%06d" % self.reads

    def cleanup(self) -> None:
        self.cleaned.set()


def numbers(packets: list[bytes]) -> list[int]:
    return [int(p[3:]) for p in packets if p.startswith(b"pkt")]


@pytest.fixture
async def sender() -> AsyncIterator[VoiceSender]:
    # A short stall threshold keeps the test quick; the clock is the real 20 ms one.
    sender = VoiceSender(stall_after=0.01)
    yield sender
    sender.close()


async def test_a_stalled_guild_does_not_delay_the_others(sender: VoiceSender) -> None:
    source = Counting()
    links = [Link(f"g{n}") for n in range(5)]
    stuck = links[2]
    stuck.gate = threading.Event()
    lanes = [sender.play(link, "station", source) for link in links]
    await wait_for(stuck.blocked.is_set, within=10)
    others = [link for link in links if link is not stuck]
    # While one guild's send hangs, the others go on receiving every frame.
    await wait_for(lambda: all(len(link.packets) >= 50 for link in others), within=20)
    assert stuck.packets == []
    assert lanes[2].stalled
    assert lanes[2].stalls == 1
    assert sender.rescues == 1
    for link in others:
        got = numbers(link.packets)
        # From the frame that was current when it joined, none lost or repeated.
        assert got == list(range(got[0], got[0] + len(got)))
    stuck.gate.set()
    before = len(stuck.packets)
    await wait_for(lambda: len(stuck.packets) >= before + 10, within=10)
    assert not lanes[2].stalled
    # Back in step: the stuck frame went out, then it follows the station's current frame.
    got = numbers(stuck.packets)
    assert got[1:] == list(range(got[1], got[1] + len(got) - 1))
    assert source.reads <= max(len(link.packets) for link in links) + 2  # one read a tick


async def test_one_read_per_tick_for_every_guild_of_a_station(sender: VoiceSender) -> None:
    first, second, other = Counting(), Counting(), Counting()
    a, b, c = Link("a"), Link("b"), Link("c")
    lane_a = sender.play(a, "one", first)
    sender.play(b, "one", second)
    sender.play(c, "two", other)
    # The station plays already: the second guild's own subscription is released at once.
    assert second.cleaned.is_set()
    assert not first.cleaned.is_set()
    await wait_for(lambda: len(b.packets) >= 20 and len(c.packets) >= 20, within=10)
    assert second.reads == 0
    assert set(numbers(b.packets)) <= set(numbers(a.packets)) | {first.reads}
    assert a.speaking_states[:1] == [True]
    assert b.speaking_states[:1] == [True]
    lane_a.stop()
    await wait_for(lambda: lane_a.ended, within=5)
    # Stopping: five silence frames and "not speaking", as discord.py's AudioPlayer.
    assert a.packets[-5:] == [OPUS_SILENCE] * 5
    assert a.speaking_states[-1] is False
    assert not first.cleaned.is_set()  # the station still plays for b
    sender.lanes()[0].stop()
    await wait_for(first.cleaned.is_set, within=5)


async def test_nothing_is_sent_while_reconnecting_and_speaking_resumes(
    sender: VoiceSender,
) -> None:
    source = Counting()
    link = Link("g")
    lane = sender.play(link, "s", source)
    await wait_for(lambda: len(link.packets) >= 5, within=10)
    link.connected = False
    sent = len(link.packets)
    reads = source.reads
    await wait_for(lambda: source.reads >= reads + 10, within=10)
    assert len(link.packets) <= sent + 1  # (one send may have been under way)
    link.connected = True
    await wait_for(lambda: len(link.packets) >= sent + 5, within=10)
    assert link.speaking_states.count(True) == 2  # on start and again once connected
    assert lane.frames_sent == len(link.packets)


async def test_a_source_that_ends_ends_its_lanes(sender: VoiceSender) -> None:
    source = Counting()
    link = Link("g")
    errors: list[Exception | None] = []
    lane: Lane = sender.play(link, "s", source, after=errors.append)
    await wait_for(lambda: len(link.packets) >= 3, within=10)
    source.closed = True
    await wait_for(lambda: lane.ended, within=5)
    assert errors == [None]
    assert source.cleaned.is_set()


def test_the_transport_seal_is_pynacls_aead_byte_for_byte() -> None:
    key = os.urandom(32)
    for size in (3, 120, 400):
        header = RTP_HEADER.pack(0x80, 0x78, 65535, 4294966336, 1234)
        payload = os.urandom(size)
        nonce = NONCE.pack(4294967295)
        box = nacl.secret.Aead(key)
        expected = box.encrypt(payload, header, nonce + b"\x00" * 20).ciphertext
        assert seal(key, header, payload, nonce) == expected


async def test_the_udp_reader_waits_after_a_closed_socket() -> None:
    """discord.py 2.7.1's reader retries a failing select() at once (thousands of times in the
    10 ms between two looks here); OnAir's waits a moment after each."""
    from bot.voice.reader import SELECT_RETRY, CalmSocketReader

    closed = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    closed.close()

    class State:
        socket = closed

    reader = CalmSocketReader(State(), start_paused=False)  # type: ignore[arg-type]
    reader.start()
    try:
        await wait_for(lambda: reader.select_errors >= 3, within=10)
        errors = reader.select_errors
    finally:
        reader.stop()
        reader.join(5)
    assert errors <= 4, errors  # one select() per SELECT_RETRY, not a spin
    assert SELECT_RETRY >= 0.05


class SilenceGate(Link):
    """A link whose closing silence hangs (its audio frames go out)."""

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None:
        if data == OPUS_SILENCE and self.gate is not None:
            self.blocked.set()
            self.gate.wait()
        self.packets.append(data)


async def test_a_guild_whose_closing_silence_hangs_does_not_delay_the_others(
    sender: VoiceSender,
) -> None:
    """Review of #26: the five closing silence frames were sent outside the watchdog's sight,
    so one stopping guild whose send hung stopped the clock for every guild."""
    source = Counting()
    leaving, staying = SilenceGate("leaving"), Link("staying")
    lane = sender.play(leaving, "s", source)
    sender.play(staying, "s", Counting())
    await wait_for(lambda: len(staying.packets) >= 3, within=10)
    leaving.gate = threading.Event()
    lane.stop()
    try:
        await wait_for(leaving.blocked.is_set, within=10)
        before = len(staying.packets)
        await wait_for(lambda: len(staying.packets) >= before + 30, within=10)
    finally:
        leaving.gate.set()
    await wait_for(lambda: lane.ended, within=10)
    assert leaving.speaking_states[-1] is False


class Tagged(Counting):
    """Packets that name their station."""

    def __init__(self, tag: bytes) -> None:
        super().__init__()
        self.tag = tag

    def read(self) -> bytes:
        return self.tag + super().read()


class StopsThenHangs(Link):
    """On its first send, stops another guild's lane (the plan changes), then hangs."""

    other: Lane | None = None

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None:
        if self.gate is not None and self.other is not None:
            self.other.stop()
            self.other = None
            self.blocked.set()
            self.gate.wait()
        self.packets.append(data)


async def test_a_rescue_after_the_stations_changed_sends_each_guild_its_own_station(
    sender: VoiceSender,
) -> None:
    """Review of #26: the thread taking over from a stuck one resumed at the stuck one's
    (station, guild) position in the *current* plan with the packets read for the old one:
    when a station had left meanwhile, another station's guilds got a frame of the wrong
    station (and some guilds none)."""
    first, hanging = Link("a"), StopsThenHangs("b")
    c1, c2 = Link("c1"), Link("c2")
    lane_a = sender.play(first, "A", Tagged(b"A"))
    hanging.other = lane_a
    sender.play(hanging, "B", Tagged(b"B"))
    sender.play(c1, "C", Tagged(b"C"))
    sender.play(c2, "C", Tagged(b"C"))
    await wait_for(lambda: len(c2.packets) >= 3, within=10)
    hanging.gate = threading.Event()
    try:
        await wait_for(hanging.blocked.is_set, within=10)
        await wait_for(lambda: sender.rescues >= 1, within=10)
        before = len(c1.packets)
        await wait_for(lambda: len(c1.packets) >= before + 5, within=10)
    finally:
        hanging.gate.set()
    for link in (c1, c2):
        assert all(packet.startswith(b"C") for packet in link.packets), link.packets


async def test_a_station_nobody_plays_is_read_no_more(sender: VoiceSender) -> None:
    """Review of #26: the plan was made again before the station's last lane left it, so the
    station stayed in it and its released source was read on every tick."""
    gone, staying = Counting(), Counting()
    lane = sender.play(Link("a"), "gone", gone)
    other = Link("b")
    sender.play(other, "staying", staying)
    await wait_for(lambda: len(other.packets) >= 3, within=10)
    lane.stop()
    await wait_for(gone.cleaned.is_set, within=10)
    reads = gone.reads
    before = len(other.packets)
    await wait_for(lambda: len(other.packets) >= before + 10, within=10)
    assert gone.reads <= reads + 1  # (a tick may have been under way)
    assert sender.feeds == 1


async def test_a_stalled_send_is_said_at_info_with_the_count(
    sender: VoiceSender, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="onair.voice")
    links = [Link("g0"), Link("g1")]
    links[0].gate = threading.Event()
    for link in links:
        sender.play(link, "station", Counting())
    await wait_for(lambda: any("stalled" in r.getMessage() for r in caplog.records), within=10)
    said = [r for r in caplog.records if "stalled" in r.getMessage()]
    assert [r.levelno for r in said] == [logging.INFO]
    assert said[0].getMessage().startswith("voice: 1 guild send(s) stalled")
    assert "(1 since start)" in said[0].getMessage()
    links[0].gate.set()
