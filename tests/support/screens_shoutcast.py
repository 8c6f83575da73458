"""Scenes of a Shoutcast station (issue 33): its announcement post and /nowplaying, read from
the DNAS simulator (no artwork, no length: what a DNAS gives)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bot.simulator import TRACKS, ManualClock, Programme
from bot.simulator.hosts.shoutcast import ShoutcastSimulator

from .botenv import running_bot, subscription_config
from .fakediscord import FakeDiscord
from .screens_announcements import settled
from .screens_record import BERLIN, scene_line


async def shoutcast(out: Path) -> None:
    clock = ManualClock()
    sim = ShoutcastSimulator(clock=clock)
    slots = [(TRACKS[0], 200.0), (TRACKS[1], 200.0), (TRACKS[2], 200.0)]
    sim.add_station(1, key=None, programme=Programme(slots, epoch=clock() - 30.0), zone=BERLIN)
    await sim.start()
    fake = FakeDiscord(channels_per_guild=1)
    await fake.start()
    guild = fake.guilds[0]
    channel = guild.channels[0]
    try:
        marks = [(0.0, clock())]
        config = subscription_config(guild.id, channel, mode="post")
        async with running_bot(
            sim, fake=fake, extra_config=config, station_options='kind = "shoutcast"'
        ) as env:
            announcer = env.bot.announcer
            for step in (0, 175):
                clock.advance(step)
                marks.append((time.monotonic(), clock()))
                watch = announcer.watched()[0]
                await fake.wait_for(settled(watch))
                before = watch.status.polls
                announcer.poll_now(watch)
                await fake.wait_for(settled(watch, after=before))
                await announcer.idle()
            with (out / "shoutcast-post.jsonl").open("w", encoding="utf-8") as handle:
                for record in fake.requests:
                    mine = f"/channels/{channel}/messages" in record.path
                    if record.method == "POST" and mine and record.status < 300:
                        started, sim_time = max(m for m in marks if m[0] <= record.at)
                        offset = sim_time - (started or record.at)
                        handle.write(json.dumps(scene_line(record, offset, None)) + "\n")
            # /nowplaying drawn at the station's time, as the posts are ("started … ago").
            since = len(fake.requests)
            iid = await fake.slash("nowplaying")
            await fake.final_message(iid, within=30)
            offset = clock() - time.monotonic()
            with (out / "shoutcast-nowplaying.jsonl").open("w", encoding="utf-8") as handle:
                for record in fake.requests[since:]:
                    if record.method != "GET" and "/commands" not in record.path:
                        line = scene_line(record, offset, "/nowplaying")
                        handle.write(json.dumps(line) + "\n")
    finally:
        await fake.stop()
        await sim.stop()
