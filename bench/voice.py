"""Voice: N guilds playing one station, one shared FFmpeg against one FFmpeg per guild (issue 12).

For each N (``--guilds``, default 10,50,100) two runs of ``--seconds`` (default 30), the baseline
in the same run:

- ``shared``: one StationBroadcast (one FFmpeg, one upstream connection) feeding N StationAudio;
- ``per-guild``: N ``discord.FFmpegOpusAudio`` (N FFmpeg processes, N upstream connections).

Two harnesses (``--through``; the output names the one used):

- ``fake`` (the default once ``tests/support/fakevoice.py`` exists): the fake Discord runs in this
  process; the bot is a discord.py client in a child process with N guilds, each a real
  VoiceClient (voice websocket over TLS, UDP, transport encryption, DAVE passthrough) whose
  packets the fake's voice server decrypts and counts. "bot" CPU and RSS are that child's.
- ``engine``: no Discord at all. discord.py's own ``AudioPlayer`` threads in this process, each
  into a stand-in that does per packet what ``VoiceClient.send_audio_packet`` does in the
  ``aead_xchacha20_poly1305_rtpsize`` mode (RTP header, XChaCha20-Poly1305 with PyNaCl, one UDP
  datagram to a loopback sink). NOT through the fake Discord.

The fake Icecast (an endless 128 kbit/s MP3 made with FFmpeg's sine source) runs in a child
process so its CPU is nobody's. Figures per run: CPU (cores = CPU seconds per wall second) of the
bot process and of its FFmpeg children, RSS of both, frames/s per guild (min and median, all
frames and audio frames only; count over the measured wall time), sequence gaps (fake only),
upstream connections opened, the bot's event-loop worst lag, decoder restarts.

    .venv/bin/python -m bench.voice [--guilds 10,50,100] [--seconds 30] [--quick]
        [--modes shared,per-guild] [--through auto|fake|engine]
    .venv/bin/python -m bench.voice --formats [mp3-128,mp3-320,aac-128,vorbis,opus] [--seconds 10]

``--formats`` measures each mount format of issue 27 instead (``bench/voice_formats.py``).

Goal (issue 12): 100 guilds on one station at >= 49.5 frames/s for every guild, <= 0.6 of a core
for the bot plus FFmpeg, one upstream connection.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import importlib.util
import json
import os
import signal
import socket
import statistics
import struct
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import aiohttp
import discord
import nacl.secret
from discord.player import AudioPlayer

from bot.guard.netguard import GuardedResolver, HostPolicy
from bot.voice import OPUS_SILENCE, Broadcasts, find_ffmpeg
from tests.support.fakeicecast import make_mp3
from tests.support.icecast_media import FORMATS
from tests.support.waiting import wait_for

from . import voice_formats
from .common import LoopLag, emit

THROUGH = {
    "fake": "the fake Discord: a discord.py client process, one real VoiceClient per guild",
    "engine": "engine + discord.py AudioPlayer + PyNaCl transport stand-in (NOT the fake Discord)",
}
TOKEN_ENV = "ONAIR_BENCH_VOICE_TOKEN"
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
    return {"min": round(min(values), 2), "median": round(statistics.median(values), 2)}


def ffmpeg_children(parent: int) -> list[int]:
    """FFmpeg processes whose parent is ``parent`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            if name.startswith("ffmpeg") and int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(entry.name))
    return found


@functools.cache
def _devnull() -> IO[bytes]:
    return open(os.devnull, "wb")


def stream_session() -> aiohttp.ClientSession:
    """The bot's kind of session for the stream (guarded resolver; loopback allowed for the
    fake Icecast, as the development override does)."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(resolver=GuardedResolver(HostPolicy(allow_private=True))),
        timeout=aiohttp.ClientTimeout(total=15, connect=5),
    )


def make_source(mode: str, broadcasts: Broadcasts, url: str, ffmpeg: str) -> discord.AudioSource:
    if mode == "shared":
        return broadcasts.audio_for("bench", url)
    return discord.FFmpegOpusAudio(
        url,
        bitrate=128,
        executable=ffmpeg,
        before_options="-reconnect 1 -reconnect_streamed 1 -reconnect_delay_max 5",
        options="-loglevel error",
        stderr=_devnull(),  # "broken pipe" when a run ends is noise here
    )


Counts = Callable[[], list[tuple[int, int, int]]]  # per guild: (frames, audio frames, gaps)


async def measure(bot_pid: int, counts: Counts, seconds: float) -> dict[str, Any]:
    """CPU, RSS and per-guild frame rates over ``seconds`` of wall time."""
    pids = ffmpeg_children(bot_pid)
    before = counts()
    bot0, ff0, wall0 = proc_cpu(bot_pid), {p: proc_cpu(p) for p in pids}, time.perf_counter()
    await asyncio.sleep(seconds)
    after = counts()
    wall = time.perf_counter() - wall0
    bot = proc_cpu(bot_pid) - bot0
    ff = sum(proc_cpu(pid) - start for pid, start in ff0.items())
    frames = [(b[0] - a[0]) / wall for a, b in zip(before, after, strict=True)]
    audio = [(b[1] - a[1]) / wall for a, b in zip(before, after, strict=True)]
    return {
        "seconds": round(wall, 1),
        "bot_cores": round(bot / wall, 3),
        "ffmpeg_cores": round(ff / wall, 3),
        "total_cores": round((bot + ff) / wall, 3),
        "ffmpeg_processes": len(pids),
        "bot_rss_mb": round(proc_rss_mb(bot_pid), 1),
        "ffmpeg_rss_mb": round(sum(proc_rss_mb(pid) for pid in pids), 1),
        "fps": _fps(frames),
        "audio_fps": _fps(audio),
        "guilds_below_49_5": sum(1 for value in frames if value < 49.5),
        "sequence_gaps": sum(b[2] - a[2] for a, b in zip(before, after, strict=True)),
    }


async def run_engine(
    mode: str, guilds: int, *, ffmpeg: str, url: str, seconds: float
) -> dict[str, Any]:
    """N discord.py AudioPlayer threads in this process, each into a transport stand-in."""
    loop = asyncio.get_running_loop()
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # never read: datagrams just drop
    sink.bind(("127.0.0.1", 0))
    clients = [BenchVoiceClient(loop, sink.getsockname(), ssrc=1000 + n) for n in range(guilds)]
    session = stream_session()
    broadcasts = Broadcasts(ffmpeg, session=session)
    sources = [make_source(mode, broadcasts, url, ffmpeg) for _ in clients]
    players = [
        AudioPlayer(source, client)  # type: ignore[arg-type]
        for source, client in zip(sources, clients, strict=True)
    ]
    start = loop.time()
    for index, player in enumerate(players):
        # Spread the players' 20-ms phases as voice connections made one after another would
        # (started all at once, every thread wakes in the same millisecond and they queue for
        # the GIL: a cost no real bot has).
        await asyncio.sleep(max(0.0, start + index * 0.02 / guilds - loop.time()))
        player.start()
    with contextlib.suppress(AssertionError):  # measured anyway: the figures will show it
        await wait_for(lambda: all(client.audio for client in clients), within=20, step=0.1)
    await asyncio.sleep(1.0)  # past the start-up burst
    lag = LoopLag().start()
    result = await measure(os.getpid(), lambda: [(c.frames, c.audio, 0) for c in clients], seconds)
    await lag.stop()
    result["decoder_restarts"] = sum(s.restarts for s in broadcasts.stats().values())
    result["loop_worst_lag_ms"] = round(lag.worst * 1000, 1)
    for player in players:
        player.stop()
    for player in players:
        await asyncio.to_thread(player.join, 5)
    await broadcasts.close()
    await session.close()
    for source in sources:
        source.cleanup()
    for client in clients:
        client.close()
    sink.close()
    return result


async def run_fake(
    mode: str, guilds: int, *, ffmpeg: str, url: str, seconds: float, tmp: Path
) -> dict[str, Any]:
    """A discord.py client in a child process (the bot process) with N guilds, each VoiceClient
    connected to the fake Discord's voice server, which decrypts and counts every packet."""
    from tests.support.fakediscord import FakeDiscord
    from tests.support.run_against_fake import CA_ENV, PORT_ENV

    fake = FakeDiscord(guild_count=guilds, channels_per_guild=1)
    for guild in fake.guilds:
        fake.add_voice_channel(guild, "Radio")
    await fake.start()
    ca = tmp / "fake-ca.pem"
    fake.ca.cert_pem.write_to_path(str(ca))
    env = {**os.environ, CA_ENV: str(ca), PORT_ENV: str(fake.port), TOKEN_ENV: fake.expected_token}
    child = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bench.voice", "--child", mode, "--url", url),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    try:
        line = await asyncio.wait_for(child.stdout.readline(), timeout=180)
        if line.strip() != b"ready":
            raise RuntimeError(f"the bench's bot process did not play: {line.decode()[:300]}")

        def counts() -> list[tuple[int, int, int]]:
            stats = [fake.voice.stats(guild.id) for guild in fake.guilds]
            return [(s.frames, s.audio, s.gaps) for s in stats]

        with contextlib.suppress(AssertionError):
            await wait_for(lambda: all(c[1] for c in counts()), within=30, step=0.1)
        await asyncio.sleep(1.0)
        result = await measure(child.pid, counts, seconds)
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


def _fake_connector() -> aiohttp.TCPConnector:
    """The fake's connector as ``tests.support.run_against_fake`` builds it (no connection
    limit, as discord.py's own)."""
    from tests.support.run_against_fake import connector

    return connector()


async def child_main(mode: str, url: str) -> None:
    """The bench's bot process: join every guild's voice channel and play the station."""
    binary = find_ffmpeg()
    assert binary is not None
    intents = discord.Intents.none()
    intents.guilds = True
    intents.voice_states = True
    client = discord.Client(intents=intents, connector=_fake_connector(), guild_ready_timeout=0.5)
    session = stream_session()
    broadcasts = Broadcasts(binary.path, session=session)
    lag = LoopLag()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    sources: list[discord.AudioSource] = []

    async def join(guild: discord.Guild, gate: asyncio.Semaphore) -> None:
        async with gate:
            voice = await guild.voice_channels[0].connect(
                cls=discord.VoiceClient, self_deaf=True, timeout=60
            )
        sources.append(make_source(mode, broadcasts, url, binary.path))
        voice.play(sources[-1])

    async def play() -> None:
        try:
            await client.wait_until_ready()
            gate = asyncio.Semaphore(10)
            await asyncio.gather(*(join(guild, gate) for guild in client.guilds))
        except Exception as error:
            print(f"failed: {type(error).__name__}: {error}", flush=True)
            stop.set()
            return
        lag.start()
        print("ready", flush=True)

    runner = asyncio.create_task(client.start(os.environ[TOKEN_ENV]))
    player = asyncio.create_task(play())
    await stop.wait()
    await lag.stop()
    report = {
        "decoder_restarts": sum(s.restarts for s in broadcasts.stats().values()),
        "loop_worst_lag_ms": round(lag.worst * 1000, 1),
    }
    for voice in list(client.voice_clients):
        voice.stop()  # type: ignore[attr-defined]
    for source in sources:
        source.cleanup()  # kills the per-guild FFmpegs; the player threads would too, later
    await broadcasts.close()
    await session.close()
    player.cancel()
    print(json.dumps(report), flush=True)
    # No voice disconnects: 100 leaves after 100 joins exceed discord.py's gateway limit of
    # 110 commands a minute and would take a minute; nothing of the measurement is left.
    runner.cancel()
    sys.stdout.flush()
    os._exit(0)


def _table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'guilds':>6} {'mode':<9} {'bot':>6} {'ffmpeg':>7} {'total':>6} {'fps min':>8} "
        f"{'fps med':>8} {'audio min':>9} {'<49.5':>6} {'gaps':>5} {'conns':>5} "
        f"{'RSS bot':>8} {'RSS ff':>7}"
    )
    lines = ["cores = CPU s per wall s; RSS in MB; conns = upstream stream connections", head]
    for r in results:
        lines.append(
            f"{r['guilds']:>6} {r['mode']:<9} {r['bot_cores']:>6.3f} {r['ffmpeg_cores']:>7.3f} "
            f"{r['total_cores']:>6.3f} {r['fps']['min']:>8.2f} {r['fps']['median']:>8.2f} "
            f"{r['audio_fps']['min']:>9.2f} {r['guilds_below_49_5']:>6} {r['sequence_gaps']:>5} "
            f"{r['upstream_connections']:>5} {r['bot_rss_mb']:>8.1f} {r['ffmpeg_rss_mb']:>7.1f}"
        )
    return "\n".join(lines)


def fake_available() -> bool:
    return importlib.util.find_spec("tests.support.fakevoice") is not None


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--guilds", default="10,50,100", help="comma-separated guild counts")
    parser.add_argument(
        "--seconds", type=float, help="measured seconds per run (30; 10 with --formats)"
    )
    parser.add_argument("--quick", action="store_true", help="5 and 10 guilds, 5 s each")
    parser.add_argument("--modes", default="shared,per-guild", help="shared, per-guild or both")
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
    parser.add_argument("--child", choices=("shared", "per-guild"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        await child_main(args.child, args.url)
        return
    counts = [5, 10] if args.quick else [int(n) for n in args.guilds.split(",") if n.strip()]
    seconds = 5.0 if args.quick else args.seconds or 30.0
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
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
                            )
                        else:
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
    print(_table(results), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
