"""The /onair admin replies in pt-BR and de, as an admin whose Discord is in the language
sees them: /onair status (announcing, alerts and the weekly recap set up), /onair station list
and a settings change.

    .venv/bin/python -m tests.support.screens OUT_DIR i18n_admin
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .screens_record import berlin_bot, write_scene

LOCALES = (("pt-BR", "pt-br"), ("de", "de"))


async def i18n_admin(out: Path) -> None:
    async with berlin_bot(seed=6) as env:
        fake = env.fake
        posts, alerts = env.guild.channels[1], env.guild.channels[0]
        setup = (
            ("announce", {"channel": str(posts)}, posts),
            ("alerts", {"channel": str(alerts)}, alerts),
            ("recap", {"channel": str(posts), "day": "Friday", "hour": 18}, posts),
        )
        for sub, options, channel in setup:
            resolved = fake.resolved_channel(channel)
            await fake.final_message(
                await fake.slash("onair", options, sub=[sub], resolved=resolved)
            )
        # The first announcement (in the guild's language) comes before the scenes.
        await fake.wait_request("POST", rf"^/channels/{posts}/messages$", within=30)
        for locale, tag in LOCALES:
            fake.user_locales[fake.owner_id] = locale
            scenes: tuple[tuple[str, str, list[str], dict[str, Any]], ...] = (
                ("status", "/onair status", ["status"], {}),
                ("stations", "/onair station list", ["station", "list"], {}),
                (
                    "settings",
                    "/onair settings timezone:Europe/Berlin",
                    ["settings"],
                    {"timezone": "Europe/Berlin"},
                ),
            )
            for scene, label, sub_path, options in scenes:
                since = len(fake.requests)
                iid = await fake.slash("onair", options, sub=sub_path)
                await fake.final_message(iid, within=30)
                write_scene(fake, out / f"i18n-admin-{tag}-{scene}.jsonl", since, {iid: label})
