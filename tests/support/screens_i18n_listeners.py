"""The listener commands in pt-BR and de, as a user whose Discord is in the language sees
them: /recent, /history, /station, /top,
/playlist with its jingles shown, and /join refused (not in a voice channel).

    .venv/bin/python -m tests.support.screens OUT_DIR i18n_listeners
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .screens_record import berlin_bot, write_scene

LOCALES = (("pt-BR", "pt-br"), ("de", "de"))


async def i18n_listeners(out: Path) -> None:
    async with berlin_bot(seed=6) as env:
        fake = env.fake
        for locale, tag in LOCALES:
            fake.user_locales[fake.owner_id] = locale
            scenes: list[tuple[str, str, dict[str, Any]]] = [
                ("recent", "/recent count:8", {"count": 8}),
                ("history", "/history", {}),
                ("station", "/station", {}),
                ("top", "/top period:month", {"period": "month"}),
                ("playlist", "/playlist", {}),
                ("join", "/join", {}),
            ]
            for scene, label, options in scenes:
                since = len(fake.requests)
                iid = await fake.slash(label.split()[0].lstrip("/"), options)
                await fake.final_message(iid, within=30)
                if scene == "playlist" and fake.original(iid).get("components"):
                    target = fake.original(iid)
                    ids = [c["custom_id"] for r in target["components"] for c in r["components"]]
                    if "pg:jingles" in ids:
                        await fake.response(await fake.click(target, "pg:jingles"))
                path = out / f"i18n-{tag}-{scene}.jsonl"
                write_scene(fake, path, since, {iid: label})
