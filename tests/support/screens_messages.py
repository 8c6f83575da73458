"""Message scenes in en, pt-BR and de: /recent around the
station's midnight read from Tokyo, the public down alert, /nowplaying of a station that stopped
answering, /playlist before and after "Show jingles", the German /history search, the recap's
live shows and the /stats range that is too long.

    .venv/bin/python -m tests.support.screens OUT_DIR messages
    .venv/bin/python -m tests.support.screens_messages OUT_DIR DISCORD_LOOK PNG_DIR [before|after]

The second form records and draws every scene at 760 and 400 px into
``PNG_DIR/<defect>/<before|after>-<tag>-<width>.png``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.config.schema import WEEKDAYS
from bot.simulator import LIVE_SHOW, TRACKS, ManualClock, StationSimulator

from .botenv import STATION_KEY, running_bot
from .fakediscord import FakeDiscord
from .screens_announcements import settled
from .screens_community import screen_station
from .screens_record import BERLIN, write_scene
from .screens_shows import a_week_of_plays

# Discord locale of the reader, the file tag, the catalog code of /onair settings language:.
TOKYO = ZoneInfo("Asia/Tokyo")
LOCALES = (("en-US", "en", "en"), ("pt-BR", "pt-br", "pt_BR"), ("de", "de", "de"))


async def messages(out: Path) -> None:
    await _recent(out)
    await _listeners(out)
    await _guild_posts(out)


async def _recent(out: Path) -> None:
    """A quarter past the station's midnight (Berlin), read from Tokyo (eight hours ahead):
    the plays of the station's Saturday evening are the reader's Sunday morning."""
    berlin_now = datetime.now(BERLIN).replace(hour=0, minute=15, second=0, microsecond=0)
    clock = ManualClock(berlin_now.timestamp())
    sim = StationSimulator(clock=clock)
    sim.add_station(1, key=STATION_KEY, seed=6, public_url="https://c9.radioboss.fm", zone=BERLIN)
    await sim.start()
    try:
        async with running_bot(sim, clock=clock) as env:
            fake = env.fake
            for locale, tag, _ in LOCALES:
                fake.user_locales[fake.owner_id] = locale
                since = len(fake.requests)
                iid = await fake.slash("recent", {"count": 20})
                await fake.final_message(iid, within=30)
                path = out / f"6-recent-{tag}.jsonl"
                write_scene(fake, path, since, {iid: "/recent count:20"}, TOKYO)
                _shift(path, clock() - time.time())
    finally:
        await sim.stop()


def _shift(path: Path, seconds: float) -> None:
    """Message times moved onto the scene's clock."""
    lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line["at"] += seconds
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")


async def _listeners(out: Path) -> None:
    """/playlist with its jingles toggled, /history search, /stats too long, /nowplaying stale."""
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=6, public_url="https://c9.radioboss.fm", zone=BERLIN)
    await sim.start()
    try:
        async with running_bot(sim, cache_seconds=0) as env:
            fake = env.fake
            for locale, tag, _ in LOCALES:
                fake.user_locales[fake.owner_id] = locale
                since = len(fake.requests)
                iid = await fake.slash("playlist", {})
                await fake.final_message(iid, within=30)
                write_scene(fake, out / f"9-playlist-{tag}.jsonl", since, {iid: "/playlist"})
                await fake.response(await fake.click(fake.original(iid), "pg:jingles"))
                write_scene(fake, out / f"9-jingles-{tag}.jsonl", since, {iid: "/playlist"})
                word = sim.station(1).programme.at(sim.clock()).item.artist.split()[-1].lower()
                since = len(fake.requests)
                iid = await fake.slash("history", {"search": word})
                await fake.final_message(iid, within=30)
                path = out / f"10-search-{tag}.jsonl"
                write_scene(fake, path, since, {iid: f"/history search:{word}"})
                since = len(fake.requests)
                iid = await fake.slash("stats", {"from": "2021-01-01"})
                await fake.final_message(iid, within=30)
                path = out / f"10-range-{tag}.jsonl"
                write_scene(fake, path, since, {iid: "/stats from:2021-01-01"})
            sim.inject("status", endpoint="info", status=503, times=1000)
            for locale, tag, _ in LOCALES:
                fake.user_locales[fake.owner_id] = locale
                since = len(fake.requests)
                iid = await fake.slash("nowplaying")
                await fake.final_message(iid, within=60)
                write_scene(fake, out / f"8-stale-{tag}.jsonl", since, {iid: "/nowplaying"})
    finally:
        await sim.stop()


