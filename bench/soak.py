"""A soak: ``onair run`` for a long time under a steady, realistic load, sampled for leaks.

The bot runs as deployed, a child process (``bench.bot_child``: the unchanged ``onair run``,
its event loop's lag sampled every 10 ms by a thread, and its asyncio task count and Python's
allocated blocks written every ``--every`` seconds by a callback on the loop). This process runs
the fake Discord (``--guilds`` guilds, two text channels each), the station simulator
(``--stations`` stations with short tracks: an announcement every few seconds) and the fake
Icecast the voice guilds play. The load, steady for the whole run:

- ``--channels`` channels subscribed, the stations in turn (announcements with their ❤ button);
- ``--voice-guilds`` guilds playing the first station in a voice channel with a listener
  (sessions stored before the start: the bot rejoins them);
- a command every ``--command-every`` seconds (/nowplaying, /recent, /station, /top, /playlist
  in turn, from many users and guilds), a /stats chart every ``--chart-every`` seconds, a ❤
  click on a recent announcement every ``--click-every`` seconds.

Every ``--every`` seconds it samples from /proc the child's RSS, open file descriptors, threads
and child processes (FFmpeg) with their RSS, and from the child its tasks, allocated blocks and
loop lag (p99 and worst since the last sample). After the warm-up (``--warmup`` minutes) it
prints, per metric, the least-squares slope per hour, and the RSS slope per window of
``--window`` minutes as each window ends (so a run cut short still says something), then where
RSS levels off: the first window from which every later window grows less than ``--flat`` MB/h.
At the end it stops the bot with SIGTERM and reports how long that took. One JSON line closes
the output. Not in CI: it runs for as long as it is told.

    .venv/bin/python -m bench.soak [--minutes 30] [--guilds 30] [--stations 4]
        [--channels 42] [--voice-guilds 20] [--every 10] [--warmup M] [--window M]
    MALLOC_ARENA_MAX=2 .venv/bin/python -m bench.soak --minutes 180   (glibc arenas capped)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.simulator import StationSimulator
from bot.storage import SqliteStorage, VoiceSession
from bot.voice import find_ffmpeg
from tests.support.botenv import STATION_KEY, subscription_config
from tests.support.fakediscord import FakeDiscord
from tests.support.fakeicecast import FakeIcecast, make_mp3

from .bot_child import LAG_ENV, STATS_ENV, STATS_EVERY_ENV
from .child import prepare_child
from .common import emit, percentile

LISTENER = 700000000000000001
USERS = 200  # distinct users clicking and commanding
COMMANDS = ("nowplaying", "recent", "station", "top", "playlist")
METRICS = ("rss_mb", "fds", "threads", "children", "children_rss_mb", "tasks", "blocks_k")


# Figures ------------------------------------------------------------------------------------


def slope_per_hour(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope of (seconds, value) points, per hour (None below two points)."""
    if len(points) < 2:
        return None
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    if spread == 0:
        return None
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / spread * 3600.0


def levels_off(windows: list[dict[str, Any]], flat: float) -> dict[str, Any] | None:
    """The first window from which every later one grows less than ``flat`` MB/h (at least
    two windows in that stretch: one quiet window is not a level)."""
    for index in range(len(windows) - 1):
        rest = windows[index:]
        if all(w["rss_mb_per_h"] is not None and w["rss_mb_per_h"] < flat for w in rest):
            first = windows[index]
            return {"after_minutes": first["from_minute"], "at_mb": first["rss_mb"]}
    return None


# Sampling the child -------------------------------------------------------------------------


def _status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
        return dict(line.split(":", 1) for line in status if ":" in line)


def _kb(value: str) -> float:
    return float(value.split()[0])


def children_of(pid: int) -> list[int]:
    """Every descendant of ``pid`` (FFmpeg, the chart worker), from /proc/*/stat."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with (
            contextlib.suppress(OSError),
            open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat,
        ):
            parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
    found, wanted = [], {pid}
    while wanted:
        wanted = {child for child, parent in parents.items() if parent in wanted}
        found += sorted(wanted)
    return found


def proc_sample(pid: int) -> dict[str, float]:
    status = _status(pid)
    children = children_of(pid)
    children_rss = 0.0
    for child in children:
        with contextlib.suppress(OSError, KeyError):
            children_rss += _kb(_status(child)["VmRSS"])
    return {
        "rss_mb": _kb(status["VmRSS"]) / 1024,
        "fds": float(len(os.listdir(f"/proc/{pid}/fd"))),
        "threads": float(status["Threads"].strip()),
        "children": float(len(children)),
        "children_rss_mb": children_rss / 1024,
    }


class Tail:
    """The lines a child appends to a file, read as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = ""

    def read(self) -> list[Any]:
        if not self.path.exists():
            return []
        with self.path.open(encoding="utf-8") as file:
            file.seek(self._offset)
            text = self._partial + file.read()
            self._offset = file.tell()
        lines = text.split("\n")
        self._partial = lines.pop()
        return [json.loads(line) for line in lines if line]


