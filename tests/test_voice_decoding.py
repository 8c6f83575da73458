"""The decoder's start and its pacing, in the engine (no Discord): what a real Icecast 2's
streams need (issue 27). Waits are on counters with a deadline; nothing is timed."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot.guard.netguard import GuardedResolver, HostPolicy
from bot.voice import decode_args
from bot.voice.ffmpeg import input_format
from bot.voice.pacer import Pacer

from .support.broadcasting import broadcasting
from .support.fakeicecast import FakeIcecast
from .support.icecast_media import Media, make_media
from .support.waiting import wait_for


@pytest.fixture(scope="session")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("decoding")


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    """The bot's kind of session, loopback allowed (the fake Icecast is on 127.0.0.1)."""
    resolver = GuardedResolver(HostPolicy(allow_private=True))
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(resolver=resolver)) as made:
        yield made


async def media(ffmpeg: str, name: str, folder: Path) -> Media:
    return await asyncio.to_thread(make_media, ffmpeg, name, folder)


def test_the_content_type_names_ffmpegs_input_format() -> None:
    assert input_format("audio/mpeg") == "mp3"
    assert input_format("Audio/MPEG; charset=x") == "mp3"
    assert input_format("audio/aacp") == "aac"
    assert input_format("audio/aac") == "aac"
    assert input_format("application/ogg") == "ogg"
    assert input_format("audio/ogg") == "ogg"
    assert input_format("application/octet-stream") is None
    assert input_format("") is None
    named = decode_args("ffmpeg", "mp3")
    assert named[named.index("-f") + 1] == "mp3"  # before the input...
    assert named.index("-f") < named.index("-i")
    probed = decode_args("ffmpeg")
    assert probed[probed.index("-formatprobesize") + 1] == "8192"  # ...or a short probe
    assert probed.index("-f") > probed.index("-i")  # the only -f is the output's


async def test_a_decoder_still_reading_its_input_is_not_killed_before_its_first_packet(
    ffmpeg: str, folder: Path, session: aiohttp.ClientSession, tmp_path: Path
) -> None:
    """A decoder that needs more than the burst before its first packet (as FFmpeg's probing
    of a 320 kbit/s MP3 did: 5.07 s, killed by the 5 s timer at each restart, for good) plays
    as long as it keeps reading: here it needs 32 KiB past the 64 KiB burst, two seconds of
    a 128 kbit/s stream, and the no-audio timer is one second."""
    slow = tmp_path / "ffmpeg-reads-first"
    slow.write_text(f'#!/bin/sh\nhead -c 98304 > /dev/null\nexec "{ffmpeg}" "$@"\n')
    slow.chmod(0o755)
    async with (
        FakeIcecast(await media(ffmpeg, "mp3-128", folder)) as icecast,
        broadcasting(icecast.url, str(slow), session, watchdog=1.0) as broadcast,
    ):
        audio = broadcast.audio()
        await wait_for(lambda: audio.queue.received >= 10, within=30)
        assert broadcast.restarts == 0
        assert icecast.connections == 1


async def test_a_content_type_that_names_the_wrong_format_is_probed_next_time(
    ffmpeg: str, folder: Path, session: aiohttp.ClientSession
) -> None:
    """A server that calls its AAC stream audio/mpeg: FFmpeg's MP3 demuxer finds no frame and
    exits (or reads on, finding none, until the no-audio timer's start-up grace ends); the next
    run probes the bytes instead, and the station plays."""
    aac = dataclasses.replace(await media(ffmpeg, "aac-128", folder), content_type="audio/mpeg")
    async with FakeIcecast(aac) as icecast:
        options = {"min_backoff": 0.05, "watchdog": 1.0}
        async with broadcasting(icecast.url, ffmpeg, session, **options) as broadcast:
            audio = broadcast.audio()
            await wait_for(lambda: audio.queue.received >= 10, within=30)
            assert broadcast.restarts == 1
            assert icecast.connections == 2


def packets(start: int, count: int) -> list[bytes]:
    return [b"p%d" % n for n in range(start, start + count)]


def test_the_pacer_bounds_its_backlog_by_dropping_the_oldest() -> None:
    out: list[bytes] = []
    pacer = Pacer(out.append, max_seconds=1.0)  # 50 packets
    pacer.put(packets(0, 40))
    pacer.put(packets(40, 30))
    assert len(pacer) == 50
    assert pacer.dropped == 20
    assert pacer.replaced == 0


async def test_the_pacer_lets_packets_out_in_order_and_a_new_run_replaces_the_rest() -> None:
    out: list[bytes] = []
    pacer = Pacer(out.append)
    task = asyncio.create_task(pacer.run())
    try:
        pacer.put(packets(0, 60))  # a burst: 1.2 s of sound at once
        await wait_for(lambda: len(out) >= 5)
        pacer.new_run()  # a reconnect: its burst repeats what is left
        left = len(pacer)
        pacer.put(packets(100, 20))
        assert pacer.replaced == left
        await wait_for(lambda: len(pacer) == 0, within=10)
        played = len(out) - 20
        assert out == packets(0, played) + packets(100, 20)  # in order, none twice
        assert played + left == 60
        pacer.put(packets(200, 3))  # after running dry: out again
        await wait_for(lambda: len(out) == played + 23)
    finally:
        task.cancel()
    assert pacer.dropped == 0
