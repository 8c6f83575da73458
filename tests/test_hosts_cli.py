"""`onair check --json` and `onair watch --json` print the same fields for every kind of host
(null where the host does not say), each kind in ``SOURCES`` against its own `onair simulate`
as a child process, exactly as the simulator advises running `check` against it."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
from typing import Any

import pytest

from bot.station.hosts import SOURCES
from bot.station.source import DEFAULT_KIND, KIND_NAMES

from .support.cli import ONAIR, ROOT

pytestmark = pytest.mark.e2e  # every test here runs `onair` as a child process

# What `check --json` prints, for every kind (docs/hosts/index.md lists them).
CHECK_KEYS = {
    "kind",
    "features",
    "info",
    "current_play",
    "playlist",
    "stats",
    "stats_range",
    "requests",
    "links",
}
# What `watch --json` prints for each play, for every kind.
WATCH_KEYS = {
    "kind",
    "detected_at",
    "title",
    "artist",
    "album",
    "year",
    "started",
    "started_exact",
    "duration",
    "live",
    "artwork",
    "listen",
    "page",
    "listeners",
    "next",
    "station",
}


async def _advised(kind: str) -> tuple[asyncio.subprocess.Process, dict[str, str], list[str]]:
    """`onair simulate` of ``kind``, sped up, and the environment and arguments of the `check`
    it advises (after the word ``check``)."""
    kind_args = [] if kind == DEFAULT_KIND else ["--kind", kind]
    proc = await asyncio.create_subprocess_exec(
        *ONAIR,
        "simulate",
        *kind_args,
        "--port",
        "0",
        "--speed",
        "30",
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    async with asyncio.timeout(30):
        while True:
            line = (await proc.stdout.readline()).decode()
            assert line, "onair simulate ended without advising a check"
            if " check " in line:
                break
    words = shlex.split(line.split(": ", 1)[1])
    env = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
    rest = words[words.index("check") + 1 :]
    return proc, env, rest


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.terminate()
    await proc.wait()


def _run_check(env: dict[str, str], rest: list[str]) -> dict[str, Any]:
    result = subprocess.run(
        [*ONAIR, "check", *rest, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, **env},
    )
    assert result.returncode == 0, result.stderr
    body: dict[str, Any] = json.loads(result.stdout)
    return body


async def _first_watch_line(env: dict[str, str], rest: list[str]) -> dict[str, Any]:
    proc = await asyncio.create_subprocess_exec(
        *ONAIR,
        "watch",
        *rest,
        "--json",
        cwd=ROOT,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(60):
            line = await proc.stdout.readline()
    finally:
        await _stop(proc)
    assert line, "onair watch printed no play"
    body: dict[str, Any] = json.loads(line)
    return body


@pytest.mark.parametrize("kind", sorted(SOURCES))
async def test_check_and_watch_print_the_same_fields_for_every_kind(kind):
    simulator, env, rest = await _advised(kind)
    try:
        if kind != DEFAULT_KIND:
            rest = ["--kind", kind, *[w for w in rest if w != "--kind" and w != kind]]
        checked = await asyncio.to_thread(_run_check, env, rest)
        watched = await _first_watch_line(env, rest)
    finally:
        await _stop(simulator)
    assert set(checked) == CHECK_KEYS
    assert checked["kind"] == kind
    features = set(checked["features"])
    assert features == {f.value for f in SOURCES[kind].features}
    # What the host does not offer is null, never an empty stand-in.
    for part, feature in (("playlist", "playlist"), ("stats", "stats"), ("requests", "requests")):
        assert (checked[part] is None) is (feature not in features), part
    radioboss_info = set(_info_keys())
    assert set(checked["info"]) == radioboss_info
    assert set(watched) == WATCH_KEYS
    assert watched["kind"] == kind
    assert watched["title"]


def _info_keys() -> list[str]:
    """The fields of OnAir's station model, which every kind fills or leaves null."""
    import dataclasses

    from bot.station import StationInfo

    return [f.name for f in dataclasses.fields(StationInfo)]


def test_check_text_says_what_the_host_does_not_offer():
    from datetime import UTC, datetime

    from bot.cli import render_check
    from bot.station import StationInfo

    info = StationInfo.parse({"nowplaying": "A - B", "listeners": 3}, UTC, datetime.now(UTC))
    text = render_check(
        info, None, None, "2026-11-01", "2026-11-07", kind="icecast", features=frozenset()
    )
    lines = text.splitlines()
    assert lines[0] == f"Host:        {KIND_NAMES['icecast']}"
    assert "Recent:      not offered by Icecast servers" in lines
    assert "Playlist:    not offered by Icecast servers" in lines
    assert "Stats:       not offered by Icecast servers" in lines
