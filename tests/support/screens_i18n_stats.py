"""/stats (with its chart) and weekly recap in pt-BR and de: /stats as a user whose
Discord is in the language sees it, and the recap as a guild set to the language gets it.

    .venv/bin/python -m tests.support.screens OUT_DIR i18n_stats
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from bot.config.schema import WEEKDAYS
from bot.simulator import LIVE_SHOW, TRACKS

from .botenv import running_bot
from .fakediscord import FakeDiscord
from .screens_record import BERLIN, write_scene
from .screens_shows import a_week_of_plays

LOCALES = (("pt-BR", "pt_BR", "pt-br"), ("de", "de", "de"))


async def i18n_stats(out: Path) -> None:
    from .screens_community import screen_station

    slots = [(TRACKS[0], 200.0), (LIVE_SHOW, 3000.0), (TRACKS[1], 7200.0)]
    clock, sim = screen_station(slots, zone=BERLIN)
    await sim.start()
    fake = FakeDiscord(guild_count=2, channels_per_guild=2)
    await fake.start()
    try:
        async with running_bot(sim, fake=fake, clock=clock) as env:
            await a_week_of_plays(env.bot.storage, clock())
            # One guild per language: each gets its own recap of the same week.
            for (locale, code, tag), guild in zip(LOCALES, fake.guilds, strict=True):
                recap_channel = guild.channels[1]
                settings = {"timezone": "Europe/Berlin", "language": code}
                iid = await fake.slash("onair", settings, sub=["settings"], guild=guild)
                await fake.final_message(iid, within=30)
                fake.user_locales[fake.owner_id] = locale
                since = len(fake.requests)
                iid = await fake.slash("stats", {"period": "30d"}, guild=guild)
                await fake.final_message(iid, within=60)
                write_scene(fake, out / f"i18n-{tag}-stats.jsonl", since, {iid: "/stats"})
                slot = datetime.fromtimestamp(clock(), BERLIN) + timedelta(hours=1)
                options = {
                    "channel": str(recap_channel),
                    "day": WEEKDAYS[slot.weekday()],
                    "hour": slot.hour,
                }
                iid = await fake.slash(
                    "onair",
                    options,
                    sub=["recap"],
                    resolved=fake.resolved_channel(recap_channel, guild),
                    guild=guild,
                )
                await fake.final_message(iid, within=30)
                clock.now = slot.replace(minute=0, second=0, microsecond=0).timestamp() + 60
                since = len(fake.requests)
                await env.bot.recaps.tick()
                await env.bot.posts.idle()
                write_scene(fake, out / f"i18n-{tag}-recap.jsonl", since, {})
    finally:
        await fake.stop()
        await sim.stop()
