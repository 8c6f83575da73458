""" "Find this song" at fleet scale: 500 stations change tracks within one minute.

The real bot on the fake Discord: 500 stations (one channel each) whose watches are stopped,
then fed one new play each at a random moment of ``--seconds`` through the real fan-out
(``AnnouncerService.announce``), the songs drawn from ``--songs`` distinct ones (so stations
overlap). The song search is the simulator's fake of Apple's on loopback, in four modes: normal,
slow (every answer takes 5 s), failing (503), and "Find this song" off. Reported per mode:
searches sent (at most one per distinct song; Apple's 20 a minute caps them further), the
posts that carried the link at once (its song known already) and those that got it by an edit,
and the time from the change (the ``announce`` call) to
the post reaching the fake Discord, p50/p95/max: the link must not move it.

    .venv/bin/python -m bench.song_links [--stations 500] [--songs 150] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from dataclasses import replace
from datetime import timedelta
from typing import Any

from bot.announcer import Announcement
from bot.simulator import StationSimulator
from bot.simulator.library import LibraryItem
from bot.simulator.songsearch import SongSearchSim
from tests.support.botenv import running_bot, subscription_config
from tests.support.fakediscord import FakeDiscord

from .common import emit, ms, percentile

MODES = ("normal", "slow", "failing", "off")


def songs(count: int) -> list[LibraryItem]:
    return [
        LibraryItem(f"Artist {k}", f"Song number {k}", 200.0, f"Album {k}") for k in range(count)
    ]


async def run_mode(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    library = songs(args.songs)
    fake = FakeDiscord(channels_per_guild=args.stations)
    await fake.start()
    sim = StationSimulator()
    for index in range(args.stations):
        sim.add_station(
            index + 1, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm"
        )
    sim.song_search = SongSearchSim(library)
    if mode == "slow":
        sim.song_search.latency = 5.0
    if mode == "failing":
        sim.song_search.fault = "status"
    await sim.start()
    guild = fake.guilds[0]
    slugs = ["main"] + [f"second{i}" for i in range(1, args.stations)]
    subs = "".join(
        subscription_config(guild.id, channel, station=slug)
        for channel, slug in zip(guild.channels, slugs, strict=True)
    )
    links = "enabled = false" if mode == "off" else f'lookup_url = "{sim.base_url}/search"'
    changed: dict[int, float] = {}
    async with running_bot(
        sim, fake=fake, extra_config=subs, stations=args.stations, links_extra=links
    ) as env:
        announcer = env.bot.announcer
        await announcer.idle()
        announcer.stop_watching()
        await announcer.idle()
        fake.requests.clear()
        # The stations' own plays at start are not part of the minute measured.
        sim.song_search.searches = 0
        sim.song_search.terms.clear()
        info = await env.bot.registry.clients["main"].info(max_age=0)
        base = info.current_play()
        assert base is not None
        start = time.time()
        moments = sorted((rng.uniform(0, args.seconds), i) for i in range(args.stations))
        for at, index in moments:
            delay = start + at - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            song = rng.choice(library)
            play = replace(
                base,
                title=song.title,
                artist=song.artist,
                album=song.album,
                duration=timedelta(seconds=song.seconds),
                started=(base.started or info.fetched_at) + timedelta(hours=1, seconds=at),
            )
            changed[guild.channels[index]] = time.time()
            announcer.announce(slugs[index], Announcement(play, info, time.time()))
        await announcer.idle()
        deliverer = announcer.deliverer
        # Edits still waiting (a slow search, a token) end within the link wait.
        pending = list(deliverer._link_edits)
        if pending:
            await asyncio.wait(pending, timeout=90)
        delays: list[float] = []
        posted_with_link = 0
        for record in fake.requests:
            if record.method != "POST" or record.status != 200:
                continue
            channel = int(record.route.split("/")[2])
            if channel in changed:
                delays.append(record.wall - changed.pop(channel))
                posted_with_link += any(
                    b.get("label") == "Find this song"
                    for row in (record.json or {}).get("components", [])
                    for b in row.get("components", [])
                )
        edited = sum(
            1
            for r in fake.requests
            if r.method == "PATCH" and r.status == 200 and "/messages/" in r.route
        )
        searches = sim.song_search.searches
        distinct = len({t for t in sim.song_search.terms})
    await sim.stop()
    await fake.stop()
    return {
        "mode": mode,
        "posts": len(delays),
        "lost": len(changed),
        "searches": searches,
        "distinct_songs_searched": distinct,
        "posted_with_link": posted_with_link,
        "edits_with_link": edited,
        "p50_ms": ms(percentile(delays, 0.5)),
        "p95_ms": ms(percentile(delays, 0.95)),
        "max_ms": ms(max(delays) if delays else None),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--stations", type=int, default=500)
    parser.add_argument("--songs", type=int, default=150)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--modes", default=",".join(MODES))
    args = parser.parse_args()
    results = [await run_mode(mode, args) for mode in args.modes.split(",")]
    emit(
        {
            "bench": "song_links",
            "stations": args.stations,
            "distinct_songs": args.songs,
            "seconds": args.seconds,
            "modes": results,
            "at_most_one_search_per_song": all(
                r["searches"] == r["distinct_songs_searched"] for r in results
            ),
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
