"""The voice engine through a real FFmpeg and a fake Icecast on loopback (issue 12).

One decode per station fanned out to every subscriber; silence while the decoder restarts; the
watchdog on a stalled stream; slow subscribers drop their own oldest packets; no FFmpeg outlives
its broadcast. Players are threads calling ``read()`` every 20 ms, as discord.py's AudioPlayer
does. Everything waits on counters with a deadline; rates are ratios measured in one run.

The stream goes through an aiohttp session with OnAir's GuardedResolver (FFmpeg reads stdin and
connects nowhere): tests that should play use a policy allowing loopback (the fake Icecast is on
127.0.0.1); the refusal tests use the production policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.guard.netguard import GuardedResolver, HostPolicy, literal_guard
from bot.voice import (
    FFMPEG_ENV,
    OPUS_SILENCE,
    Broadcasts,
    PacketQueue,
    StationAudio,
    StationBroadcast,
    StreamUnreachable,
    UnsafeStreamUrl,
    decode_args,
    find_ffmpeg,
    probe_stream,
)
from bot.voice.ogg import OggOpusParser, ogg_crc
from bot.voice.stream import MAX_REDIRECTS, check_stream_url, open_probed
from bot.voice.streams import stream_guard

from .support.broadcasting import broadcasting
from .support.fakeicecast import FakeIcecast, make_mp3
from .support.waiting import wait_for

TOKEN = "listener-token-SECRET-77"


# Fixtures and helpers -------------------------------------------------------------------


@pytest.fixture(scope="session")
def mp3(ffmpeg: str, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return make_mp3(ffmpeg, tmp_path_factory.mktemp("voice") / "sine.mp3").read_bytes()


@pytest.fixture(scope="session")
def ogg_opus(ffmpeg: str) -> bytes:
    """Two seconds of Opus in Ogg as FFmpeg writes it (its CRCs are FFmpeg's, not ours)."""
    return subprocess.run(
        [
            ffmpeg,
            *("-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "sine=duration=2"),
            *("-c:a", "libopus", "-b:a", "128k", "-ar", "48000", "-ac", "2"),
            *("-frame_duration", "20", "-f", "ogg", "-page_duration", "20000", "pipe:1"),
        ],
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout


@pytest.fixture
async def icecast(mp3: bytes) -> AsyncIterator[FakeIcecast]:
    async with FakeIcecast(mp3) as server:
        yield server


def ffmpeg_children() -> list[int]:
    """Process ids of this test process's children that are FFmpeg (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        if ppid == os.getpid() and name.startswith("ffmpeg"):
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    return Path(f"/proc/{pid}").exists()


class NamesResolver(AbstractResolver):
    """Test host names (``radio.test``...) that all resolve to 127.0.0.1, as a DNS answer
    pointing into the bot's own network would."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        if not host.endswith(".test"):
            raise OSError(f"no such test host: {host}")
        return [
            {
                "hostname": host,
                "host": "127.0.0.1",
                "port": port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self) -> None:
        return None


def guarded_session(
    policy: HostPolicy, *, trusted: frozenset[str] = frozenset()
) -> aiohttp.ClientSession:
    """A session like the bot's (guarded resolver, a short default total timeout: 1 s here, 15 s
    in the bot, so a live stream that outlives it proves the per-request timeout)."""
    resolver = GuardedResolver(policy, NamesResolver(), trusted_hosts=trusted)
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(resolver=resolver),
        trace_configs=[literal_guard(resolver)],
        timeout=aiohttp.ClientTimeout(total=1.0, connect=5),
    )


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    """Guarded, with the development override (loopback allowed): the fake Icecast plays."""
    async with guarded_session(HostPolicy(allow_private=True)) as client_session:
        yield client_session


@pytest.fixture
async def production_session() -> AsyncIterator[aiohttp.ClientSession]:
    """Guarded with the production policy; ``radio.test`` is an owner's trusted config host."""
    async with guarded_session(HostPolicy(), trusted=frozenset({"radio.test"})) as client_session:
        yield client_session


@pytest.fixture
async def broadcasts(
    ffmpeg: str, session: aiohttp.ClientSession
) -> AsyncIterator[Callable[..., StationBroadcast]]:
    """Makes StationBroadcasts; closes them all and checks that no FFmpeg is left."""
    made: list[StationBroadcast] = []

    def make(
        url: str, *, on: aiohttp.ClientSession | None = None, **options: float
    ) -> StationBroadcast:
        broadcast = StationBroadcast(
            "test-station",
            url,
            ffmpeg,
            session=on or session,
            **options,  # type: ignore[arg-type]
        )
        made.append(broadcast)
        return broadcast

    yield make
    for broadcast in made:
        await broadcast.close()
    assert ffmpeg_children() == []


class Player(threading.Thread):
    """discord.py's AudioPlayer in miniature: ``read()`` every 20 ms on a drift-free schedule,
    in its own thread, until the source returns ``b""`` or ``stop()``."""

    def __init__(self, source: StationAudio) -> None:
        super().__init__(daemon=True)
        self.source = source
        self.frames: list[tuple[float, bool]] = []  # (monotonic time, was audio)
        self._stopped = threading.Event()

    def run(self) -> None:
        start = time.perf_counter()
        loops = 0
        while not self._stopped.is_set():
            data = self.source.read()
            if not data:
                return
            self.frames.append((time.monotonic(), data != OPUS_SILENCE))
            loops += 1
            self._stopped.wait(max(0.0, start + 0.02 * loops - time.perf_counter()))

    def stop(self) -> None:
        self._stopped.set()
        self.join(timeout=5)

    def audio_since(self, index: int) -> int:
        return sum(1 for _, audio in self.frames[index:] if audio)


@pytest.fixture
def players() -> Iterator[Callable[[StationAudio], Player]]:
    started: list[Player] = []

    def start(source: StationAudio) -> Player:
        player = Player(source)
        player.start()
        started.append(player)
        return player

    yield start
    for player in started:
        player.stop()


# Through a real FFmpeg ------------------------------------------------------------------


async def test_packets_arrive_at_real_time(
    icecast: FakeIcecast,
    broadcasts: Callable[..., StationBroadcast],
    players: Callable[[StationAudio], Player],
) -> None:
    broadcast = broadcasts(icecast.url)
    player = players(broadcast.audio())
    await wait_for(lambda: broadcast.frames_produced >= 50, within=10)  # past the burst
    start_frames, started = broadcast.frames_produced, time.monotonic()
    first_read = len(player.frames)
    # 2 s: longer than the session's default total timeout, which must not cut a live stream.
    await wait_for(lambda: broadcast.frames_produced >= start_frames + 100, within=10)
    rate = (broadcast.frames_produced - start_frames) / (time.monotonic() - started)
    assert 0.85 <= rate / 50 <= 1.15, f"{rate:.1f} packets/s"
    window = player.frames[first_read:]
    audio_share = sum(1 for _, audio in window if audio) / len(window)
    assert audio_share >= 0.95, f"the player read silence {1 - audio_share:.0%} of the time"
    assert broadcast.restarts == 0


async def test_two_subscribers_share_one_upstream_connection(
    icecast: FakeIcecast,
    ffmpeg: str,
    session: aiohttp.ClientSession,
    players: Callable[[StationAudio], Player],
) -> None:
    registry = Broadcasts(ffmpeg, session=session)
    try:
        assert not registry.is_running("main")
        first = players(registry.audio_for("main", icecast.url))
        second = players(registry.audio_for("main", icecast.url))
        assert registry.is_running("main")
        await wait_for(lambda: first.audio_since(0) >= 25 and second.audio_since(0) >= 25)
        assert icecast.connections == 1
        assert icecast.requests == 1  # the second guild opened no connection at all
        assert len(ffmpeg_children()) == 1
        stats = registry.stats()["main"]
        assert stats.subscribers == 2
        assert stats.frames_produced >= 25
    finally:
        await registry.close()
    assert ffmpeg_children() == []
    assert first.source.read() == b""  # a closed registry ends playback


async def test_dropped_stream_is_bridged_with_silence(
    icecast: FakeIcecast,
    broadcasts: Callable[..., StationBroadcast],
    players: Callable[[StationAudio], Player],
) -> None:
    # The backoff is capped at 0.5 s so that how long this test takes to notice the silence (a
    # loaded machine is slow) cannot push the next try seconds away.
    broadcast = broadcasts(f"{icecast.url}?token={TOKEN}", min_backoff=0.2, max_backoff=0.5)
    player = players(broadcast.audio())
    await wait_for(lambda: player.audio_since(0) >= 25, within=10)
    icecast.refuse_new = True  # the source is gone for a moment: FFmpeg's reconnect fails
    assert icecast.drop_all() == 1
    mark = len(player.frames)
    await wait_for(lambda: any(not audio for _, audio in player.frames[mark:]), within=10)
    back_at = time.monotonic()
    icecast.refuse_new = False
    silent_from = mark + next(i for i, (_, a) in enumerate(player.frames[mark:]) if not a)
    await wait_for(lambda: player.audio_since(silent_from) >= 5, within=20)
    resumed_at = next(t for t, audio in player.frames[silent_from:] if audio)
    # Once the source is back: at most one capped backoff (0.625 s with jitter) and a decoder
    # start. The bound is generous for a loaded machine (measured: 0.08-0.45 s with two busy
    # loops on the 2 cores as well) and still far under a watchdog or an exponential wait.
    assert resumed_at - back_at <= 3.0, f"audio resumed {resumed_at - back_at:.2f} s later"
    assert player.is_alive()  # playback never ended
    assert icecast.connections >= 2


async def test_stalled_stream_restarts_on_the_watchdog(
    icecast: FakeIcecast,
    broadcasts: Callable[..., StationBroadcast],
    players: Callable[[StationAudio], Player],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="bot.voice")
    broadcast = broadcasts(f"{icecast.url}?token={TOKEN}", watchdog=1.0, min_backoff=0.1)
    player = players(broadcast.audio())
    await wait_for(lambda: player.audio_since(0) >= 10, within=10)
    first_pid = broadcast.pid
    assert first_pid is not None
    icecast.stall()  # the connection stays open; nothing arrives
    await wait_for(lambda: broadcast.restarts >= 1, within=5)
    assert not alive(first_pid)
    icecast.stall(False)
    mark = len(player.frames)
    await wait_for(lambda: player.audio_since(mark) >= 10, within=5)
    assert broadcast.pid not in (None, first_pid)
    assert icecast.connections >= 2
    restarts = [r for r in caplog.records if "decoder restart" in r.getMessage()]
    assert restarts, "no restart line was logged"
    line = restarts[0].getMessage()
    assert "test-station" in line
    assert "no audio for 1 s" in line
    assert TOKEN not in caplog.text
    assert "stream.mp3" not in caplog.text


async def test_stream_errors_restart_with_capped_backoff_reset_after_a_healthy_run(
    icecast: FakeIcecast,
    broadcasts: Callable[..., StationBroadcast],
    players: Callable[[StationAudio], Player],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="bot.voice")  # repeated identical lines are DEBUG
    broadcast = broadcasts(
        f"{icecast.url}?token={TOKEN}", min_backoff=0.1, max_backoff=0.3, healthy_after=0.5
    )
    icecast.refuse_new, icecast.refuse_status = True, 404
    player = players(broadcast.audio())
    await wait_for(lambda: broadcast.restarts >= 4, within=10)
    assert ffmpeg_children() == []  # an HTTP error starts no FFmpeg
    assert player.is_alive()
    assert player.audio_since(0) == 0  # silence all along, and playback never ended
    icecast.refuse_new = False
    mark = len(player.frames)
    await wait_for(lambda: player.audio_since(mark) >= 50, within=10)  # healthy for 1 s
    failures = broadcast.restarts
    icecast.refuse_new = True
    icecast.drop_all()
    await wait_for(lambda: broadcast.restarts > failures, within=10)

    records = [r for r in caplog.records if "decoder restart" in r.getMessage()]
    lines = [r.getMessage() for r in records]
    delays = [float(line.split(" in ")[1].split(" s ")[0]) for line in lines]
    assert delays[0] <= 0.125
    assert delays[1] > delays[0]  # doubles (with jitter)
    assert max(delays) <= 0.3  # capped
    assert delays[failures] <= 0.125  # a healthy run started the backoff over
    assert "the stream answered HTTP 404" in lines[0]
    assert len(lines) == broadcast.restarts  # one line per restart...
    loud = [r.getMessage() for r in records[:failures] if r.levelno == logging.WARNING]
    assert len(loud) == 1  # ...and the same reason again is not repeated at WARNING
    assert "404" not in lines[failures]  # the drop after the healthy run: a new reason, loud
    assert records[failures].levelno == logging.WARNING
    assert TOKEN not in caplog.text
    assert "stream.mp3" not in caplog.text


async def test_slow_subscriber_drops_its_oldest_packets_only(
    icecast: FakeIcecast, broadcasts: Callable[..., StationBroadcast]
) -> None:
    broadcast = broadcasts(icecast.url, queue_frames=50)
    fast, slow = broadcast.audio(), broadcast.audio()
    got: list[bytes] = []

    def drain_fast() -> bool:
        while (packet := fast.queue.get()) is not None:
            got.append(packet)
        return len(got) >= 150

    await wait_for(drain_fast, within=10)
    drain_fast()  # no await since: the broadcast has not run in between
    produced = broadcast.frames_produced
    kept = []
    while (packet := slow.queue.get()) is not None:
        kept.append(packet)
    assert len(got) == produced
    assert fast.queue.dropped == 0
    assert slow.queue.dropped == produced - 50
    assert kept == got[-50:]  # the slow one kept the newest packets, in order


async def test_decoder_stops_with_the_last_subscriber_and_restarts(
    icecast: FakeIcecast, broadcasts: Callable[..., StationBroadcast]
) -> None:
    broadcast = broadcasts(icecast.url)
    first, second = broadcast.audio(), broadcast.audio()
    await wait_for(lambda: broadcast.frames_produced >= 10)
    pid = broadcast.pid
    assert pid is not None
    first.cleanup()
    assert broadcast.running  # one listener is left
    cleaner = threading.Thread(target=second.cleanup)  # as discord.py's player thread does
    cleaner.start()
    cleaner.join()
    await wait_for(lambda: not broadcast.running and not alive(pid), within=5)
    assert ffmpeg_children() == []
    assert broadcast.pid is None
    assert second.read() == b""

    third = broadcast.audio()
    await wait_for(lambda: third.queue.received >= 10, within=10)
    assert broadcast.pid not in (None, pid)
    assert icecast.connections == 2
    assert broadcast.restarts == 0  # stopping for lack of listeners is not a restart

    # The last one leaves and a new one arrives before the old decoder has wound down.
    third.cleanup()
    fourth = broadcast.audio()
    await wait_for(lambda: fourth.queue.received >= 10, within=10)
    await wait_for(lambda: len(ffmpeg_children()) == 1, within=5)


async def test_linger_keeps_the_decoder_for_a_quick_return_and_a_new_url_restarts_it(
    icecast: FakeIcecast, ffmpeg: str, session: aiohttp.ClientSession
) -> None:
    registry = Broadcasts(ffmpeg, session=session, linger=30.0)
    try:
        first = registry.audio_for("main", icecast.url)
        await wait_for(lambda: first.queue.received >= 5)
        broadcast = registry.get("main")
        assert broadcast is not None
        pid = broadcast.pid
        first.cleanup()  # the last listener leaves...
        assert registry.is_running("main")  # ...and the decoder lingers
        second = registry.audio_for("main", icecast.url)  # a rejoin within the linger
        await wait_for(lambda: second.queue.received >= 5)
        assert broadcast.pid == pid
        assert icecast.connections == 1

        moved = registry.audio_for("main", f"{icecast.url}?moved=1")  # the station's URL changed
        # (The old stream's backlog plays until the new one's first packets: the count alone
        # does not show the new decoder.)
        await wait_for(
            lambda: (
                icecast.connections == 2
                and broadcast.pid not in (None, pid)
                and moved.queue.received >= 5
            )
        )
        assert broadcast.restarts == 0
        assert broadcast.subscribers == 2
    finally:
        await registry.close()
    assert ffmpeg_children() == []


async def test_ffmpeg_opens_nothing_a_playlist_on_its_stdin_names(
    ffmpeg: str, tmp_path: Path
) -> None:
    """The protocol whitelist (pipe only) holds in a real FFmpeg: a "stream" that is an HLS
    playlist naming a local file and an http URL plays nothing and reads neither."""
    secret = tmp_path / "secret.mp3"
    secret.write_bytes(b"ID3 not to be read")
    playlist = (
        "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n"
        f"file://{secret}\n#EXTINF:10,\nhttp://127.0.0.1:9/x.mp3\n#EXT-X-ENDLIST\n"
    ).encode()
    proc = await asyncio.create_subprocess_exec(
        *decode_args(ffmpeg),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(playlist), timeout=20)
    assert proc.returncode != 0
    assert out == b""
    assert b"not on whitelist" in err or b"Invalid data" in err, err


async def test_ffmpeg_argv_names_no_url(
    icecast: FakeIcecast, broadcasts: Callable[..., StationBroadcast]
) -> None:
    """The running FFmpeg's command line (what ``ps`` shows) holds no URL, host or token."""
    broadcast = broadcasts(f"{icecast.url}?token={TOKEN}")
    audio = broadcast.audio()
    await wait_for(lambda: audio.queue.received >= 5, within=10)
    pid = broadcast.pid
    assert pid is not None
    cmdline = await asyncio.to_thread(Path(f"/proc/{pid}/cmdline").read_bytes)
    argv = cmdline.split(b"\0")
    assert b"pipe:0" in argv
    assert argv[argv.index(b"-protocol_whitelist") + 1] == b"pipe"
    for word in (b"://", b"127.0.0.1", TOKEN.encode(), b"stream.mp3", b"http"):
        assert not any(word in arg for arg in argv), word
    assert broadcast.bytes_received > 0  # the bytes came through OnAir's session


@pytest.fixture
def restart_lines(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """The engine's "decoder restart" warnings so far, as logged (they are captured from here)."""
    caplog.set_level(logging.WARNING, logger="bot.voice")
    return lambda: [r.getMessage() for r in caplog.records if "decoder restart" in r.getMessage()]


@pytest.fixture
def fake_ffmpeg(tmp_path: Path) -> Callable[[str, str], str]:
    """Writes a shell script standing in for FFmpeg (how a broken or stuck decoder behaves, or
    one that is only found) at ``name`` below the test's folder; returns its path."""

    def write(name: str, body: str) -> str:
        script = tmp_path / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
        return str(script)

    return write


async def test_ffmpeg_exit_goes_through_the_restart_path(
    icecast: FakeIcecast,
    fake_ffmpeg: Callable[[str, str], str],
    session: aiohttp.ClientSession,
    restart_lines: Callable[[], list[str]],
) -> None:
    # An "FFmpeg" that says why on stderr and exits at once, reading nothing.
    failing_ffmpeg = fake_ffmpeg("ffmpeg-fails", "echo 'pipe:0: Invalid data found' >&2\nexit 3")
    async with broadcasting(icecast.url, failing_ffmpeg, session, min_backoff=0.05) as broadcast:
        audio = broadcast.audio()
        await wait_for(lambda: broadcast.restarts >= 2, within=10)
        assert icecast.connections >= 2  # each try opened the stream again...
        await wait_for(lambda: icecast.open_connections == 0, within=5)  # ...and closed it
        assert audio.queue.received == 0
    line = restart_lines()[0]
    assert "FFmpeg exited (3): pipe:0: Invalid data found" in line


async def test_a_stuck_ffmpeg_holds_the_stream_back(
    mp3: bytes,
    fake_ffmpeg: Callable[[str, str], str],
    session: aiohttp.ClientSession,
    restart_lines: Callable[[], list[str]],
) -> None:
    """Backpressure: while FFmpeg reads nothing, OnAir stops reading the stream (a full pipe,
    then aiohttp's bounded buffer) instead of buffering a fast server's megabytes; the
    watchdog then restarts it."""
    stuck_ffmpeg = fake_ffmpeg("ffmpeg-stuck", "sleep 60")  # never reads stdin nor writes
    async with (
        FakeIcecast(mp3, speed=1250) as fast,  # 20 MB/s on offer
        broadcasting(fast.url, stuck_ffmpeg, session, watchdog=1.0) as broadcast,
    ):
        broadcast.audio()
        await wait_for(lambda: broadcast.restarts >= 1, within=10)
        assert broadcast.bytes_received < 1_000_000  # a pipe and a chunk, not 20 MB
        assert broadcast.bytes_received > 0
    line = restart_lines()[0]
    assert "no audio for 1 s" in line


# probe_stream -----------------------------------------------------------------------------


async def test_probe_stream_returns_the_url_and_explains_failures(
    icecast: FakeIcecast, session: aiohttp.ClientSession
) -> None:
    url = f"{icecast.url}?token={TOKEN}"
    assert await probe_stream(session, url) == url
    icecast.refuse_new = True
    with pytest.raises(StreamUnreachable) as refused:
        await probe_stream(session, url)
    assert "503" in refused.value.message
    icecast.refuse_new = False
    icecast.hang_new = True
    with pytest.raises(StreamUnreachable) as hung:
        await probe_stream(session, url, timeout=0.3)
    assert "did not answer" in hung.value.message
    with pytest.raises(StreamUnreachable):
        await probe_stream(session, "file:///etc/passwd")
    for error in (refused.value, hung.value):
        assert TOKEN not in error.message
        assert "stream.mp3" not in error.message
    assert icecast.connections == 1


async def test_the_probes_connection_is_the_decoders_first(
    icecast: FakeIcecast, ffmpeg: str, session: aiohttp.ClientSession
) -> None:
    """The probe's open stream starts the decoder (one connection, every byte it read given
    to FFmpeg); a restart opens a fresh one; a stream handed to a running decoder, to a task
    cancelled before it ran or with a URL that cannot play is closed, never left open."""
    registry = Broadcasts(ffmpeg, session=session, watchdog=30.0, max_backoff=0.5)
    try:
        opened = await open_probed(session, icecast.url, read_timeout=30.0)
        assert len(opened.head) > 0
        audio = registry.audio_for("main", opened.url, opened)
        await wait_for(lambda: audio.queue.received >= 25, within=10)
        assert (icecast.requests, icecast.connections) == (1, 1)
        broadcast = registry.get("main")
        assert broadcast is not None
        # Every byte the server sent, the probe's included, went into FFmpeg's stdin.
        icecast.stall()
        await wait_for(lambda: broadcast.bytes_received == icecast.bytes_sent, within=5)
        icecast.stall(False)

        spare = await open_probed(session, icecast.url)  # a second guild probed meanwhile
        assert icecast.open_connections == 2
        other = registry.audio_for("main", spare.url, spare)
        assert spare.closed  # the decoder runs: its connection is not needed
        await wait_for(lambda: icecast.open_connections == 1)

        icecast.drop_all()  # a restart opens a fresh connection
        mark = audio.queue.received
        # (The station's backlog plays on meanwhile: the count alone does not show it.)
        await wait_for(
            lambda: icecast.connections == 3 and audio.queue.received >= mark + 25, within=10
        )
        audio.cleanup()
        other.cleanup()
        await wait_for(lambda: not registry.is_running("main") and icecast.open_connections == 0)

        # Cancelled before its task ran: the last listener left at once.
        late = await open_probed(session, icecast.url)
        registry.audio_for("main", late.url, late).cleanup()
        await wait_for(lambda: late.closed and icecast.open_connections == 0)
        # A URL the engine refuses: the handed stream is closed with the refusal.
        refused = await open_probed(session, icecast.url)
        with pytest.raises(StreamUnreachable):
            registry.audio_for("other", "file:///etc/passwd", refused)
        assert refused.closed
    finally:
        await registry.close()
    await wait_for(lambda: icecast.open_connections == 0)
    assert ffmpeg_children() == []


# The SSRF guard: every connection through the guarded session --------------------------


async def test_a_stream_on_a_private_address_is_refused(
    icecast: FakeIcecast,
    production_session: aiohttp.ClientSession,
    broadcasts: Callable[..., StationBroadcast],
    restart_lines: Callable[[], list[str]],
) -> None:
    """A guild station's stream URL naming a host that resolves into the bot's network, or an
    IP literal there, is never contacted: not by the probe, not by the decoder."""
    port = icecast.base_url.rsplit(":", 1)[1]
    for url in (f"http://internal.test:{port}/stream.mp3", f"http://127.0.0.1:{port}/s.mp3"):
        with pytest.raises(StreamUnreachable) as refused:
            await probe_stream(production_session, url)
        assert "does not contact" in refused.value.message
        broadcast = broadcasts(url, on=production_session, min_backoff=0.05, max_backoff=0.1)
        audio = broadcast.audio()
        await wait_for(lambda b=broadcast: b.restarts >= 2, within=10)
        assert ffmpeg_children() == []
        audio.cleanup()
    assert icecast.requests == 0
    lines = restart_lines()
    assert all("refused" in line for line in lines), lines


@pytest.fixture
async def redirector() -> AsyncIterator[tuple[int, list[str]]]:
    """A server answering every request with a 302 to the Location the test sets."""
    location = ["/"]

    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": location[0]})

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield runner.addresses[0][1], location
    await runner.cleanup()


async def test_a_redirect_to_a_private_address_is_refused(
    icecast: FakeIcecast,
    redirector: tuple[int, list[str]],
    session: aiohttp.ClientSession,
    production_session: aiohttp.ClientSession,
    broadcasts: Callable[..., StationBroadcast],
) -> None:
    """The owner's trusted station host redirects into the bot's network (a name or an IP
    literal): the hop is refused. With loopback allowed the same redirect plays."""
    port, location = redirector
    start = f"http://radio.test:{port}/live?token={TOKEN}"
    icecast_port = icecast.base_url.rsplit(":", 1)[1]
    for target in (
        f"http://internal.test:{icecast_port}/stream.mp3",
        f"http://127.0.0.1:{icecast_port}/stream.mp3",
        f"http://[::ffff:127.0.0.1]:{icecast_port}/stream.mp3",
    ):
        location[0] = target
        with pytest.raises(StreamUnreachable) as refused:
            await probe_stream(production_session, start)
        assert "does not contact" in refused.value.message
        assert TOKEN not in refused.value.message
        broadcast = broadcasts(start, on=production_session, min_backoff=0.05, max_backoff=0.1)
        audio = broadcast.audio()
        await wait_for(lambda b=broadcast: b.restarts >= 2, within=10)
        audio.cleanup()
    assert icecast.requests == 0

    location[0] = icecast.url  # the development override: the redirect is followed
    assert await probe_stream(session, start) == icecast.url
    broadcast = broadcasts(start)
    played = broadcast.audio()
    await wait_for(lambda: played.queue.received >= 5, within=10)
    assert icecast.connections == 2  # the probe's and the decoder's
    # A guild passing the URL the probe returned joins the same decoder: no new connection.
    broadcast.retarget(icecast.url)
    again = broadcast.audio()
    await wait_for(lambda: again.queue.received >= 5, within=10)
    assert icecast.requests == 2
    assert broadcast.restarts == 0


@pytest.fixture
async def hops() -> AsyncIterator[tuple[int, list[str], list[str]]]:
    """A redirector that records every path it is asked for (its port, the Location it
    answers, the paths seen)."""
    location = ["/"]
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(status=302, headers={"Location": location[0]})

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield runner.addresses[0][1], location, seen
    await runner.cleanup()


async def test_every_redirect_hop_passes_the_station_policy_like_the_first_url(
    icecast: FakeIcecast,
    hops: tuple[int, list[str], list[str]],
    broadcasts: Callable[..., StationBroadcast],
    restart_lines: Callable[[], list[str]],
) -> None:
    """A guild station's link on an allowed host redirects to a host or port its policy
    refuses: the hop is refused before anything connects to it (the probe and the decoder
    alike), even where the resolver would let it through (``owner.test`` is the owner's config
    host, which the resolver trusts to reach internal addresses). A config station's guard
    trusts the owner's hosts, so the same hop plays there. Redirect loops end after
    ``MAX_REDIRECTS`` hops."""
    port, location, seen = hops
    icecast_port = int(icecast.base_url.rsplit(":", 1)[1])
    owner_hosts = frozenset({"radio.test", "owner.test"})
    policy = HostPolicy(allowed_hosts=("radio.test",), https_only=False, allowed_ports=(port,))
    guild = stream_guard(lambda: policy, frozenset())
    start = f"http://radio.test:{port}/live?token={TOKEN}"
    async with guarded_session(HostPolicy(), trusted=owner_hosts) as session:
        refused_hops = {
            f"http://owner.test:{port}/internal": "radio.test; owner.test is not one",
            f"http://radio.test:{icecast_port}/stream.mp3": f"not {icecast_port}",
            f"http://127.0.0.1:{port}/": "a loopback address",
            f"http://user:pw@radio.test:{port}/": "user name or password",
        }
        for target, why in refused_hops.items():
            location[0] = target
            seen.clear()
            with pytest.raises(StreamUnreachable) as refused:
                await probe_stream(session, start, guard=guild)
            assert refused.value.message == (
                f"The station's stream at http://radio.test:{port} redirected to an address "
                "OnAir does not contact."
            )
            assert why in refused.value.reason
            assert TOKEN not in refused.value.message + refused.value.reason
            assert seen == ["/live"]  # the first URL only: the hop was never contacted
        assert icecast.requests == 0

        # The decoder opens its stream (and every restart) through the same guard.
        location[0] = f"http://radio.test:{icecast_port}/stream.mp3"
        broadcast = broadcasts(start, on=session, min_backoff=0.05, max_backoff=0.1)
        broadcast.guard = guild
        audio = broadcast.audio()
        await wait_for(lambda: broadcast.restarts >= 2, within=10)
        audio.cleanup()
        assert icecast.requests == 0
        lines = restart_lines()
        assert "a redirect refused" in lines[0], lines

        # A first URL the policy refuses is not contacted either.
        seen.clear()
        with pytest.raises(StreamUnreachable) as first:
            await probe_stream(session, f"http://owner.test:{port}/live", guard=guild)
        assert "is on an address OnAir does not contact" in first.value.message
        assert seen == []

        # The owner's config station trusts its own hosts: the same hop plays.
        owner = stream_guard(lambda: policy, owner_hosts)
        assert await probe_stream(session, start, guard=owner) == location[0]
        assert icecast.connections == 1

        # A redirect loop is bounded: the first request and MAX_REDIRECTS hops, then refused.
        location[0] = start
        seen.clear()
        with pytest.raises(StreamUnreachable) as looped:
            await probe_stream(session, start, guard=guild)
        assert "redirected too many times" in looped.value.message
        assert len(seen) == MAX_REDIRECTS + 1


@pytest.mark.parametrize(
    ("head", "words"),
    [
        (b"ICY 200 OK\r\nicy-name: v1\r\n\r\n", "does not speak HTTP"),  # SHOUTcast v1
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 10_000 + b"\r\n\r\n", "does not speak HTTP"),
        (b"HTTP/1.1 200 OK\r\n" + b"X-H: 1\r\n" * 200 + b"\r\n", "does not speak HTTP"),
    ],
    ids=["icy-status-line", "huge-header", "too-many-headers"],
)
async def test_answers_aiohttp_cannot_parse_are_polite_refusals(
    session: aiohttp.ClientSession, head: bytes, words: str
) -> None:
    """aiohttp (llhttp and its Python parser alike) refuses SHOUTcast v1's ``ICY 200 OK``, and
    headers are bounded: each is a polite StreamUnreachable, not a traceback."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head + b"\xff\xfb" * 2000)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(StreamUnreachable) as refused:
            await probe_stream(session, f"http://127.0.0.1:{port}/;stream.mp3?token={TOKEN}")
    finally:
        server.close()
        await server.wait_closed()
    assert words in refused.value.message
    assert TOKEN not in refused.value.message


@contextlib.asynccontextmanager
async def answering(content_type: str | None) -> AsyncIterator[str]:
    """A loopback server answering 200 with this Content-Type header (None: no such header)
    and some bytes; yields a stream URL carrying a listener token."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await reader.readuntil(b"\r\n\r\n")
            header = f"Content-Type: {content_type}\r\n" if content_type is not None else ""
            writer.write(f"HTTP/1.1 200 OK\r\n{header}\r\n".encode() + b"\xff\xfb" * 4000)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/player/index.html?token={TOKEN}"
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    ("content_type", "words"),
    [
        ("text/html; charset=utf-8", "is a web page, not an audio stream"),
        ("application/json", "is a web page, not an audio stream"),
        ("application/hal+json", "is a web page, not an audio stream"),
        ("TEXT/PLAIN", "is a web page, not an audio stream"),
        ("audio/x-mpegurl", "is a playlist, not an audio stream"),
        ("image/png", "does not send audio"),
        ("text/html\x01<script>", "is a web page, not an audio stream"),
    ],
)
async def test_an_answer_that_is_not_audio_is_refused_by_name(
    session: aiohttp.ClientSession, content_type: str, words: str
) -> None:
    """A listen link answering 200 with a web player page, JSON, a playlist or an image is a
    polite refusal naming the host (not its path or token), never bytes fed to FFmpeg."""
    async with answering(content_type) as url:
        with pytest.raises(StreamUnreachable) as refused:
            await probe_stream(session, url)
    message = refused.value.message
    host = url.split("/player", 1)[0]
    assert message == f"The station's stream at {host} {words}."
    assert TOKEN not in message + refused.value.reason
    assert "<script>" not in refused.value.reason  # the server's text is not echoed


@pytest.mark.parametrize(
    "content_type",
    [
        "audio/mpeg",
        "audio/aacp",
        "audio/ogg",
        "Audio/MPEG; charset=x",
        "application/ogg",
        "application/octet-stream",
        None,
    ],
)
async def test_audio_content_types_and_none_are_played(
    session: aiohttp.ClientSession, content_type: str | None
) -> None:
    """What Icecast and SHOUTcast send (and servers that send no type at all) passes."""
    async with answering(content_type) as url:
        assert await probe_stream(session, url) == url


async def test_the_decoder_refuses_a_web_page_and_says_so_in_its_restart_line(
    session: aiohttp.ClientSession,
    broadcasts: Callable[..., StationBroadcast],
    restart_lines: Callable[[], list[str]],
) -> None:
    """The decoder opens the stream with the same check: no FFmpeg starts on a web page."""
    async with answering("text/html") as url:
        broadcast = broadcasts(url, min_backoff=0.05, max_backoff=0.1)
        audio = broadcast.audio()
        await wait_for(lambda: broadcast.restarts >= 2, within=10)
        assert ffmpeg_children() == []
        assert broadcast.frames_produced == 0
        audio.cleanup()
    lines = restart_lines()
    assert lines
    assert "a web page (text/html), not an audio stream" in lines[0]
    assert TOKEN not in "\n".join(lines)


# find_ffmpeg and decode_args ----------------------------------------------------------


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


# The source and the queue (no FFmpeg) ---------------------------------------------------


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


# The Ogg parser ---------------------------------------------------------------------------


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
