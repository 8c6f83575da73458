"""Voice: N guilds playing one station, one shared FFmpeg against one FFmpeg per guild (issue 12).

For each N (``--guilds``, default 10,50,100) two runs of ``--seconds`` (default 30) in this one
process, the baseline in the same run:

- ``shared``: one StationBroadcast (one FFmpeg, one upstream connection) feeding N StationAudio;
- ``per-guild``: N ``discord.FFmpegOpusAudio`` (N FFmpeg processes, N upstream connections).

Each guild is played by discord.py's own ``AudioPlayer`` thread (``read()`` every 20 ms). Its
voice client is a stand-in that does per packet what ``VoiceClient.send_audio_packet`` does in
the ``aead_xchacha20_poly1305_rtpsize`` mode: RTP header, XChaCha20-Poly1305 with PyNaCl, one
UDP datagram to a loopback sink. THIS IS NOT YET THROUGH THE FAKE DISCORD VOICE SERVER (no
gateway, no voice websocket, no DAVE session object): it measures the engine and the per-packet
transport work; the output says so in ``through``. The fake Icecast (an endless 128 kbit/s MP3
made with FFmpeg's sine source) runs in a child process so its CPU is not counted as the bot's.

Figures per run: CPU (cores = CPU seconds per wall second) of this process (the bot side) and of
its FFmpeg processes, RSS of both, frames/s per guild (min and median, all frames and audio
frames only), upstream connections opened, the event loop's worst lag, decoder restarts.

    .venv/bin/python -m bench.voice [--guilds 10,50,100] [--seconds 30] [--quick]

Goal (issue 12): 100 guilds on one station at >= 49.5 frames/s for every guild, <= 0.6 of a core
for the bot plus FFmpeg, one upstream connection.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import socket
import statistics
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import discord
import nacl.secret
from discord.player import AudioPlayer

from bot.voice import OPUS_SILENCE, Broadcasts, find_ffmpeg
from tests.support.fakeicecast import make_mp3
from tests.support.waiting import wait_for

from .common import LoopLag, cpu_seconds, emit, rss_mb

THROUGH = "engine + discord.py AudioPlayer + PyNaCl transport (not yet the fake Discord)"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) a live process has used (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def proc_rss_mb(pid: int) -> float:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE / 1e6
    except OSError:
        return 0.0


class _Speaker:
    async def speak(self, state: Any) -> None:
        return None


@dataclass
class _Loop:
    loop: asyncio.AbstractEventLoop


@dataclass
class BenchVoiceClient:
    """What ``AudioPlayer`` needs of a VoiceClient, sending as VoiceClient does per packet."""

    loop: asyncio.AbstractEventLoop
    sink: tuple[str, int]
    ssrc: int
    timeout: float = 30.0
    frames: int = 0
    audio: int = 0
    sequence: int = 0
    timestamp: int = 0
    ws: _Speaker = field(default_factory=_Speaker)

    def __post_init__(self) -> None:
        self.client = _Loop(self.loop)
        self._box = nacl.secret.Aead(os.urandom(32))
        self._nonce = 0
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._socket.setblocking(False)

    def is_connected(self) -> bool:
        return True

    def wait_until_connected(self, timeout: float | None = 30.0) -> bool:
        return True

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None:
        self.sequence = (self.sequence + 1) & 0xFFFF
        header = bytearray(12)
        header[0], header[1] = 0x80, 0x78
        struct.pack_into(">HII", header, 2, self.sequence, self.timestamp, self.ssrc)
        nonce = bytearray(24)
        nonce[:4] = struct.pack(">I", self._nonce)
        self._nonce = (self._nonce + 1) & 0xFFFFFFFF
        sealed = self._box.encrypt(bytes(data), bytes(header), bytes(nonce)).ciphertext
        # A full loopback buffer drops the datagram, as a congested network would.
        with contextlib.suppress(OSError):
            self._socket.sendto(bytes(header) + sealed + nonce[:4], self.sink)
        self.timestamp = (self.timestamp + 960) & 0xFFFFFFFF
        self.frames += 1
        if data != OPUS_SILENCE:
            self.audio += 1

    def close(self) -> None:
        self._socket.close()


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


def _fps(values: list[float]) -> dict[str, float]:
    return {
        "min": round(min(values), 2),
        "median": round(statistics.median(values), 2),
    }


async def run(
    mode: str,
    guilds: int,
    *,
    ffmpeg: str,
    icecast: Icecast,
    session: aiohttp.ClientSession,
    seconds: float,
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # never read: datagrams just drop
    sink.bind(("127.0.0.1", 0))
    clients = [BenchVoiceClient(loop, sink.getsockname(), ssrc=1000 + n) for n in range(guilds)]
    connections_before = await icecast.connections(session)
    broadcasts = Broadcasts(ffmpeg)
    sources: list[discord.AudioSource] = []
    if mode == "shared":
        sources = [broadcasts.audio_for("bench", icecast.url) for _ in clients]
    else:
        sources = [
            discord.FFmpegOpusAudio(
                icecast.url,
                bitrate=128,
                executable=ffmpeg,
                before_options="-reconnect 1 -reconnect_streamed 1 -reconnect_delay_max 5",
                options="-loglevel error",
            )
            for _ in clients
        ]
    players = [AudioPlayer(source, client) for source, client in zip(sources, clients, strict=True)]  # type: ignore[arg-type]
    for player in players:
        player.start()
    # Warm up: every guild has played audio, then one more second.
    with contextlib.suppress(AssertionError):  # measured anyway: the figures will show it
        await wait_for(lambda: all(client.audio for client in clients), within=20, step=0.1)
    await asyncio.sleep(1.0)

    def ffmpeg_pids() -> list[int]:
        if mode == "shared":
            broadcast = broadcasts.get("bench")
            pid = broadcast.pid if broadcast is not None else None
            return [pid] if pid is not None else []
        return [source._process.pid for source in sources]  # type: ignore[attr-defined]

    pids = ffmpeg_pids()
    lag = LoopLag().start()
    frames0 = [client.frames for client in clients]
    audio0 = [client.audio for client in clients]
    cpu0, ff0, wall0 = cpu_seconds(), {pid: proc_cpu(pid) for pid in pids}, time.perf_counter()
    await asyncio.sleep(seconds)
    wall = time.perf_counter() - wall0
    cpu = cpu_seconds() - cpu0
    ff_cpu = sum(proc_cpu(pid) - start for pid, start in ff0.items())
    frames = [(c.frames - f) / wall for c, f in zip(clients, frames0, strict=True)]
    audio = [(c.audio - a) / wall for c, a in zip(clients, audio0, strict=True)]
    bot_rss = rss_mb()
    ff_rss = sum(proc_rss_mb(pid) for pid in ffmpeg_pids())
    await lag.stop()
    restarts = sum(stats.restarts for stats in broadcasts.stats().values())

    for player in players:
        player.stop()
    for player in players:
        await asyncio.to_thread(player.join, 5)
    await broadcasts.close()
    for source in sources:
        source.cleanup()
    for client in clients:
        client.close()
    sink.close()
    connections = await icecast.connections(session) - connections_before
    return {
        "bench": "voice",
        "through": THROUGH,
        "mode": mode,
        "guilds": guilds,
        "seconds": round(wall, 1),
        "bot_cores": round(cpu / wall, 3),
        "ffmpeg_cores": round(ff_cpu / wall, 3),
        "total_cores": round((cpu + ff_cpu) / wall, 3),
        "ffmpeg_processes": len(pids),
        "bot_rss_mb": round(bot_rss, 1),
        "ffmpeg_rss_mb": round(ff_rss, 1),
        "fps": _fps(frames),
        "audio_fps": _fps(audio),
        "guilds_below_49_5": sum(1 for value in frames if value < 49.5),
        "upstream_connections": connections,
        "decoder_restarts": restarts,
        "loop_worst_lag_ms": round(lag.worst * 1000, 1),
    }


def _table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'guilds':>6} {'mode':<9} {'bot':>6} {'ffmpeg':>7} {'total':>6} {'fps min':>8} "
        f"{'fps med':>8} {'audio min':>9} {'<49.5':>6} {'conns':>5} {'RSS bot':>8} {'RSS ff':>7}"
    )
    lines = [f"voice bench through: {THROUGH}", "cores = CPU s per wall s; RSS in MB", head]
    for r in results:
        lines.append(
            f"{r['guilds']:>6} {r['mode']:<9} {r['bot_cores']:>6.3f} {r['ffmpeg_cores']:>7.3f} "
            f"{r['total_cores']:>6.3f} {r['fps']['min']:>8.2f} {r['fps']['median']:>8.2f} "
            f"{r['audio_fps']['min']:>9.2f} {r['guilds_below_49_5']:>6} "
            f"{r['upstream_connections']:>5} {r['bot_rss_mb']:>8.1f} {r['ffmpeg_rss_mb']:>7.1f}"
        )
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guilds", default="10,50,100", help="comma-separated guild counts")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured seconds per run")
    parser.add_argument("--quick", action="store_true", help="5 and 10 guilds, 5 s each")
    parser.add_argument(
        "--modes", default="shared,per-guild", help="shared, per-guild or both (the default)"
    )
    args = parser.parse_args()
    counts = [5, 10] if args.quick else [int(n) for n in args.guilds.split(",") if n.strip()]
    seconds = 5.0 if args.quick else args.seconds
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    binary = find_ffmpeg()
    if binary is None:
        raise SystemExit("no FFmpeg: set ONAIR_FFMPEG or install imageio-ffmpeg")
    with tempfile.TemporaryDirectory() as tmp:
        mp3 = await asyncio.to_thread(make_mp3, binary.path, Path(tmp) / "sine.mp3")
        icecast = Icecast(mp3)
        await icecast.start()
        results = []
        try:
            async with aiohttp.ClientSession() as session:
                for guilds in counts:
                    for mode in modes:
                        result = await run(
                            mode,
                            guilds,
                            ffmpeg=binary.path,
                            icecast=icecast,
                            session=session,
                            seconds=seconds,
                        )
                        emit(result)
                        results.append(result)
        finally:
            await icecast.stop()
    print(_table(results), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
