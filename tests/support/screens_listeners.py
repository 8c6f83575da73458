"""Scenes of the listener commands (``/onair status``, now playing, history, ...) and of a
station gone stale.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.simulator import StationSimulator

from .botenv import STATION_KEY, running_bot
from .fakediscord import FakeDiscord
from .screens_record import BERLIN, slash_scene, write_scene, zone_at_hour


async def listener_scenes(out: Path) -> None:
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=BERLIN)
    sim.add_station(2, key=STATION_KEY, seed=4, name="Second Station", zone=BERLIN)
    # A station where it is now between 23:00 and midnight: its playlist crosses midnight.
    late = zone_at_hour(23)
    sim.add_station(3, key=STATION_KEY, seed=5, name="Late Night Radio", zone=late)
    # And one where it is just past midnight: its recent plays began yesterday.
    early = zone_at_hour(0)
    sim.add_station(4, key=STATION_KEY, seed=6, name="Early Hours FM", zone=early)
    await sim.start()
    extra = "".join(
        f'[[stations]]\nid = "{slug}"\nname = "{name}"\nbase_url = "{sim.base_url}"\n'
        f'station_id = {number}\nkey_env = "ONAIR_TEST_STATION_KEY"\n'
        f'timezone = "{zone.key}"\nguilds = []\n'
        for slug, name, number, zone in (
            ("late", "Late Night Radio", 3, late),
            ("early", "Early Hours FM", 4, early),
        )
    )
    try:
        async with running_bot(sim, extra_config=extra) as env:
            fake = env.fake
            scenes: list[tuple[str, str, dict[str, Any], ZoneInfo | None]] = [
                ("nowplaying", "/nowplaying", {}, None),
                ("recent", "/recent count:5", {"count": 5}, None),
                ("recent-yesterday", "/recent station:early", {"station": "early"}, early),
                ("playlist", "/playlist", {}, None),
                ("playlist-midnight", "/playlist station:late", {"station": "late"}, late),
                ("playlist-jingles", "/playlist", {}, None),
                ("stats", "/stats period:30d", {"period": "30d"}, None),
                ("stats-7d", "/stats", {}, None),
                (
                    "stats-range-too-long",
                    "/stats from:2020-01-01 to:2022-01-01",
                    {"from": "2020-01-01", "to": "2022-01-01"},
                    None,
                ),
                ("listen", "/listen", {}, None),
                ("station", "/station", {}, None),
                ("history", "/history", {}, None),
            ]
            # Search for the artist on air (recorded in the history by the commands above).
            word = sim.station(1).programme.at(sim.clock()).item.artist.split()[-1].lower()
            scenes.append(("history-search", f"/history search:{word}", {"search": word}, None))
            for scene, label, options, zone in scenes:
                since = len(fake.requests)
                iid = await fake.slash(label.split()[0].lstrip("/"), options)
                message = await fake.final_message(iid, within=30)
                commands = {iid: label}
                if scene == "playlist":  # it opens on the item on air; back to what played
                    target = fake.original(iid)
                    click = await fake.click(target, "pg:prev")
                    await fake.response(click)
                if scene == "playlist-jingles":  # "Show jingles" clicked
                    click = await fake.click(fake.original(iid), "pg:jingles")
                    await fake.response(click)
                if scene == "playlist-midnight":
                    await _page_to_midnight(fake, iid)
                if scene == "listen":  # "More streams" → a media player: the link, privately
                    target = fake.original(iid)
                    menu = target["components"][-1]["components"][0]
                    value = next(
                        o["value"] for o in menu["options"] if "media player" in o["label"]
                    )
                    choice = await fake.choose(target, menu["custom_id"], [value])
                    await fake.final_message(choice)
                    commands[choice] = "/listen"
                write_scene(fake, out / f"{scene}.jsonl", since, commands, zone)
                assert message is not None
            admin: list[tuple[str, str, list[str]]] = [
                ("admin-status", "/onair status", ["status"]),
                ("admin-station-list", "/onair station list", ["station", "list"]),
                ("admin-preview", "/onair preview", ["preview"]),
            ]
            for scene, label, sub in admin:
                await slash_scene(fake, out / f"{scene}.jsonl", label, "onair", sub=sub)
    finally:
        await sim.stop()


async def _page_to_midnight(fake: FakeDiscord, iid: str) -> None:
    """Click ▶ until the page that shows the day line at midnight (at most 6 pages)."""
    message = fake.original(iid)
    for _ in range(6):
        if "──" in (message["embeds"][0].get("description") or ""):
            return
        click = await fake.click(message, "pg:next")
        update = await fake.response(click)
        message = {**message, **update.json["data"]}
    raise AssertionError("no day line within six pages")


async def stale_scenes(out: Path) -> None:
    """/nowplaying of a station that stopped answering: the last known state, marked."""
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=BERLIN)
    await sim.start()
    try:
        async with running_bot(sim, cache_seconds=0) as env:
            fake = env.fake
            await fake.final_message(await fake.slash("nowplaying"), within=30)  # known state
            sim.inject("status", endpoint="info", status=503)
            since = len(fake.requests)
            iid = await fake.slash("nowplaying")
            await fake.final_message(iid, within=60)
            write_scene(fake, out / "nowplaying-stale.jsonl", since, {iid: "/nowplaying"})
    finally:
        await sim.stop()
