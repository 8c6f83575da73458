"""Record what a listener sees: every command and both announcement modes, as discord-look JSONL.

Runs the real bot against the fake Discord and the station simulator (nothing leaves loopback),
drives each listener command and both announcement modes, and writes the recorded requests in
the input shape of ``shared/tools/discord-look`` (one JSON object a line), one file per scene.
``scripts/screens`` renders them to PNG with discord-look when it is installed.

    .venv/bin/python -m tests.screens OUT_DIR
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.simulator import JINGLES, TRACKS, ManualClock, Programme, StationSimulator

from .botenv import STATION_KEY, running_bot
from .fakediscord import FakeDiscord, Recorded

BERLIN = ZoneInfo("Europe/Berlin")


def _line(record: Recorded, wall_offset: float, command: str | None) -> dict[str, Any]:
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


def write_scene(fake: FakeDiscord, path: Path, since: int, commands: dict[str, str]) -> int:
    """Write the requests recorded since index ``since``; returns the new index."""
    wall_offset = time.time() - time.monotonic()
    with path.open("w", encoding="utf-8") as out:
        for record in fake.requests[since:]:
            if record.method == "GET" or "/commands" in record.path:
                continue
            command = next((c for iid, c in commands.items() if f"/{iid}/" in record.path), None)
            out.write(json.dumps(_line(record, wall_offset, command)) + "\n")
    return len(fake.requests)


async def _listener_commands(out: Path) -> None:
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=BERLIN)
    sim.add_station(2, key=STATION_KEY, seed=4, name="Second Station", zone=BERLIN)
    await sim.start()
    try:
        async with running_bot(sim) as env:
            fake = env.fake
            scenes: list[tuple[str, str, dict[str, Any]]] = [
                ("nowplaying", "/nowplaying", {}),
                ("recent", "/recent count:5", {"count": 5}),
                ("playlist", "/playlist", {}),
                ("stats", "/stats period:30d", {"period": "30d"}),
                ("listen", "/listen", {}),
                ("station", "/station", {}),
                ("history", "/history", {}),
            ]
            for scene, label, options in scenes:
                since = len(fake.requests)
                iid = await fake.slash(label.split()[0].lstrip("/"), options)
                message = await fake.final_message(iid, within=30)
                commands = {iid: label}
                if scene == "playlist":
                    target = fake.original(iid)
                    click = await fake.click(target, "pg:next")
                    await fake.response(click)
                write_scene(fake, out / f"{scene}.jsonl", since, commands)
                assert message is not None
            since = len(fake.requests)
            iid = await fake.slash("onair", {}, sub=["status"])
            await fake.final_message(iid, within=30)
            write_scene(fake, out / "admin-status.jsonl", since, {iid: "/onair status"})
    finally:
        await sim.stop()


async def _announcements(out: Path) -> None:
    clock = ManualClock()
    sim = StationSimulator(clock=clock)
    slots = [(TRACKS[0], 200.0), (JINGLES[0], 5.0), (TRACKS[1], 200.0), (TRACKS[2], 200.0)]
    sim.add_station(
        1,
        key=STATION_KEY,
        programme=Programme(slots, epoch=clock() - 30.0),
        public_url="https://c9.radioboss.fm",
        zone=BERLIN,
    )
    await sim.start()
    fake = FakeDiscord(channels_per_guild=2)
    await fake.start()
    guild = fake.guilds[0]
    config = "".join(
        f'[[subscriptions]]\nguild = {guild.id}\nchannel = {channel}\nstation = "main"\n'
        f'mode = "{mode}"\n'
        for channel, mode in zip(guild.channels, ("post", "card"), strict=True)
    )
    try:
        async with running_bot(sim, fake=fake, extra_config=config) as env:
            announcer = env.bot.announcer
            for step in (0, 175, 5):
                clock.advance(step)
                watch = next(iter(announcer.watches.watches.values()))
                await fake.wait_for(lambda w=watch: not w.busy)
                before = watch.status.polls
                announcer.watches.poll_now(watch.job_id)
                await fake.wait_for(lambda w=watch, b=before: w.status.polls > b and not w.busy)
                await announcer.idle()
            for channel, mode in zip(guild.channels, ("post", "card"), strict=True):
                path = out / f"announce-{mode}.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    offset = time.time() - time.monotonic()
                    for record in fake.requests:
                        drawn = record.method in {"POST", "PATCH", "DELETE"}
                        mine = f"/channels/{channel}/messages" in record.path
                        if drawn and mine and record.status < 300:
                            handle.write(json.dumps(_line(record, offset, None)) + "\n")
    finally:
        await fake.stop()
        await sim.stop()


async def main(out: Path) -> None:
    await _listener_commands(out)
    await _announcements(out)


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screens/jsonl")
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(target))
