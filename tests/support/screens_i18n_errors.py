"""Error replies in a user's language: a station that sends something unreadable,
one that redirects to an address OnAir does not contact, and a channel discord.py cannot
resolve (a private thread OnAir was never told of), for a user whose Discord is in German, then
one in Brazilian Portuguese.

    .venv/bin/python -m tests.support.screens OUT_DIR i18n_errors
"""

from __future__ import annotations

from pathlib import Path

from bot.simulator import StationSimulator

from .botenv import STATION_KEY, running_bot
from .fakediscord import FakeDiscord, snowflake
from .screens_record import write_scene

LOCALES = (("de", "de"), ("pt-BR", "pt-br"))


async def i18n_errors(out: Path) -> None:
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm")
    await sim.start()
    fake = FakeDiscord()
    await fake.start()
    try:
        async with running_bot(sim, fake=fake) as env:
            client = env.bot.registry.clients["main"]
            for locale, tag in LOCALES:
                fake.user_locales[fake.owner_id] = locale
                since = len(fake.requests)
                commands = {}
                for fault in (
                    {"kind": "html"},
                    {"kind": "redirect", "body": "http://10.0.0.1/api/info/1"},
                ):
                    client.last_info = None
                    client.forget_cached()
                    sim.inject(endpoint="info", **fault)
                    iid = await fake.slash("station")
                    await fake.final_message(iid, within=30)
                    sim.faults.clear()
                    commands[iid] = "/station"
                hidden = snowflake()  # a private thread OnAir was never told of
                fake.guilds[0].threads.append(hidden)
                iid = await fake.slash(
                    "onair",
                    {"channel": str(hidden)},
                    sub=["announce"],
                    resolved=fake.resolved_channel(hidden),
                )
                await fake.response(iid)
                commands[iid] = "/onair announce"
                write_scene(fake, out / f"i18n-{tag}-errors.jsonl", since, commands)
    finally:
        await fake.stop()
        await sim.stop()
