"""Scenes of an AzuraCast station (issue 33): an announcement post and /nowplaying."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bot.simulator import TRACKS, ManualClock, Programme
from bot.simulator.hosts.azuracast import AzuraCastSimulator

from .botenv import running_bot, subscription_config
from .fakediscord import FakeDiscord
from .screens_record import scene_line, slash_scene


async def azuracast(out: Path) -> None:
    clock = ManualClock()
    sim = AzuraCastSimulator(clock=clock)
    slots = [(TRACKS[0], 200.0), (TRACKS[3], 200.0), (TRACKS[1], 200.0)]
    programme = Programme(slots, epoch=clock() - 60.0)
    sim.add_azura(
        1, "onair_radio", programme=programme, public_url="https://radio.example.com"
    ).sim.name = "OnAir Radio"
    await sim.start()
    fake = FakeDiscord(channels_per_guild=1)
    await fake.start()
    guild = fake.guilds[0]
    config = subscription_config(guild.id, guild.channels[0])
    options = 'kind = "azuracast"'
    try:
        async with running_bot(sim, fake=fake, extra_config=config, station_options=options):
            channel = f"/channels/{guild.channels[0]}/messages"

            def posted() -> int:
                return sum(1 for r in fake.requests if r.method == "POST" and channel in r.path)

            await fake.wait_for(lambda: posted() == 1, within=30)
            clock.advance(145)  # the next song, pushed by AzuraCast
            await fake.wait_for(lambda: posted() == 2, within=30)
            path = out / "azuracast-post.jsonl"
            wall = time.time() - time.monotonic()
            with path.open("w", encoding="utf-8") as handle:
                for record in fake.requests:
                    if record.method == "POST" and channel in record.path and record.status < 300:
                        handle.write(json.dumps(scene_line(record, wall, None)) + "\n")
            clock.advance(40)
            await slash_scene(fake, out / "azuracast-nowplaying.jsonl", "/nowplaying", "nowplaying")
    finally:
        await fake.stop()
        await sim.stop()
