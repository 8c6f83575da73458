""" "Find this song": an announcement post that gets the link by an edit, and /nowplaying with
it, in English and Brazilian Portuguese (the guild's language for the post, the listener's for
/nowplaying), against the simulator's song search.

    .venv/bin/python -m tests.support.screens OUT_DIR song_links
"""

from __future__ import annotations

import tempfile
from functools import partial
from pathlib import Path

from bot.simulator import TRACKS
from bot.storage import GuildSettings, SqliteStorage

from .botenv import running_bot, subscription_config
from .fakediscord import FakeDiscord
from .screens_community import screen_station
from .screens_record import BERLIN, write_scene

# (Discord locale of the listener, the guild's language code, the file name's tag)
LANGUAGES = (("en-US", "", "en"), ("pt-BR", "pt_BR", "pt_BR"))


def edited(fake: FakeDiscord) -> bool:
    return any(r.method == "PATCH" for r in fake.requests)


async def song_links(out: Path) -> None:
    for locale, language, tag in LANGUAGES:
        slots = [(TRACKS[0], 200.0), (TRACKS[1], 200.0)]
        _, sim = screen_station(slots, zone=BERLIN)
        await sim.start()
        fake = FakeDiscord(channels_per_guild=1)
        await fake.start()
        guild = fake.guilds[0]
        links = f'lookup_url = "{sim.base_url}/search"'
        folder = tempfile.TemporaryDirectory()
        database = str(Path(folder.name) / "onair.sqlite3")
        storage = await SqliteStorage(database).open()  # the guild's language before any post
        await storage.save_guild_settings(GuildSettings(guild.id, language=language))
        await storage.close()
        try:
            async with running_bot(
                sim,
                fake=fake,
                extra_config=subscription_config(guild.id, guild.channels[0]),
                links_extra=links,
                db_path=database,
            ) as env:
                await env.bot.announcer.idle()
                await fake.wait_for(partial(edited, fake), within=30)
                channel = rf"/channels/{guild.channels[0]}/messages"
                write_scene(fake, out / f"post-{tag}.jsonl", 0, {}, zone=BERLIN, only=channel)
                fake.user_locales[fake.owner_id] = locale
                since = len(fake.requests)
                iid = await fake.slash("nowplaying")
                await fake.final_message(iid, within=30)
                write_scene(fake, out / f"nowplaying-{tag}.jsonl", since, {iid: "/nowplaying"})
        finally:
            await fake.stop()
            await sim.stop()
            folder.cleanup()
