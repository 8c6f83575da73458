"""Voice per mount format against the fake Icecast 2 (issue 27): first audio after /join,
silence after an upstream drop, frames/s.

For each format (MP3 128 and 320 kbit/s, AAC 128 kbit/s ADTS, Ogg Vorbis, Ogg Opus with FFmpeg's
default 1 s pages) the fake Icecast runs in a child process (64 KiB burst from an arbitrary byte,
then real-time pacing in the container's own frames or pages). The bot runs in this process
against the fake Discord, through the real discord.py client: a listener's ``/join``, then
``--seconds`` of play, then Icecast's ``/admin/killclient`` (an upstream drop), then
``--seconds`` more, and a second guild's ``/join``. Times are the fake voice server's kernel
arrival stamps of the frames the bot sent (what a listener would get), against the moment the
``/join`` interaction left the fake gateway or the drop was asked for.

- first audio: from the ``/join`` to the first audio frame at the voice server;
- silence after the drop: the longest stretch without an audio frame from the drop on (a
  frame's own 20 ms not counted);
- frames/s: audio frames per second from the first audio frame to the drop, and from the drop
  on (50 = every frame audio), the silence frames sent from the drop on, and the frames the
  bot's pacer dropped (0 = none).

    .venv/bin/python -m bench.voice --formats [--seconds 10]
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp

from bot.simulator import StationSimulator
from tests.support.botenv import STATION_KEY, running_bot
from tests.support.fakediscord import FakeDiscord
from tests.support.icecast_media import FORMATS
from tests.support.waiting import wait_for

from .common import emit

LISTENER = 700000000000000001
FRAME = 0.02


class IcecastProcess:
    """The fake Icecast serving one format, in a child process (its CPU is nobody's)."""

    def __init__(self, fmt: str, ffmpeg: str, folder: Path) -> None:
        self.args = ("--format", fmt, "--ffmpeg", ffmpeg, "--folder", str(folder))
        self.url = ""
        self._proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> IcecastProcess:
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "tests.support.fakeicecast", *self.args,
            stdout=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert self._proc.stdout is not None
        line = await asyncio.wait_for(self._proc.stdout.readline(), timeout=60)
        self.url = line.decode().strip()
        return self

    async def admin(self, session: aiohttp.ClientSession, path: str) -> dict[str, Any]:
        base = self.url.rsplit("/", 1)[0]
        async with session.get(f"{base}{path}", timeout=aiohttp.ClientTimeout(total=5)) as got:
            answer: dict[str, Any] = await got.json()
            return answer

    async def __aexit__(self, *exc_info: object) -> None:
        if self._proc is not None and self._proc.returncode is None:
            self._proc.terminate()
            await self._proc.wait()


def longest_silence(arrivals: list[float], since: float) -> float:
    """The longest stretch from ``since`` on with no audio frame (less a frame's 20 ms)."""
    after = [t for t in arrivals if t >= since]
    before = [t for t in arrivals if t < since][-1:]
    times = before + after
    if len(times) < 2:
        return float("inf")
    return max(0.0, max(b - a for a, b in itertools.pairwise(times)) - FRAME)


async def measure(fmt: str, ffmpeg: str, folder: Path, seconds: float) -> dict[str, Any]:
    fake = FakeDiscord(guild_count=2)
    channels = {g.id: fake.add_voice_channel(g, "Radio") for g in fake.guilds}
    await fake.start()
    for guild in fake.guilds:
        await fake.set_member_voice(guild, LISTENER, channels[guild.id])
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm")
    await sim.start()
    first, second = fake.guilds
    try:
        async with (
            IcecastProcess(fmt, ffmpeg, folder) as icecast,
            aiohttp.ClientSession() as session,
            running_bot(sim, fake=fake, extra_config=f'stream_url = "{icecast.url}"\n') as env,
        ):
            stats = fake.voice.stats
            joined = time.monotonic()
            await fake.slash("join", {}, guild=first, user_id=LISTENER)
            await wait_for(lambda: stats(first.id).audio >= 1, within=60)
            await asyncio.sleep(seconds)  # plays: the measured window
            played = stats(first.id)
            window_start = played.audio_arrivals[0]
            audio_fps = (played.audio - 1) / (played.audio_arrivals[-1] - window_start)
            dropped_at = time.monotonic()
            await icecast.admin(session, "/admin/killclient")
            await asyncio.sleep(seconds)  # after the drop
            second_joined = time.monotonic()
            await fake.slash("join", {}, guild=second, user_id=LISTENER)
            with_second = True
            try:
                await wait_for(lambda: stats(second.id).audio >= 1, within=30)
            except AssertionError:
                with_second = False
            after = stats(first.id)
            hub = env.bot.voice.hub
            assert hub is not None
            station = hub.stats()["main"]
            counters = await icecast.admin(session, "/_admin/counters")
            late = [t for t in after.audio_arrivals if t >= dropped_at]
            frames_late = sum(1 for t in after.arrivals if t >= dropped_at)
            frames_early = sum(1 for t in after.arrivals if window_start <= t < dropped_at)
            audio_early = sum(1 for t in after.audio_arrivals if t < dropped_at)
            after_fps = (len(late) - 1) / (late[-1] - late[0]) if len(late) > 1 else 0.0
            return {
                "bench": "voice-formats",
                "format": fmt,
                "first_audio_s": round(played.audio_arrivals[0] - joined, 2),
                "silence_after_drop_s": round(longest_silence(after.audio_arrivals, dropped_at), 2),
                "audio_fps": round(audio_fps, 2),
                "audio_fps_after_drop": round(after_fps, 2),
                "silence_frames_before_drop": frames_early - audio_early,
                "silence_frames_after_drop": frames_late - len(late),
                "frames_dropped": station.frames_dropped,
                "frames_replaced": station.frames_replaced,
                "sequence_gaps": after.gaps,
                "decoder_restarts": station.restarts,
                "upstream_connections": counters["connections"],
                "second_guild_first_audio_s": (
                    round(stats(second.id).audio_arrivals[0] - second_joined, 2)
                    if with_second
                    else None
                ),
            }
    finally:
        await sim.stop()
        await fake.stop()


def table(results: list[dict[str, Any]]) -> str:
    head = (
        f"{'mount':<8} {'first audio':>11} {'silence/drop':>12} {'audio fps':>9} "
        f"{'after drop':>10} {'dropped':>7} {'restarts':>8} {'2nd guild':>9}"
    )
    lines = ["seconds; fps = audio frames per second at the fake voice server", head]
    for r in results:
        second = r["second_guild_first_audio_s"]
        lines.append(
            f"{r['format']:<8} {r['first_audio_s']:>11.2f} {r['silence_after_drop_s']:>12.2f} "
            f"{r['audio_fps']:>9.2f} {r['audio_fps_after_drop']:>10.2f} "
            f"{r['frames_dropped']:>7} {r['decoder_restarts']:>8} "
            f"{'none' if second is None else f'{second:.2f}':>9}"
        )
    return "\n".join(lines)


async def run(ffmpeg: str, folder: Path, seconds: float, formats: list[str]) -> None:
    results = []
    for fmt in formats:
        result = await measure(fmt, ffmpeg, folder, seconds)
        emit(result)
        results.append(result)
    print(table(results), flush=True)


def names(text: str) -> list[str]:
    chosen = [name.strip() for name in text.split(",") if name.strip()] if text else []
    unknown = set(chosen) - set(FORMATS)
    if unknown:
        raise SystemExit(f"unknown formats: {', '.join(sorted(unknown))}")
    return chosen or list(FORMATS)


async def main() -> None:
    """``python -m bench.voice_formats [FORMATS] [--seconds 10]``: the same as
    ``python -m bench.voice --formats``."""
    import argparse
    import tempfile

    from bot.voice import find_ffmpeg

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("formats", nargs="?", default="", help=", ".join(FORMATS))
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    binary = find_ffmpeg()
    if binary is None:
        raise SystemExit("no FFmpeg: set ONAIR_FFMPEG or install imageio-ffmpeg")
    with tempfile.TemporaryDirectory() as tmp:
        await run(binary.path, Path(tmp), args.seconds, names(args.formats))


if __name__ == "__main__":
    asyncio.run(main())
