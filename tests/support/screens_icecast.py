"""Scenes of a station of kind icecast: the announcement post of a title change seen on the ICY
stream, and /nowplaying right after it."""

from __future__ import annotations

from pathlib import Path

from bot.simulator import TRACKS, ManualClock, Programme
from bot.simulator.hosts.icecast import IcecastSimulator

from .fakediscord import FakeDiscord
from .icecast_bot import icecast_bot
from .screens_record import write_scene
from .waiting import wait_for


async def icecast_scenes(out: Path) -> None:
    clock = ManualClock()  # the programme's; OnAir's own times are the real clock's
    sim = IcecastSimulator(
        clock=clock, hostname="radio.example.org", metaint=1024, burst_bytes=4096
    )
    slots = [(TRACKS[4], 200.0), (TRACKS[5], 200.0), (TRACKS[6], 200.0)]
    sim.add_mount(
        "/live",
        programme=Programme(slots, epoch=clock() - 1.0),
        name="Harbour Radio",
        description="Indie and folk, all night",
        genre="Indie",
        listeners=41,
    )
    fake = FakeDiscord()
    await sim.start()
    await fake.start()
    channel = fake.guilds[0].channels[0]
    try:
        async with icecast_bot(sim, fake) as bot:
            client = bot.registry.clients["main"]

            def posted() -> int:
                return len(fake.sent("POST", rf"^/channels/{channel}/messages$"))

            await fake.wait_for(lambda: posted() == 1)
            await wait_for(lambda: client.push_live)
            since = len(fake.requests)
            clock.advance(200.0)  # the next title, seen on the ICY stream
            await fake.wait_for(lambda: posted() == 2)
            write_scene(fake, out / "icecast-post.jsonl", since, {}, only=f"/channels/{channel}/")
            since = len(fake.requests)
            iid = await fake.slash("nowplaying")
            await fake.final_message(iid, within=30)
            write_scene(fake, out / "icecast-nowplaying.jsonl", since, {iid: "/nowplaying"})
    finally:
        await fake.stop()
        await sim.stop()
