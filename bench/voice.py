"""Voice: N guilds playing one station: the process's one sender against a player per guild
(issues 12 and 26).

For each N (``--guilds``, default 100,300; 1,000 when the machine allows) one run of
``--seconds`` (default 30) per mode, the baselines in the same run:

- ``sender``: one StationBroadcast (one FFmpeg, one upstream connection) and the process's one
  ``VoiceSender`` (one thread, one 20 ms clock) sending each frame to every guild's
  ``OnAirVoiceClient`` (issue 26);
- ``players`` (``shared`` is the same): the same decoder feeding one discord.py ``AudioPlayer``
  thread per guild through its own StationAudio (OnAir before issue 26);
- ``per-guild``: N ``discord.FFmpegOpusAudio`` (N FFmpeg processes, N upstream connections).

Shards: as many as it takes to join every guild in one window of Discord's gateway limit (120
sends per 60 s per shard, which the fake enforces; discord.py paces itself at 110): ``--shards``
or one per 100 guilds. The join time (all shards identified, then every guild connected and
playing) is reported. The fake voice server counts every packet and sequence gap and decrypts
one packet in 50 per guild (``decrypt_every``); the p99 gap between a guild's frames is read from
the kernel's arrival stamps. The 1-min load average is printed beside each run: the machine may
be shared.

Two harnesses (``--through``; the output names the one used):

- ``fake`` (the default once ``tests/support/fakevoice`` exists): the fake Discord runs in this
  process; the bot is a discord.py client in a child process with N guilds, each a real
  VoiceClient (voice websocket over TLS, UDP, transport encryption, DAVE passthrough) whose
  packets the fake's voice server decrypts and counts. "bot" CPU and RSS are that child's.
- ``engine``: no Discord at all. discord.py's own ``AudioPlayer`` threads in this process, each
  into a stand-in that does per packet what ``VoiceClient.send_audio_packet`` does in the
  ``aead_xchacha20_poly1305_rtpsize`` mode (RTP header, XChaCha20-Poly1305 with PyNaCl, one UDP
  datagram to a loopback sink). NOT through the fake Discord.

The fake Icecast (an endless 128 kbit/s MP3 made with FFmpeg's sine source) runs in a child
process so its CPU is nobody's. Figures per run: CPU (cores = CPU seconds per wall second) of the
bot process and of its FFmpeg children, RSS of both, frames/s per guild (min and median; all
frames from the kernel's stamps within the window, audio frames from the fake's counters),
sequence gaps (fake only), upstream connections opened, the bot's event-loop worst lag, decoder
restarts; per thread of the bot, the time run and the time waited for a CPU (the load).

    .venv/bin/python -m bench.voice [--guilds 100,300] [--seconds 30] [--quick]
        [--modes sender,players] [--shards N] [--through auto|fake|engine]
    .venv/bin/python -m bench.voice --formats [mp3-128,mp3-320,aac-128,vorbis,opus] [--seconds 10]

``--formats`` measures each mount format of issue 27 instead (``bench/voice_formats.py``).

Goals (issue 26): 1,000 guilds at >= 49.5 frames/s for every guild, 0 sequence gaps, p99 gap
between frames <= 25 ms; <= 1.0 core for the bot plus FFmpeg (100 guilds <= 0.15); the bot's
event-loop worst lag <= 20 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

import aiohttp

from bot.voice import find_ffmpeg
from tests.support.fakeicecast import make_mp3
from tests.support.icecast_media import FORMATS
from tests.support.waiting import wait_for

from . import voice_formats
from .common import emit
from .voice_parts.shared import TOKEN_ENV, measure
from .voice_parts.table import table

THROUGH = {
    "fake": "the fake Discord: a discord.py client process, one real VoiceClient per guild",
    "engine": "engine + discord.py AudioPlayer + PyNaCl transport stand-in (NOT the fake Discord)",
}


class Icecast:
    """The fake Icecast in a child process."""

    def __init__(self, mp3: Path) -> None:
        self.mp3 = mp3
        self.url = ""
        self._proc: asyncio.subprocess.Process | None = None

    async def start(self) -> str:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.support.fakeicecast",
            "--mp3",
            str(self.mp3),
            stdout=asyncio.subprocess.PIPE,
        )
        assert self._proc.stdout is not None
        line = await asyncio.wait_for(self._proc.stdout.readline(), timeout=30)
        self.url = line.decode().strip()
        return self.url

    async def connections(self, session: aiohttp.ClientSession) -> int:
        base = self.url.rsplit("/", 1)[0]
        async with session.get(f"{base}/_admin/counters") as response:
            return int((await response.json())["connections"])

    async def stop(self) -> None:
        if self._proc is not None and self._proc.returncode is None:
            self._proc.terminate()
            await self._proc.wait()


def shards_for(guilds: int) -> int:
    """Shards to join every guild within one window of the gateway limit (100 joins a shard)."""
    return max(1, -(-guilds // 100))


async def run_fake(
    mode: str, guilds: int, *, ffmpeg: str, url: str, seconds: float, tmp: Path, shards: int
) -> dict[str, Any]:
    """A discord.py client in a child process (the bot process) with N guilds on ``shards``
    shards, each VoiceClient connected to the fake Discord's voice server, which counts every
    packet and sequence gap (and decrypts a sample)."""
    from tests.support.fakediscord import FakeDiscord
    from tests.support.fakevoice import FrameStats
    from tests.support.run_against_fake import CA_ENV, PORT_ENV

    fake = FakeDiscord(guild_count=guilds, channels_per_guild=1)
    for index, guild in enumerate(fake.guilds):
        # Ids spread over the shards by Discord's formula (id >> 22) % shards (the fake's own
        # are made in one millisecond: one shard's).
        guild.id = ((1 << 20) + index) << 22 | 1
        guild.roles[0] = guild.id
        fake.add_voice_channel(guild, "Radio")
    fake.voice.decrypt_every = 50
    await fake.start()
    ca = tmp / "fake-ca.pem"
    fake.ca.cert_pem.write_to_path(str(ca))
    env = {**os.environ, CA_ENV: str(ca), PORT_ENV: str(fake.port), TOKEN_ENV: fake.expected_token}
    child = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bench.voice", "--child", mode, "--url", url),
        *("--shards", str(shards)),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    try:
        line = await asyncio.wait_for(child.stdout.readline(), timeout=900)
        if not line.startswith(b"ready"):
            raise RuntimeError(f"the bench's bot process did not play: {line.decode()[:300]}")
        joined = json.loads(line[len(b"ready") :] or b"{}")
        ids = [guild.id for guild in fake.guilds]
        empty = FrameStats()

        def counts() -> list[tuple[int, int, int]]:
            every = fake.voice.all_stats(arrivals=False)
            stats = [every.get(guild_id, empty) for guild_id in ids]
            return [(s.frames, s.audio, s.gaps) for s in stats]

        def arrivals(start: float, end: float) -> list[list[float]]:
            every = fake.voice.all_stats()
            got = [every.get(guild_id, empty).arrivals for guild_id in ids]
            return [[t for t in times if start <= t <= end] for times in got]

        with contextlib.suppress(AssertionError):
            await wait_for(lambda: all(c[1] for c in counts()), within=60, step=0.5)
        await asyncio.sleep(2.0)
        result = await measure(child.pid, counts, seconds, arrivals)
        result.update(joined)
        result["gateway_rate_limited"] = fake.gateway_rate_limited
        child.send_signal(signal.SIGTERM)
        report = json.loads(await asyncio.wait_for(child.stdout.readline(), timeout=60) or "{}")
        result.update(report)
        await asyncio.wait_for(child.wait(), timeout=30)
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
        await fake.stop()
    return result


def fake_available() -> bool:
    return importlib.util.find_spec("tests.support.fakevoice") is not None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guilds", default="100,300", help="comma-separated guild counts")
    parser.add_argument(
        "--seconds", type=float, help="measured seconds per run (30; 10 with --formats)"
    )
    parser.add_argument("--quick", action="store_true", help="5 and 10 guilds, 5 s each")
    parser.add_argument(
        "--modes", default="sender,players", help="sender, players (= shared), per-guild"
    )
    parser.add_argument("--shards", type=int, default=0, help="0: one per 100 guilds")
    parser.add_argument(
        "--through",
        choices=("auto", "fake", "engine"),
        default="auto",
        help="fake: the fake Discord voice server (default when present); engine: without it",
    )
    parser.add_argument(
        "--formats",
        nargs="?",
        const="",
        help="per mount format against the fake Icecast 2 (issue 27): first audio, silence "
        "after a drop, frames/s; all formats, or a comma-separated list of " + ", ".join(FORMATS),
    )
    parser.add_argument(
        "--child", choices=("sender", "players", "per-guild"), help=argparse.SUPPRESS
    )
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        from .voice_parts.child import child_main

        await child_main(args.child, args.url, max(1, args.shards))
        return
    counts = [5, 10] if args.quick else [int(n) for n in args.guilds.split(",") if n.strip()]
    seconds = 5.0 if args.quick else args.seconds or 30.0
    modes = [
        "players" if m.strip() == "shared" else m.strip()
        for m in args.modes.split(",")
        if m.strip()
    ]
    through = args.through
    if through == "auto":
        through = "fake" if fake_available() else "engine"
    binary = find_ffmpeg()
    if binary is None:
        raise SystemExit("no FFmpeg: set ONAIR_FFMPEG or install imageio-ffmpeg")
    if args.formats is not None:
        with tempfile.TemporaryDirectory() as tmp:
            await voice_formats.run(
                binary.path, Path(tmp), args.seconds or 10.0,
                voice_formats.names(args.formats),
            )  # fmt: skip
        return
    print(f"voice bench through: {THROUGH[through]}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        mp3 = await asyncio.to_thread(make_mp3, binary.path, Path(tmp) / "sine.mp3")
        icecast = Icecast(mp3)
        url = await icecast.start()
        results = []
        try:
            async with aiohttp.ClientSession() as session:
                for guilds in counts:
                    for mode in modes:
                        opened = await icecast.connections(session)
                        if through == "fake":
                            result = await run_fake(
                                mode,
                                guilds,
                                ffmpeg=binary.path,
                                url=url,
                                seconds=seconds,
                                tmp=Path(tmp),
                                shards=args.shards or shards_for(guilds),
                            )
                        else:
                            from .voice_parts.engine import run_engine

                            result = await run_engine(
                                mode, guilds, ffmpeg=binary.path, url=url, seconds=seconds
                            )
                        opened = await icecast.connections(session) - opened
                        result = {
                            "bench": "voice",
                            "through": through,
                            "mode": mode,
                            "guilds": guilds,
                            **result,
                            "upstream_connections": opened,
                        }
                        emit(result)
                        results.append(result)
        finally:
            await icecast.stop()
    print(f"voice bench through: {THROUGH[through]}", flush=True)
    print(table(results), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