async def _guild_posts(out: Path) -> None:
    """Per language a guild set to it: the down alert, and the weekly recap of a week with two
    live shows aired once each."""
    for _, tag, code in LOCALES:
        slots = [(TRACKS[0], 200.0), (LIVE_SHOW, 3000.0), (TRACKS[1], 7200.0)]
        clock, sim = screen_station(slots, zone=BERLIN)
        await sim.start()
        fake = FakeDiscord(channels_per_guild=2)
        await fake.start()
        alerts, recap = fake.guilds[0].channels
        try:
            async with running_bot(sim, fake=fake, clock=clock) as env:
                settings = {"timezone": "Europe/Berlin", "language": code}
                await fake.final_message(
                    await fake.slash("onair", settings, sub=["settings"]), within=30
                )
                await fake.final_message(
                    await fake.slash(
                        "onair",
                        {"channel": str(alerts)},
                        sub=["alerts"],
                        resolved=fake.resolved_channel(alerts),
                    ),
                    within=30,
                )
                announcer = env.bot.announcer
                await fake.wait_for(watching(announcer))
                since = len(fake.requests)
                for step, fails in ((0.0, False), (0.0, True), (150.0, True)):
                    clock.advance(step)
                    if fails:
                        sim.inject("status", status=503, times=1000)
                    watch = announcer.watched()[0]
                    await fake.wait_for(settled(watch), within=60)
                    before = watch.status.polls
                    announcer.poll_now(watch)
                    await fake.wait_for(settled(watch, after=before), within=60)
                    await announcer.idle()
                    await env.bot.posts.idle()
                _keep_channel(fake, out / f"7-down-{tag}.jsonl", since, alerts, last=1)
                sim.faults.clear()
                await a_week_of_plays(env.bot.storage, clock())
                slot = datetime.fromtimestamp(clock(), BERLIN) + timedelta(hours=1)
                options: dict[str, Any] = {
                    "channel": str(recap),
                    "day": WEEKDAYS[slot.weekday()],
                    "hour": slot.hour,
                }
                iid = await fake.slash(
                    "onair", options, sub=["recap"], resolved=fake.resolved_channel(recap)
                )
                await fake.final_message(iid, within=30)
                clock.now = slot.replace(minute=0, second=0, microsecond=0).timestamp() + 60
                since = len(fake.requests)
                await env.bot.recaps.tick()
                await env.bot.posts.idle()
                _keep_channel(fake, out / f"10-recap-{tag}.jsonl", since, recap, last=1)
        finally:
            await fake.stop()
            await sim.stop()


def watching(announcer: Any) -> Callable[[], bool]:
    return lambda: bool(announcer.watched())


def _keep_channel(fake: FakeDiscord, path: Path, since: int, channel: int, last: int) -> None:
    """Only the last ``last`` posts OnAir made in ``channel`` since request ``since``."""
    write_scene(fake, path, since, {})
    lines = path.read_text(encoding="utf-8").splitlines()
    keep = [x for x in lines if f'/channels/{channel}/messages"' in x]
    path.write_text("\n".join(keep[-last:]) + "\n", encoding="utf-8")


def draw(jsonl: Path, look: Path, pngs: Path, when: str) -> None:
    """Each scene at 760 and 400 px: ``pngs/<defect>/<when>-<scene>-<tag>-<width>.png``."""
    for scene in sorted(jsonl.glob("*.jsonl")):
        defect, rest = scene.stem.split("-", 1)
        where = pngs / defect
        where.mkdir(parents=True, exist_ok=True)
        zone_file = scene.with_suffix(".tz")
        zone = zone_file.read_text(encoding="utf-8") if zone_file.exists() else "Europe/Berlin"
        for width in (760, 400):
            png = where / f"{when}-{rest}-{width}.png"
            flags = ["--tz", zone, "--24h", "--no-captions", "--width", str(width)]
            subprocess.run([str(look), str(scene), "--out", str(png), *flags], check=True)
            png.with_suffix(".html").unlink(missing_ok=True)


if __name__ == "__main__":
    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(messages(target))
    if len(sys.argv) > 3:
        draw(target, Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
