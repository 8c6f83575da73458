"""OnAir installed on a listener's own account: /nowplaying in a DM with OnAir, in English and in
German (the listener's Discord language). discord-look draws the conversation alone, as in any
DM: there is no server or channel around it.

    .venv/bin/python -m tests.support.screens OUT_DIR user_install
"""

from __future__ import annotations

from pathlib import Path

from . import discord_rules as rules
from .screens_record import berlin_bot, slash_scene


async def user_install(out: Path) -> None:
    async with berlin_bot(seed=3) as env:
        fake = env.fake
        for language, user_id in (("en", 5101), ("de", 5102)):
            fake.user_locales[user_id] = "en-US" if language == "en" else "de"
            where = fake.elsewhere(rules.BOT_DM)
            await slash_scene(
                fake,
                out / f"user-install-nowplaying-dm-{language}.jsonl",
                "/nowplaying",
                "nowplaying",
                where=where,
                user_id=user_id,
            )
