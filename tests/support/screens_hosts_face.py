"""What an admin and a listener see of a station's host: `/onair station add` with a `kind` and
the one private line for a `station_id` that is not a mount, and `/playlist`'s one line for a
station whose host publishes no playlist, in English and in German.

    .venv/bin/python -m tests.support.screens OUT_DIR hosts_face

The `/playlist` scene needs a kind in ``SOURCES`` whose host has no playlist (the adapters);
without one it is left out.
"""

from __future__ import annotations

from pathlib import Path

from bot.simulator import StationSimulator
from bot.station.hosts import SOURCES
from bot.station.source import Feature

from .botenv import DEV_OVERRIDE, SECRET, STATION_KEY, running_bot
from .fakediscord import FakeDiscord
from .screens_record import write_scene

LOCALES = (("en-US", "en"), ("de", "de"))
REFS = {"azuracast": '"night"', "icecast": '"/live"', "shoutcast": "1"}


def _no_playlist_kind() -> str | None:
    return next((k for k in sorted(SOURCES) if Feature.PLAYLIST not in SOURCES[k].features), None)


async def hosts_face(out: Path) -> None:
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm")
    await sim.start()
    fake = FakeDiscord()
    await fake.start()
    kind = _no_playlist_kind()
    extra = ""
    if kind is not None:
        extra = "\n".join(
            [
                "[[stations]]",
                'id = "night"',
                'name = "Night FM"',
                f'kind = "{kind}"',
                f'base_url = "{sim.base_url}"',
                f"station_id = {REFS[kind]}",
                f"guilds = [{fake.guilds[0].id}]",
                "",
            ]
        )
    try:
        async with running_bot(
            sim,
            fake=fake,
            extra_config=extra,
            env_extra={"ONAIR_SECRET_KEY": SECRET},
            bot_extra=DEV_OVERRIDE,
        ):
            for locale, tag in LOCALES:
                fake.user_locales[fake.owner_id] = locale
                since = len(fake.requests)
                options = {
                    "name": "Night FM",
                    "base_url": "https://radio.example.org",
                    "station_id": "live",
                    "kind": "icecast",
                }
                iid = await fake.slash("onair", options, sub=["station", "add"])
                await fake.final_message(iid)
                shown = "/onair station add name:Night FM base_url:https://radio.example.org "
                shown += "station_id:live kind:Icecast"
                write_scene(fake, out / f"hosts-{tag}-station-add-mount.jsonl", since, {iid: shown})
                if kind is None:
                    continue
                since = len(fake.requests)
                iid = await fake.slash("playlist", {"station": "night"})
                await fake.final_message(iid)
                write_scene(
                    fake,
                    out / f"hosts-{tag}-playlist-not-offered.jsonl",
                    since,
                    {iid: "/playlist station:Night FM"},
                )
    finally:
        await fake.stop()
        await sim.stop()
