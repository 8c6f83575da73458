"""What a Brazilian and a German community see. /nowplaying for a user whose
Discord is in the language (a reply follows interaction.locale), and the guild's public posts in
the guild's language (``/onair settings language:``): an announcement post and the alerts (a live
show starting and ending, the station down and back). 1,234 listeners, so that the number's
grouping shows.

    .venv/bin/python -m tests.support.screens OUT_DIR i18n
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.simulator import LIVE_SHOW, TRACKS

from .botenv import running_bot
from .fakediscord import FakeDiscord
from .screens_announcements import alert_steps
from .screens_community import screen_station
from .screens_record import scene_line, write_scene

# Discord locale -> the file name's tag and the catalog code /onair settings language: takes.
LOCALES = (("pt-BR", "pt-br", "pt_BR"), ("de", "de", "de"))
LISTENERS = 1234


async def i18n(out: Path) -> None:
    for locale, tag, code in LOCALES:
        await _community(out, locale, tag, code)


async def _community(out: Path, locale: str, tag: str, code: str) -> None:

    slots = [(TRACKS[0], 200.0), (LIVE_SHOW, 3000.0), (TRACKS[1], 7200.0)]
    clock, sim = screen_station(slots, zone=ZoneInfo("Europe/Berlin"))
    station = sim.station(1)
    station.listeners_at = lambda moment: LISTENERS  # type: ignore[method-assign]
    await sim.start()
    fake = FakeDiscord(channels_per_guild=2)
    await fake.start()
    guild = fake.guilds[0]
    alerts, posts = guild.channels
    fake.user_locales[fake.owner_id] = locale
    try:
        marks = [(0.0, clock())]
        async with running_bot(sim, fake=fake, clock=clock) as env:
            iid = await fake.slash("onair", {"language": code}, sub=["settings"])
            await fake.final_message(iid, within=30)
            since = len(fake.requests)
            iid = await fake.slash("nowplaying")
            await fake.final_message(iid, within=30)
            write_scene(fake, out / f"i18n-{tag}-nowplaying.jsonl", since, {iid: "/nowplaying"})
            for channel, sub in ((alerts, "alerts"), (posts, "announce")):
                iid = await fake.slash(
                    "onair",
                    {"channel": str(channel)},
                    sub=[sub],
                    resolved=fake.resolved_channel(channel),
                )
                await fake.final_message(iid, within=30)
            announcer = env.bot.announcer
            await fake.wait_for(lambda: bool(announcer.watched()))
            # the first track; the live show starts; it ends; the station fails, is down after
            # 150 s, and is back.
            await alert_steps(env, fake, sim, clock, marks)
            for channel, scene in ((alerts, "alerts"), (posts, "announce")):
                path = out / f"i18n-{tag}-{scene}.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    for record in fake.requests:
                        drawn = record.method in {"POST", "PATCH"}
                        mine = f"/channels/{channel}/messages" in record.path
                        if drawn and mine and record.status < 300:
                            started, sim_time = max(m for m in marks if m[0] <= record.at)
                            offset = sim_time - (started or record.at)
                            line: dict[str, Any] = scene_line(record, offset, None)
                            handle.write(json.dumps(line) + "\n")
    finally:
        await fake.stop()
        await sim.stop()
