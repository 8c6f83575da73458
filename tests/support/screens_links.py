"""A station whose owner typed links Discord refuses (not RFC 3986 URIs), as a
listener sees /listen (and the broken stream chosen from its menu), /nowplaying and /station.

Requests the fake Discord refused (400) are left out of the recording: Discord shows nothing of
them, only what the bot sent next (its error reply).

    .venv/bin/python -m tests.support.screens OUT_DIR links
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.simulator import StationSimulator

from .botenv import STATION_KEY, running_bot
from .fakediscord import Recorded

PHISH = "https://phish.example"
TYPED_LINKS = {
    "artwork": f"https://r.example/art.png>[Free]({PHISH}/a)",
    "stationlogo": f"https://r.example/logo.png>[Free]({PHISH}/l)",
    "port443": f"https://r.example/m>[Free]({PHISH}/y)",
    "station_url": f"https://r.example/site>[Free]({PHISH}/w)",
}
MOUNTS = [{"name": "/free", "ssl": f"https://r.example/m>[Free]({PHISH}/y)"}]


async def links(out: Path) -> None:
    sim = StationSimulator()
    sim.add_station(
        1,
        key=STATION_KEY,
        seed=3,
        public_url="https://c9.radioboss.fm",
        zone=ZoneInfo("Europe/Berlin"),
    )
    sim.station(1).typed_links = dict(TYPED_LINKS)
    sim.station(1).extra_mounts = list(MOUNTS)
    await sim.start()
    try:
        async with running_bot(sim) as env:
            fake = env.fake
            for scene, command in (
                ("links-listen", "listen"),
                ("links-nowplaying", "nowplaying"),
                ("links-station", "station"),
            ):
                since = len(fake.requests)
                iid = await fake.slash(command)
                await fake.final_message(iid, within=30)
                labels = {iid: f"/{command}"}
                message: dict[str, Any] = {}
                with contextlib.suppress(KeyError):  # none when Discord refused every answer
                    message = fake.original(iid)
                if command == "listen" and len(message.get("components") or []) > 1:
                    menu = message["components"][-1]["components"][0]
                    option = next(
                        (o for o in menu["options"] if "free" in o["label"]), menu["options"][0]
                    )
                    choice = await fake.choose(message, menu["custom_id"], [option["value"]])
                    await fake.final_message(choice)
                    await fake.wait_for(lambda: all(r.status for r in fake.requests))
                    labels[choice] = "/listen"
                _write(fake.requests[since:], out / f"{scene}.jsonl", labels)
    finally:
        await sim.stop()


def _write(records: list[Recorded], path: Path, labels: dict[str, str]) -> None:
    wall_offset = time.time() - time.monotonic()
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            if record.method == "GET" or "/commands" in record.path or record.status >= 400:
                continue
            line: dict[str, Any] = {"method": record.method, "path": record.path}
            line |= {"json": record.json, "at": record.at + wall_offset}
            command = next((c for iid, c in labels.items() if f"/{iid}/" in record.path), None)
            if command:
                line |= {"command": command, "user": "listener"}
            out.write(json.dumps(line) + "\n")
