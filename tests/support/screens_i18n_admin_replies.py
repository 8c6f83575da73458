"""The /onair voice reply and /onair preview in pt-BR and de: an admin whose Discord is in the
language sets a home channel OnAir may not join yet, and reads the settings and why it did not
join; a guild set to the language previews its post.

    .venv/bin/python -m tests.support.screens OUT_DIR i18n_voice
"""

from __future__ import annotations

from pathlib import Path

from bot.simulator import StationSimulator

from .botenv import STATION_KEY, running_bot
from .fakediscord import CONNECT, VIEW_CHANNEL, FakeDiscord
from .screens_record import write_scene

LOCALES = (("pt-BR", "pt-br"), ("de", "de"))


async def i18n_voice(out: Path) -> None:
    sim = StationSimulator()
    await sim.start()
    fake = FakeDiscord(guild_count=2)
    homes = [
        fake.add_voice_channel(guild, "Radio", bot_deny=VIEW_CHANNEL | CONNECT)
        for guild in fake.guilds
    ]
    await fake.start()
    try:
        async with running_bot(sim, fake=fake):
            for (locale, tag), guild, home in zip(LOCALES, fake.guilds, homes, strict=True):
                fake.user_locales[fake.owner_id] = locale
                since = len(fake.requests)
                options = {"channel": str(home), "leave_when_empty": 300}
                iid = await fake.slash("onair", options, sub=["voice"], guild=guild)
                await fake.final_message(iid, within=30)
                write_scene(fake, out / f"i18n-{tag}-voice.jsonl", since, {iid: "/onair voice"})
    finally:
        await fake.stop()
        await sim.stop()


async def i18n_preview(out: Path) -> None:
    """/onair preview by an en-US admin of a guild set to pt_BR, then one set to de: the
    preview is the post as the guild sees it."""
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm")
    await sim.start()
    fake = FakeDiscord(guild_count=2)
    await fake.start()
    try:
        async with running_bot(sim, fake=fake):
            for (code, tag), guild in zip(
                (("pt_BR", "pt-br"), ("de", "de")), fake.guilds, strict=True
            ):
                iid = await fake.slash("onair", {"language": code}, sub=["settings"], guild=guild)
                await fake.response(iid)
                since = len(fake.requests)
                iid = await fake.slash("onair", {}, sub=["preview"], guild=guild)
                await fake.final_message(iid, within=30)
                write_scene(fake, out / f"i18n-{tag}-preview.jsonl", since, {iid: "/onair preview"})
    finally:
        await fake.stop()
        await sim.stop()
