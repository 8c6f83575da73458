"""How a scene is written: the requests the fake Discord recorded, as discord-look JSONL lines,
the viewer's zone next to them, and the one-slash-command scene most groups are made of.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.simulator import StationSimulator

from .botenv import STATION_KEY, BotEnv, running_bot
from .fakediscord import FakeDiscord, Recorded

BERLIN = ZoneInfo("Europe/Berlin")
# One zone per UTC offset (-12 .. +14): the scenes about midnight use the one where it is
# nearly midnight now, so they need no fake clock (the bot reads the real one).
ZONES = [
    "Etc/GMT+12",
    "Pacific/Pago_Pago",
    "Pacific/Honolulu",
    "America/Anchorage",
    "America/Los_Angeles",
    "America/Denver",
    "America/Chicago",
    "America/New_York",
    "America/Halifax",
    "America/Sao_Paulo",
    "Atlantic/South_Georgia",
    "Atlantic/Azores",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Athens",
    "Europe/Moscow",
    "Asia/Dubai",
    "Asia/Tashkent",
    "Asia/Dhaka",
    "Asia/Bangkok",
    "Asia/Singapore",
    "Asia/Tokyo",
    "Australia/Brisbane",
    "Pacific/Noumea",
    "Pacific/Fiji",
    "Pacific/Tongatapu",
    "Pacific/Kiritimati",
]


def zone_at_hour(hour: int) -> ZoneInfo:
    """A zone where the local hour is ``hour`` right now."""
    now = datetime.now(UTC)
    return next(z for z in map(ZoneInfo, ZONES) if now.astimezone(z).hour == hour)


def scene_line(record: Recorded, wall_offset: float, command: str | None) -> dict[str, Any]:
    line: dict[str, Any] = {"method": record.method, "path": record.path, "json": record.json}
    if record.files:
        line["files"] = [
            {"filename": filename, "base64": base64.b64encode(data).decode()}
            for _name, filename, data in record.files
        ]
    line["at"] = record.at + wall_offset
    if command:
        line["command"] = command
        line["user"] = "listener"
    return line


def write_scene(
    fake: FakeDiscord,
    path: Path,
    since: int,
    commands: dict[str, str],
    zone: ZoneInfo | None = None,
    only: str | None = None,
) -> int:
    """Write the requests recorded since index ``since``; returns the new index. ``zone``: the
    viewer's zone for this scene (written next to it for scripts/screens), default Berlin.
    ``only``: a pattern the paths written match (one channel's messages of several)."""
    wall_offset = time.time() - time.monotonic()
    if zone is not None:
        path.with_suffix(".tz").write_text(zone.key, encoding="utf-8")
    with path.open("w", encoding="utf-8") as out:
        for record in fake.requests[since:]:
            if record.method == "GET" or "/commands" in record.path:
                continue
            if only is not None and not re.search(only, record.path):
                continue
            command = next((c for iid, c in commands.items() if f"/{iid}/" in record.path), None)
            out.write(json.dumps(scene_line(record, wall_offset, command)) + "\n")
    return len(fake.requests)


STATUS = "/onair status"


async def slash_scene(
    fake: FakeDiscord,
    path: Path,
    label: str,
    command: str,
    options: dict[str, Any] | None = None,
    **how: Any,
) -> str:
    """One slash command's scene: run it, wait for its final message, write what it sent
    (labelled ``label``); the interaction's id."""
    since = len(fake.requests)
    iid = await fake.slash(command, options or {}, **how)
    await fake.final_message(iid, within=30)
    write_scene(fake, path, since, {iid: label})
    return iid


@contextlib.asynccontextmanager
async def berlin_bot(seed: int) -> AsyncIterator[BotEnv]:
    """One station in Berlin (simulated with ``seed``) and the bot running on it: the setting the
    translated admin and listener scenes share, so they cannot drift apart."""
    sim = StationSimulator()
    sim.add_station(
        1, key=STATION_KEY, seed=seed, public_url="https://c9.radioboss.fm", zone=BERLIN
    )
    await sim.start()
    try:
        async with running_bot(sim) as env:
            yield env
    finally:
        await sim.stop()