# The load -----------------------------------------------------------------------------------


@dataclass
class Load:
    """What the driver did, and what it saw the bot post."""

    commands: int = 0
    charts: int = 0
    clicks: int = 0
    announcements: int = 0
    likeable: list[int] = field(default_factory=list)  # recent announcements' message ids
    _seen: int = 0

    def watch(self, fake: FakeDiscord) -> None:
        """Count the announcements posted since the last look (a slice: no rescan)."""
        new = fake.requests[self._seen :]
        self._seen = len(fake.requests)
        for record in new:
            if (
                record.method != "POST"
                or record.status != 200
                or not record.route.startswith("/channels/")
            ):
                continue
            if not record.route.endswith("/messages") or not isinstance(record.response, dict):
                continue
            self.announcements += 1
            self.likeable.append(int(record.response["id"]))
        del self.likeable[:-50]


def _like_id(message: dict[str, Any]) -> str | None:
    for row in message.get("components") or []:
        for button in row.get("components") or []:
            if str(button.get("custom_id", "")).startswith("onair:like:"):
                return str(button["custom_id"])
    return None


async def drive(fake: FakeDiscord, load: Load, args: argparse.Namespace, until: float) -> None:
    """The steady load until ``until`` (time.monotonic)."""
    rng = random.Random(args.seed)
    next_command = next_chart = next_click = time.monotonic()
    turn = 0
    while time.monotonic() < until:
        now = time.monotonic()
        load.watch(fake)
        guild = rng.choice(fake.guilds)
        user = 10_000 + rng.randrange(USERS)
        if now >= next_command:
            name = COMMANDS[turn % len(COMMANDS)]
            turn += 1
            await fake.slash(name, guild=guild, channel_id=guild.channels[0], user_id=user)
            load.commands += 1
            next_command += args.command_every
        if now >= next_chart:
            period = rng.choice(("today", "7d", "30d"))
            await fake.slash("stats", {"period": period}, guild=guild, user_id=user)
            load.charts += 1
            next_chart += args.chart_every
        if now >= next_click and load.likeable:
            message = fake.messages.get(rng.choice(load.likeable))
            custom_id = _like_id(message) if message else None
            if message is not None and custom_id is not None:
                channel = int(message["channel_id"])
                owner = next(g for g in fake.guilds if channel in g.channels)
                await fake.click(message, custom_id, user_id=user, guild=owner)
                load.clicks += 1
            next_click += args.click_every
        await asyncio.sleep(0.2)


# Set-up -------------------------------------------------------------------------------------


def config(sim: StationSimulator, fake: FakeDiscord, args: argparse.Namespace, db: str) -> str:
    parts = ["[bot]", 'default_station = "s0"', "", "[database]", f'path = "{db}"', ""]
    for index in range(args.stations):
        parts += [
            "[[stations]]",
            f'id = "s{index}"',
            f'name = "Soak {index} FM"',
            f'base_url = "{sim.base_url}"',
            f"station_id = {index + 1}",
            'key_env = "ONAIR_TEST_STATION_KEY"',
            'timezone = "Europe/Berlin"',
            "guilds = []",
            f'stream_url = "{args.stream_url}"' if index == 0 and args.voice_guilds else "",
            "",
        ]
    channels = [(g.id, c) for g in fake.guilds for c in g.channels][: args.channels]
    for number, (guild, channel) in enumerate(channels):
        parts.append(subscription_config(guild, channel, f"s{number % args.stations}"))
    return "\n".join(parts)


async def store_sessions(fake: FakeDiscord, db: str, count: int) -> None:
    """A voice channel with a listener in the first ``count`` guilds, each a stored session
    of the first station (the bot rejoins them as after a restart)."""
    storage = SqliteStorage(db)
    await storage.open()
    try:
        for guild in fake.guilds[:count]:
            channel = fake.add_voice_channel(guild, "Radio")
            await fake.set_member_voice(guild, LISTENER, channel)
            await storage.save_voice_session(VoiceSession(guild.id, channel, "s0"), now=1.0)
    finally:
        await storage.close()


# The run ------------------------------------------------------------------------------------


def say(line: str) -> None:
    print(line, flush=True)


