"""Scenes of song requests at scale for ``scripts/screens``: the request channel's line in a
German server, and the announcement of a song 95 listeners asked for with ``ping:True`` (as
many pinged as fit, the rest counted), in English and in German."""

from __future__ import annotations

import time
from pathlib import Path

from bot.simulator import JINGLES, TRACKS

from .botenv import running_bot, subscription_config
from .fakediscord import FakeDiscord
from .screens_community import _line, _write, screen_station

NEON = TRACKS[3]
CROWD = 95


async def _crowd(out: Path, language: str) -> None:
    slots = [(TRACKS[0], 200.0), (JINGLES[0], 200.0), (TRACKS[1], 200.0)]
    clock, sim = screen_station(slots, ago=60.0)
    sim.station(1).song_requests.duplicates = True  # every listener may ask for the same song
    await sim.start()
    fake = FakeDiscord()
    await fake.start()
    offset = clock() - time.monotonic()
    guild = fake.guilds[0]
    posts, listing = guild.channels[0], guild.channels[1]
    config = subscription_config(guild.id, posts)
    names = ["Ana", "Bruno", "Chloé", "Dmitri", "Elif", "Farah", "Gustavo", "Hana", "Ivo"]
    listeners = [10**17 * 7 + n for n in range(CROWD)]
    for n, user in enumerate(listeners):
        fake.user_names[user] = f"{names[n % len(names)]} {n + 1}"
    try:
        async with running_bot(
            sim, fake=fake, extra_config=config, station_options="requests = true"
        ) as env:
            await fake.wait_for(lambda: fake.sent("POST", rf"/channels/{posts}/messages$"))
            await fake.final_message(
                await fake.slash("onair", {"language": language}, sub=["settings"])
            )
            station = env.bot.registry.station("main")
            assert station is not None
            await env.bot.requests.configure(
                guild.id,
                station,
                enabled=None,
                role_id=None,
                cooldown=None,
                hourly_cap=0,
                channel_id=listing,
            )
            since = len(fake.requests)
            for user in listeners:
                iid = await fake.slash(
                    "request", {"song": NEON.cast_title, "ping": True}, user_id=user
                )
                await fake.final_message(iid, within=30)
            lines = [
                r
                for r in fake.requests[since:]
                if r.method == "POST" and r.path.endswith(f"/channels/{listing}/messages")
            ]
            _write(out / f"request-line-{language}.jsonl", [_line(r, offset) for r in lines[:3]])
            since = len(fake.requests)
            clock.advance(141.0)  # the request's slot
            announcer = env.bot.announcer
            announcer.poll_now(announcer.watched()[0])
            await fake.wait_for(
                lambda: len(fake.sent("POST", rf"/channels/{posts}/messages$")) >= 2
            )
            await announcer.idle()
            post = [
                r
                for r in fake.requests[since:]
                if r.method == "POST" and r.path.endswith(f"/channels/{posts}/messages")
            ][-1]
            assert post.status == 200, post.response
            _write(out / f"many-pings-{language}.jsonl", [_line(post, offset + 141.0)])
    finally:
        await fake.stop()
        await sim.stop()


async def requests_crowd(out: Path) -> None:
    await _crowd(out, "en")
    await _crowd(out, "de")
