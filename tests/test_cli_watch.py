"""`onair watch --json` and `onair demo` as subprocesses."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from bot.simulator import StationSimulator

pytestmark = pytest.mark.e2e  # every test here runs `onair` as a child process

ROOT = Path(__file__).resolve().parent.parent
KEY = "watch-key-123"


async def _read_lines(stream: asyncio.StreamReader, count: int, within: float) -> list[str]:
    lines: list[str] = []
    async with asyncio.timeout(within):
        while len(lines) < count:
            raw = await stream.readline()
            if not raw:
                break
            lines.append(raw.decode())
    return lines


async def test_watch_json_prints_one_object_per_play_and_errors_to_stderr():
    sim = StationSimulator()
    sim.add_station(1, key=KEY, seed=5, track_seconds=(2.5, 3.5))
    await sim.start()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "watch",
        "--base-url",
        sim.base_url,
        "--station",
        "1",
        "--key",
        KEY,
        "--json",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        assert proc.stderr is not None
        lines = await _read_lines(proc.stdout, 3, within=30)
        sim.inject("status", status=500, times=3)
        err = await _read_lines(proc.stderr, 1, within=30)
    finally:
        proc.terminate()
        await proc.wait()
        await sim.stop()
    assert len(lines) == 3
    objects = [json.loads(line) for line in lines]
    for obj in objects:
        for key in ("detected_at", "title", "artist", "started", "artwork", "listen"):
            assert key in obj
        assert isinstance(obj["detected_at"], float)
    assert len({(o["title"], o["started"]) for o in objects}) == 3  # no duplicates
    assert err
    assert err[0].startswith("onair watch:")
    assert KEY not in err[0]


async def test_watch_with_a_refused_key_names_the_variable_and_stops():
    sim = StationSimulator()
    sim.add_station(1, key=KEY, seed=5)
    await sim.start()
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "bot.cli", "watch", "--base-url", sim.base_url, "--station", "1"),
            cwd=ROOT,
            env={**os.environ, "ONAIR_STATION_KEY": "not-the-key"},
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(30):
            out, err = await proc.communicate()
    finally:
        await sim.stop()
    assert proc.returncode == 2
    assert out == b""
    line = err.decode().strip()
    assert line.startswith("onair watch: the station refused the API key in ONAIR_STATION_KEY")
    assert "admin" not in line
    assert "not-the-key" not in line


async def test_demo_runs_offline_and_announces():
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot.cli",
        "demo",
        "--duration",
        "32",  # tracks of 5-9 s, a jingle after the third: due by 27 s; 5 s to spare
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert text.count("┌") >= 2
    assert "announcements from" in text
    # As in Discord, a jingle (under 30 s) gets no card of its own.
    assert "(jingle: OnAir Radio - " in text
    lengths = re.findall(r"length (\d+):(\d\d)", text)
    assert lengths
    assert all(int(m) * 60 + int(s) >= 30 for m, s in lengths), lengths
    # A listener's request plays next and its card names who asked (the whole request path).
    assert "Neon Umbrella': accepted" in text
    assert "🙋 Requested by demo listener" in text
    # Each song's "Find this song" link, from the simulator's search (offline).
    assert "🔎 Find this song: https://song.link/i/" in text