def _window_line(window: dict[str, Any]) -> str:
    slope = window["rss_mb_per_h"]
    shown = "n/a" if slope is None else f"{slope:+.1f} MB/h"
    return (
        f"window {window['from_minute']:>5.1f}-{window['to_minute']:>5.1f} min: RSS "
        f"{window['rss_mb']:.1f} MB ({shown}), fds {window['fds']:.0f}, threads "
        f"{window['threads']:.0f}, children {window['children']:.0f}, tasks "
        f"{window['tasks']:.0f}, loop lag p99 {window['lag_p99_ms']} ms"
    )


class Soak:
    def __init__(self, args: argparse.Namespace, pid: int, work: Path) -> None:
        self.args = args
        self.pid = pid
        self.started = time.monotonic()
        self.samples: list[dict[str, float]] = []
        self.lag = Tail(work / "lag.jsonl")
        self.stats = Tail(work / "stats.jsonl")
        self.lags: list[tuple[float, float]] = []  # (seconds since start, lag)
        self.windows: list[dict[str, Any]] = []
        self._window_start = args.warmup * 60

    def sample(self) -> None:
        at = time.monotonic() - self.started
        sample: dict[str, float] = {"t": at, **proc_sample(self.pid)}
        offset = time.perf_counter() - at  # the lag file's perf_counter → seconds since start
        since = self.samples[-1]["t"] if self.samples else 0.0
        fresh = [(asked - offset, lag) for asked, lag in self.lag.read()]
        self.lags += fresh
        window = [lag for asked, lag in fresh if asked >= since]
        sample["lag_p99_ms"] = round((percentile(window, 0.99) or 0.0) * 1000, 2)
        sample["lag_max_ms"] = round(max(window, default=0.0) * 1000, 2)
        stats = self.stats.read()
        if stats:
            sample["tasks"] = float(stats[-1][1])
            sample["blocks_k"] = stats[-1][2] / 1000
        elif self.samples:
            sample["tasks"] = self.samples[-1].get("tasks", 0.0)
            sample["blocks_k"] = self.samples[-1].get("blocks_k", 0.0)
        self.samples.append(sample)
        self._close_windows(at)

    def _close_windows(self, at: float) -> None:
        length = self.args.window * 60
        while at >= self._window_start + length:
            start, end = self._window_start, self._window_start + length
            inside = [s for s in self.samples if start <= s["t"] <= end]
            self._window_start = end
            if not inside:
                continue
            lags = [lag for asked, lag in self.lags if start <= asked <= end]
            window = {
                "from_minute": round(start / 60, 1),
                "to_minute": round(end / 60, 1),
                "rss_mb_per_h": _rounded(slope_per_hour([(s["t"], s["rss_mb"]) for s in inside])),
                "lag_p99_ms": round((percentile(lags, 0.99) or 0.0) * 1000, 2),
                **{k: round(inside[-1].get(k, 0.0), 1) for k in METRICS},
            }
            self.windows.append(window)
            say(_window_line(window))

    def summary(self) -> dict[str, Any]:
        warm = [s for s in self.samples if s["t"] >= self.args.warmup * 60]
        slopes = {
            f"{metric}_per_h": _rounded(
                slope_per_hour([(s["t"], s[metric]) for s in warm if metric in s])
            )
            for metric in METRICS
        }
        lags = [lag for asked, lag in self.lags if asked >= self.args.warmup * 60]
        first, last = (warm[0], warm[-1]) if warm else ({}, {})
        return {
            "after_warmup": {
                "minutes": round((last.get("t", 0.0) - first.get("t", 0.0)) / 60, 1),
                "samples": len(warm),
                "slopes": slopes,
                "first": {k: round(first.get(k, 0.0), 1) for k in METRICS},
                "last": {k: round(last.get(k, 0.0), 1) for k in METRICS},
                "loop_lag_p99_ms": round((percentile(lags, 0.99) or 0.0) * 1000, 2),
                "loop_lag_max_ms": round(max(lags, default=0.0) * 1000, 2),
            },
            "rss_windows": self.windows,
            "rss_levels_off": levels_off(self.windows, self.args.flat),
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


async def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    ffmpeg = find_ffmpeg()
    if ffmpeg is None and args.voice_guilds:
        raise SystemExit("no FFmpeg: install the imageio-ffmpeg wheel (pip install -e .)")
    mp3 = make_mp3(ffmpeg.path, work / "sine.mp3").read_bytes() if ffmpeg else b""
    fake = FakeDiscord(guild_count=args.guilds, channels_per_guild=2)
    sim = StationSimulator()
    for index in range(args.stations):
        sim.add_station(
            index + 1,
            key=STATION_KEY,
            seed=index,
            track_seconds=args.track_seconds,
            library_durations=True,
        )
    async with fake, sim, FakeIcecast(mp3) as icecast:
        args.stream_url = icecast.url
        db = str(work / "onair.sqlite3")
        await store_sessions(fake, db, args.voice_guilds)
        config_path, env = prepare_child(
            fake,
            str(work),
            config(sim, fake, args, db),
            {
                LAG_ENV: str(work / "lag.jsonl"),
                STATS_ENV: str(work / "stats.jsonl"),
                STATS_EVERY_ENV: str(min(args.every, 5.0)),
            },
        )
        with (work / "child.log").open("wb") as log:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bench.bot_child",
                "run",
                "--config",
                config_path,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
            try:
                return await _measure(fake, process, args, work)
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()


async def _measure(
    fake: FakeDiscord, process: asyncio.subprocess.Process, args: argparse.Namespace, work: Path
) -> dict[str, Any]:
    await fake.wait_for(lambda: bool(fake.commands), within=120)  # synced: it is ready
    soak = Soak(args, process.pid, work)
    load = Load()
    until = soak.started + args.minutes * 60
    driver = asyncio.create_task(drive(fake, load, args, until))
    try:
        while time.monotonic() < until:
            if process.returncode is not None:
                raise SystemExit(f"onair run exited {process.returncode}: see {work}/child.log")
            soak.sample()
            await asyncio.sleep(min(args.every, max(0.0, until - time.monotonic())))
        soak.sample()
        await driver
    finally:
        driver.cancel()
    voice = sum(fake.voice.stats(g.id).audio > 0 for g in fake.guilds[: args.voice_guilds])
    callbacks = sum(1 for r in fake.requests if r.route.endswith("/callback"))
    stopped = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(process.wait(), timeout=60)
    stop_seconds = time.monotonic() - stopped
    return {
        "load": {
            "announcements": load.announcements,
            "commands": load.commands,
            "charts": load.charts,
            "clicks": load.clicks,
            "interaction_callbacks": callbacks,
            "voice_guilds_playing": voice,
        },
        **soak.summary(),
        "sigterm": {"exit": code, "seconds": round(stop_seconds, 2)},
    }


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--guilds", type=int, default=30)
    parser.add_argument("--stations", type=int, default=4)
    parser.add_argument("--channels", type=int, default=42)
    parser.add_argument("--voice-guilds", type=int, default=20)
    parser.add_argument("--every", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--warmup", type=float, help="minutes (default: a quarter, 10 at most)")
    parser.add_argument("--window", type=float, help="minutes (default: 5, less in short runs)")
    parser.add_argument("--flat", type=float, default=3.0, help="MB/h counted as level")
    parser.add_argument("--command-every", type=float, default=3.0)
    parser.add_argument("--chart-every", type=float, default=45.0)
    parser.add_argument("--click-every", type=float, default=4.0)
    parser.add_argument("--track-seconds", type=float, nargs=2, default=(20.0, 40.0))
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (child.log)")
    args = parser.parse_args(argv)
    if args.warmup is None:
        args.warmup = min(10.0, args.minutes / 4)
    if args.window is None:
        args.window = 5.0 if args.minutes >= 30 else max(0.5, round(args.minutes / 6, 1))
    args.track_seconds = tuple(args.track_seconds)
    return args


async def main() -> None:
    args = parse()
    work = Path(tempfile.mkdtemp(prefix="onair-soak-"))
    say(
        f"soak: {args.minutes:g} min, {args.guilds} guilds, {args.stations} stations, "
        f"{args.channels} channels, {args.voice_guilds} voice guilds; samples every "
        f"{args.every:g} s, warm-up {args.warmup:g} min, windows of {args.window:g} min; "
        f"MALLOC_ARENA_MAX={os.environ.get('MALLOC_ARENA_MAX', 'unset')}; work folder {work}"
    )
    try:
        result = await run(args, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    warm = result["after_warmup"]
    say(f"load: {json.dumps(result['load'])}")
    say(f"after the warm-up ({warm['minutes']} min, {warm['samples']} samples), per hour:")
    for metric in METRICS:
        slope = warm["slopes"][f"{metric}_per_h"]
        say(
            f"  {metric:>16}: {warm['first'][metric]:>9.1f} -> {warm['last'][metric]:>9.1f}, "
            f"slope {'n/a' if slope is None else f'{slope:+.2f}'} /h"
        )
    say(f"  loop lag p99 {warm['loop_lag_p99_ms']} ms, worst {warm['loop_lag_max_ms']} ms")
    level = result["rss_levels_off"]
    say(
        f"RSS levels off after {level['after_minutes']} min at {level['at_mb']} MB"
        if level
        else f"RSS does not level off (under {args.flat:g} MB/h per window) in this run"
    )
    say(f"SIGTERM: exit {result['sigterm']['exit']} in {result['sigterm']['seconds']} s")
    emit(
        {
            "bench": "soak",
            "minutes": args.minutes,
            "malloc_arena_max": os.environ.get("MALLOC_ARENA_MAX"),
            **result,
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
