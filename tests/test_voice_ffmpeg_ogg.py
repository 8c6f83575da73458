"""The voice engine without a network (issue 12): finding FFmpeg and its arguments (stdin
only, never a URL), the packet queue and the audio source, and the Ogg Opus parser.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.voice import (
    FFMPEG_ENV,
    OPUS_SILENCE,
    Broadcasts,
    PacketQueue,
    StationAudio,
    StreamUnreachable,
    UnsafeStreamUrl,
    decode_args,
    find_ffmpeg,
)
from bot.voice.ogg import OggOpusParser, ogg_crc
from bot.voice.stream import check_stream_url

from .support.voice_engine import fake_ffmpeg_fixture, ogg_opus_fixture, session_fixture  # noqa: F401


def test_find_ffmpeg_precedence(tmp_path: Path, fake_ffmpeg: Callable[[str, str], str]) -> None:
    own = fake_ffmpeg("my-ffmpeg", "exit 0")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    on_path = fake_ffmpeg("bin/ffmpeg", "exit 0")
    env = {"PATH": str(bin_dir)}

    chosen = find_ffmpeg({**env, FFMPEG_ENV: str(own)})
    assert chosen is not None
    assert (chosen.path, chosen.origin) == (str(own), "ONAIR_FFMPEG")

    bundled = find_ffmpeg(env)
    assert bundled is not None
    assert bundled.origin == "imageio-ffmpeg"

    fallback = find_ffmpeg(env, bundled=lambda: None)
    assert fallback is not None
    assert (fallback.path, fallback.origin) == (str(on_path), "PATH")

    assert find_ffmpeg({"PATH": str(tmp_path / "empty")}, bundled=lambda: None) is None
    # A set but wrong ONAIR_FFMPEG is not silently replaced by another binary.
    assert find_ffmpeg({**env, FFMPEG_ENV: str(tmp_path / "missing")}) is None


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "concat:http://a.example/x|file:///etc/passwd",
        "pipe:0",
        "/etc/passwd",
        "-i",
        "ftp://a.example/stream",
        "http://a.example/stream -i file:///etc/passwd",
        "http://a.example/stream\nfile:///etc/passwd",
        "http:///nohost",
        "https://a.example/" + "x" * 3000,
        "",
    ],
)
def test_stream_urls_refuse_anything_but_http(url: str) -> None:
    with pytest.raises(UnsafeStreamUrl):
        check_stream_url(url)


def test_decode_args_read_stdin_only() -> None:
    args = decode_args("/opt/ffmpeg")
    assert args[0] == "/opt/ffmpeg"
    assert args[args.index("-protocol_whitelist") + 1] == "pipe"
    assert args.index("-protocol_whitelist") < args.index("-i")  # an input option
    assert args[args.index("-i") + 1] == "pipe:0"
    assert not any("://" in arg for arg in args)
    assert args[-1] == "pipe:1"
    for option, value in [("-c:a", "libopus"), ("-ar", "48000"), ("-ac", "2"), ("-f", "ogg")]:
        assert args[args.index(option) + 1] == value
    assert args[args.index("-frame_duration") + 1] == "20"
    assert "-nostdin" in args
    assert args[args.index("-probesize") + 1] == "8192"  # a fast start


async def test_unsafe_url_is_refused_before_any_process_starts(
    ffmpeg: str, session: aiohttp.ClientSession
) -> None:
    with pytest.raises(StreamUnreachable) as refused:
        Broadcasts(ffmpeg, session=session).audio_for("x", "file:///etc/passwd")
    assert "/etc/passwd" not in refused.value.message


def test_packet_queue_drops_the_oldest() -> None:
    queue = PacketQueue(3)
    for n in range(5):
        queue.put(bytes([n]))
    assert queue.dropped == 2
    assert [queue.get(), queue.get(), queue.get(), queue.get()] == [b"\2", b"\3", b"\4", None]


def test_station_audio_plays_silence_when_dry_and_ends_only_when_closed() -> None:
    released: list[StationAudio] = []
    audio = StationAudio(PacketQueue(10), release=released.append, prefill=2)
    assert audio.is_opus()
    assert audio.read() == OPUS_SILENCE
    audio.queue.put(b"a")
    assert audio.read() == OPUS_SILENCE  # waits for the prefill after running dry
    audio.queue.put(b"b")
    assert [audio.read(), audio.read(), audio.read()] == [b"a", b"b", OPUS_SILENCE]
    assert (audio.frames_sent, audio.audio_frames, audio.silence_frames) == (5, 2, 3)
    audio.cleanup()
    audio.cleanup()
    assert released == [audio]
    assert audio.read() == b""


def _page(seq: int, segments: list[int], body: bytes, *, continued: bool = False) -> bytes:
    header = (
        b"OggS\0"
        + bytes([1 if continued else 0])
        + (0).to_bytes(8, "little")
        + (7).to_bytes(4, "little")
        + seq.to_bytes(4, "little")
        + b"\0\0\0\0"
        + bytes([len(segments), *segments])
    )
    page = bytearray(header + body)
    page[22:26] = ogg_crc(page).to_bytes(4, "little")
    return bytes(page)


def test_ogg_parser_reads_ffmpeg_output(ogg_opus: bytes) -> None:
    parser = OggOpusParser()
    packets = parser.feed(ogg_opus)
    assert 95 <= len(packets) <= 105  # two seconds of 20 ms packets
    assert not any(p.startswith((b"OpusHead", b"OpusTags")) for p in packets)
    assert parser.skipped_bytes == 0  # every FFmpeg page passed the CRC check


@settings(max_examples=25, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=600), min_size=1, max_size=40))
def test_ogg_parser_is_indifferent_to_how_reads_split_pages(
    ogg_opus: bytes, cuts: list[int]
) -> None:
    expected = OggOpusParser().feed(ogg_opus)
    parser = OggOpusParser()
    got: list[bytes] = []
    position, index = 0, 0
    while position < len(ogg_opus):
        size = cuts[index % len(cuts)]
        got += parser.feed(ogg_opus[position : position + size])
        position += size
        index += 1
    assert got == expected


def test_ogg_parser_resynchronises_after_garbage(ogg_opus: bytes) -> None:
    expected = OggOpusParser().feed(ogg_opus)
    pages = ogg_opus.split(b"OggS")[1:]
    fake_page = b"OggS\0\0" + bytes(20) + b"\x01\xff"  # looks like a page; its CRC is wrong
    garbled = b"junk" + fake_page + b"".join(b"\x00OggX" + b"OggS" + page for page in pages)
    parser = OggOpusParser()
    assert parser.feed(garbled) == expected
    assert parser.skipped_bytes > 0


def test_ogg_parser_skips_a_damaged_page_and_keeps_the_rest(ogg_opus: bytes) -> None:
    expected = OggOpusParser().feed(ogg_opus)
    data = bytearray(ogg_opus)
    damaged_at = data.index(b"OggS", len(data) // 2)
    data[damaged_at + 40] ^= 0xFF  # inside that page's packet
    packets = OggOpusParser().feed(bytes(data))
    lost = next(i for i, (a, b) in enumerate(zip(packets, expected, strict=False)) if a != b)
    assert packets == expected[:lost] + expected[lost + 1 :]  # that one packet, nothing else


def test_ogg_parser_joins_packets_across_pages_and_drops_broken_ones() -> None:
    long_packet = bytes(range(256)) * 2  # 512 bytes: lacing 255, 255, 2
    first = _page(0, [255, 255], long_packet[:510])
    second = _page(1, [2, 3], long_packet[510:] + b"xyz", continued=True)
    parser = OggOpusParser()
    assert parser.feed(first) == []
    assert parser.feed(second) == [long_packet, b"xyz"]
    # The continuation of a page that was lost (sequence gap) is not a packet.
    orphan = _page(5, [10, 3], b"0123456789abc", continued=True)
    assert parser.feed(orphan) == [b"abc"]
    assert parser.dropped_packets == 0
    head = _page(6, [255], b"h" * 255)
    gap = _page(8, [1, 2], b"zok", continued=True)
    assert parser.feed(head + gap) == [b"ok"]
    assert parser.dropped_packets == 1
