"""What the voice engine tests share: the audio files FFmpeg makes, the fake Icecast, sessions
through OnAir's guarded resolver (loopback allowed, or the production policy), broadcasts that
are closed after the test, and players that read every 20 ms as discord.py's AudioPlayer does.
"""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import aiohttp
import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from bot.guard.netguard import GuardedResolver, HostPolicy, literal_guard
from bot.voice import (
    OPUS_SILENCE,
    StationAudio,
    StationBroadcast,
)

from .broadcasting import broadcasting
from .fakeicecast import FakeIcecast, make_mp3

TOKEN = "listener-token-SECRET-77"


@pytest.fixture(scope="session", name="mp3")
def mp3_fixture(ffmpeg: str, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return make_mp3(ffmpeg, tmp_path_factory.mktemp("voice") / "sine.mp3").read_bytes()


@pytest.fixture(scope="session", name="ogg_opus")
def ogg_opus_fixture(ffmpeg: str) -> bytes:
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


@pytest.fixture(name="icecast")
async def icecast_fixture(mp3: bytes) -> AsyncIterator[FakeIcecast]:
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


@pytest.fixture(name="session")
async def session_fixture() -> AsyncIterator[aiohttp.ClientSession]:
    """Guarded, with the development override (loopback allowed): the fake Icecast plays."""
    async with guarded_session(HostPolicy(allow_private=True)) as client_session:
        yield client_session


@pytest.fixture(name="production_session")
async def production_session_fixture() -> AsyncIterator[aiohttp.ClientSession]:
    """Guarded with the production policy; ``radio.test`` is an owner's trusted config host."""
    async with guarded_session(HostPolicy(), trusted=frozenset({"radio.test"})) as client_session:
        yield client_session


@pytest.fixture(name="broadcasts")
async def broadcasts_fixture(
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


@pytest.fixture(name="players")
def players_fixture() -> Iterator[Callable[[StationAudio], Player]]:
    started: list[Player] = []

    def start(source: StationAudio) -> Player:
        player = Player(source)
        player.start()
        started.append(player)
        return player

    yield start
    for player in started:
        player.stop()


@pytest.fixture(name="restart_lines")
def restart_lines_fixture(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """The engine's "decoder restart" warnings so far, as logged (they are captured from here)."""
    caplog.set_level(logging.WARNING, logger="bot.voice")
    return lambda: [r.getMessage() for r in caplog.records if "decoder restart" in r.getMessage()]


@pytest.fixture(name="fake_ffmpeg")
def fake_ffmpeg_fixture(tmp_path: Path) -> Callable[[str, str], str]:
    """Writes a shell script standing in for FFmpeg (how a broken or stuck decoder behaves, or
    one that is only found) at ``name`` below the test's folder; returns its path."""

    def write(name: str, body: str) -> str:
        script = tmp_path / name
        script.write_text(f"#!/bin/sh\n{body}\n")
        script.chmod(0o755)
        return str(script)

    return write


ScriptedBroadcast = Callable[..., AbstractAsyncContextManager[StationBroadcast]]


@pytest.fixture(name="scripted_broadcast")
def scripted_broadcast_fixture(
    fake_ffmpeg: Callable[[str, str], str], session: aiohttp.ClientSession
) -> ScriptedBroadcast:
    """A broadcast of ``url`` through the guarded session whose "FFmpeg" is a script (``name``,
    ``body``: see ``fake_ffmpeg``), closed when the ``async with`` block ends."""

    def start(
        url: str, name: str, body: str, **options: float
    ) -> AbstractAsyncContextManager[StationBroadcast]:
        return broadcasting(url, fake_ffmpeg(name, body), session, **options)

    return start
