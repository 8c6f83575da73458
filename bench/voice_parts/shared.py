"""What both harnesses of ``bench.voice`` and the bench's bot process share: the stream session
and the audio source each mode plays, the process figures (CPU, RSS, FFmpeg children, load),
and the measurement of frames per second and gaps between two moments.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import aiohttp
import discord

from bot.guard.netguard import GuardedResolver, HostPolicy
from bot.voice import Broadcasts

from . import sched

TOKEN_ENV = "ONAIR_BENCH_VOICE_TOKEN"
JOIN_DEADLINE = 240.0  # seconds for every guild to join and play
SETTLE = 3.0  # seconds the fake voice server's counting may lag behind the kernel's stamps
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
    if mode in ("sender", "players"):
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
# Per guild, the arrival times of its frames (time.monotonic) between two moments.
Arrivals = Callable[[float, float], list[list[float]]]


def load_1min() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def frame_gaps(arrivals: list[list[float]]) -> dict[str, float]:
    """The gaps between consecutive frames of each guild: p99 of all, the worst guild's p99 and
    the longest, in ms."""
    every: list[float] = []
    worst_p99 = 0.0
    for times in arrivals:
        gaps = sorted(b - a for a, b in itertools.pairwise(times))
        if gaps:
            worst_p99 = max(worst_p99, gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))])
            every += gaps
    every.sort()
    if not every:
        return {"p99_ms": 0.0, "worst_guild_p99_ms": 0.0, "max_ms": 0.0}
    return {
        "p99_ms": round(every[min(len(every) - 1, int(len(every) * 0.99))] * 1000, 1),
        "worst_guild_p99_ms": round(worst_p99 * 1000, 1),
        "max_ms": round(every[-1] * 1000, 1),
    }


async def measure(
    bot_pid: int, counts: Counts, seconds: float, arrivals: Arrivals | None = None
) -> dict[str, Any]:
    """CPU, RSS and per-guild frame rates over ``seconds`` of wall time."""
    pids = ffmpeg_children(bot_pid)
    load0 = load_1min()
    before = counts()
    threads0, fake0 = sched.snapshot(bot_pid), proc_cpu(os.getpid())
    bot0, ff0, wall0 = proc_cpu(bot_pid), {p: proc_cpu(p) for p in pids}, time.perf_counter()
    mono0 = time.monotonic()
    await asyncio.sleep(seconds)
    after = counts()
    mono1 = time.monotonic()
    wall = time.perf_counter() - wall0
    bot = proc_cpu(bot_pid) - bot0
    threads = sched.summary(threads0, sched.snapshot(bot_pid), wall)
    fake = proc_cpu(os.getpid()) - fake0
    ff = sum(proc_cpu(pid) - start for pid, start in ff0.items())
    frames = [(b[0] - a[0]) / wall for a, b in zip(before, after, strict=True)]
    audio = [(b[1] - a[1]) / wall for a, b in zip(before, after, strict=True)]
    stamped: list[list[float]] = []
    if arrivals:
        # Frames/s from the kernel's stamps in the window, once the fake's counting thread
        # (behind on a loaded machine) has read past its end: the pace the bot sent at.
        await asyncio.sleep(SETTLE)
        stamped = await asyncio.to_thread(arrivals, mono0, mono1)
        frames = [len(times) / (mono1 - mono0) for times in stamped]
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
        "frame_gaps": await asyncio.to_thread(frame_gaps, stamped) if arrivals else None,
        "load_1min": [load0, load_1min()],
        "bot_threads": threads,  # run and run-queue wait (cores), whole and busiest thread
        "this_process_cores": round(fake / wall, 3),  # the fakes (or the engine) in this one
    }
