"""Scenes of song votes for ``scripts/screens``, in English and German: the running poll, the
finished poll with Discord's count and OnAir's line, the winner's announcement that credits
the server's listeners, and /onair status once Create Polls was taken away (the votes paused)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from bot.simulator import JINGLES, TRACKS

from . import discord_rules as rules
from .botenv import running_bot, subscription_config
from .fakediscord import FakeDiscord, Recorded
from .screens_community import _line, _write, screen_station
from .screens_record import STATUS, slash_scene

LANGUAGES = (("en", "en-US"), ("de", "de"))


def _posts(fake: FakeDiscord, channel: int, since: int = 0) -> list[Recorded]:
    return [
        r
        for r in fake.requests[since:]
        if r.method == "POST" and r.route == f"/channels/{channel}/messages" and r.status == 200
    ]


async def votes(out: Path) -> None:
    for suffix, locale in LANGUAGES:
        await _scenes(out, suffix, locale)


async def _scenes(out: Path, suffix: str, locale: str) -> None:
    slots = [(TRACKS[0], 200.0), (JINGLES[0], 200.0), (TRACKS[1], 200.0)]
    clock, sim = screen_station(slots, ago=60.0)
    sim.station(1).library_durations = True
    sim.station(1).song_requests.recent = 0
    await sim.start()
    fake = FakeDiscord()
    guild = fake.guilds[0]
    guild.name = "Night Owls"
    guild.preferred_locale = locale
    guild.bot_role_permissions |= rules.SEND_POLLS
    await fake.start()
    offset = clock() - time.monotonic()
    announce, polls = guild.channels
    config = subscription_config(guild.id, announce)
    try:
        async with running_bot(
            sim, fake=fake, extra_config=config, station_options="requests = true", clock=clock
        ) as env:
            await fake.wait_for(lambda: bool(_posts(fake, announce)))
            station = env.bot.registry.station("main")
            assert station is not None
            await env.bot.votes.configure(guild.id, polls, station, 30, 10)
            await env.bot.votes.tick()
            await fake.wait_for(lambda: bool(_posts(fake, polls)))
            posted = _posts(fake, polls)[0]
            message_id = int(posted.response["id"])
            texts = [a["poll_media"]["text"] for a in posted.json["poll"]["answers"]]
            on_the_programme = {TRACKS[0].cast_title, TRACKS[1].cast_title}
            best = next(i for i, t in enumerate(texts, start=1) if t not in on_the_programme)
            other = next(i for i in range(1, len(texts) + 1) if i != best)
            for user, answer in ((11, best), (12, best), (13, other), (14, best), (15, other)):
                await fake.vote(message_id, user, answer)
            running = _line(posted, offset)
            results = fake.messages[message_id]["poll"]["results"]
            _write(out / f"votes-running-{suffix}.jsonl", [{**running, "poll_results": results}])

            since = len(fake.requests)
            clock.advance(600.0)
            for _ in range(3):
                await env.bot.votes.tick()
                if _posts(fake, polls, since):
                    break
                await fake.wait_for(
                    lambda: fake.messages[message_id]["poll"]["results"]["is_finalized"]
                )
            ended = next(
                r for r in fake.requests[since:] if r.route.endswith("/expire") and r.status == 200
            )
            final = fake.messages[message_id]["poll"]["results"]
            lines: list[dict[str, Any]] = [
                running,
                {**_line(ended, offset + 600.0), "poll_results": final},
                *(_line(r, offset + 600.0) for r in _posts(fake, polls, since)),
            ]
            _write(out / f"votes-finished-{suffix}.jsonl", lines)

            since = len(fake.requests)
            clock.advance(141.0)  # the jingle's slot, which the request takes
            announcer = env.bot.announcer
            watch = announcer.watched()[0]
            announcer.poll_now(watch)
            await fake.wait_for(lambda: bool(_posts(fake, announce, since)))
            await announcer.idle()
            credited = _posts(fake, announce, since)[-1]
            _write(out / f"votes-credited-{suffix}.jsonl", [_line(credited, offset + 741.0)])

            # Create Polls taken away in the channel: the next slot pauses the votes, and
            # /onair status says why and what to fix, in the admin's language.
            await fake.set_bot_overwrite(guild, polls, deny=rules.SEND_POLLS)
            clock.advance(1800.0 - 741.0 + 15.0)  # the next slot
            await env.bot.votes.tick()
            (paused,) = await env.bot.storage.song_votes(guild.id)
            assert paused.paused_reason is not None
            fake.user_locales[fake.owner_id] = locale
            # The watch's times are the wall clock's: the scene is drawn at its own time.
            await slash_scene(
                fake, out / f"votes-paused-status-{suffix}.jsonl", STATUS, "onair", sub=["status"]
            )
    finally:
        await fake.stop()
        await sim.stop()
