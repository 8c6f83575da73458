"""Live-show events need Create Events (Discord, since 23 February 2026): /onair status and the
/onair events refusal where OnAir has only Manage Events (a server that added it with an older
invite link), as admins whose Discord is in English, German and Brazilian Portuguese see them,
and /onair status where OnAir may make events.

    .venv/bin/python -m tests.support.screens OUT_DIR permissions
"""

from __future__ import annotations

from pathlib import Path

from bot.simulator import StationSimulator

from .botenv import STATION_KEY, running_bot
from .fakediscord import CREATE_EVENTS, MANAGE_EVENTS, FakeDiscord
from .screens_record import BERLIN, slash_scene

LOCALES = (("en-US", "en"), ("de", "de"), ("pt-BR", "pt-br"))


async def permissions(out: Path) -> None:
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=7, public_url="https://c9.radioboss.fm", zone=BERLIN)
    fake = FakeDiscord(guild_count=2)
    allowed, before_split = fake.guilds
    allowed.bot_role_permissions = CREATE_EVENTS
    before_split.bot_role_permissions = MANAGE_EVENTS
    await sim.start()
    await fake.start()
    try:
        async with running_bot(sim, fake=fake) as env:
            for guild in fake.guilds:
                posts = guild.channels[1]
                await fake.final_message(
                    await fake.slash(
                        "onair",
                        {"channel": str(posts)},
                        sub=["announce"],
                        guild=guild,
                        resolved=fake.resolved_channel(posts, guild),
                    )
                )
            for guild in fake.guilds:  # the first announcements come before the scenes
                await fake.wait_request("POST", rf"^/channels/{guild.channels[1]}/messages$")
            await fake.final_message(
                await fake.slash("onair", {"enabled": True}, sub=["events"], guild=allowed)
            )
            # Turned on before Discord's split, when Manage Events was enough.
            await env.bot.storage.set_show_events(before_split.id, "main", on=True)
            await slash_scene(
                fake,
                out / "permissions-en-status-allowed.jsonl",
                "/onair status",
                "onair",
                sub=["status"],
                guild=allowed,
            )
            for locale, tag in LOCALES:
                fake.user_locales[fake.owner_id] = locale
                await slash_scene(
                    fake,
                    out / f"permissions-{tag}-status-missing.jsonl",
                    "/onair status",
                    "onair",
                    sub=["status"],
                    guild=before_split,
                )
                await slash_scene(
                    fake,
                    out / f"permissions-{tag}-events-refused.jsonl",
                    "/onair events enabled:True",
                    "onair",
                    {"enabled": True},
                    sub=["events"],
                    guild=before_split,
                )
    finally:
        await fake.stop()
        await sim.stop()
