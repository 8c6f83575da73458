"""Scenes of both announcement modes (a card per play, one edited card) and of the alerts."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.announcer.watcher import StationWatch
from bot.delivery.announcements import gone
from bot.simulator import JINGLES, TRACKS, StationSimulator
from bot.storage import Subscription

from .botenv import running_bot, subscription_config
from .fakediscord import FakeDiscord
from .screens_community import screen_station
from .screens_record import BERLIN, STATUS, scene_line, slash_scene


async def announcement_scenes(out: Path) -> None:
    slots = [(TRACKS[0], 200.0), (JINGLES[0], 5.0), (TRACKS[1], 200.0), (TRACKS[2], 200.0)]
    clock, sim = screen_station(slots, zone=BERLIN)
    await sim.start()
    fake = FakeDiscord(channels_per_guild=3)
    await fake.start()
    guild = fake.guilds[0]
    # post, card (compact by default: the small artwork) and card with style full (big artwork).
    kinds: tuple[tuple[str, str, dict[str, str]], ...] = (
        ("post", "post", {}),
        ("card", "card", {}),
        ("card-full", "card", {"style": "full"}),
    )
    config = "".join(
        subscription_config(guild.id, channel, mode=mode, **options)
        for channel, (_, mode, options) in zip(guild.channels, kinds, strict=True)
    )
    try:
        # Message times follow the simulator's clock (moved by hand), so that each post is
        # drawn at the time its track started: (monotonic time, simulator time) at each step.
        marks = [(0.0, clock())]
        async with running_bot(sim, fake=fake, extra_config=config) as env:
            announcer = env.bot.announcer
            for step in (0, 175, 5):
                clock.advance(step)
                marks.append((time.monotonic(), clock()))
                watch = announcer.watched()[0]
                await fake.wait_for(settled(watch))
                before = watch.status.polls
                announcer.poll_now(watch)
                await fake.wait_for(settled(watch, after=before))
                await announcer.idle()
            # /onair status of a guild that announces: where, and what became of the posts.
            await slash_scene(
                fake, out / "admin-status-announcing.jsonl", STATUS, "onair", sub=["status"]
            )
            # Every channel paused (as after Discord refused them): what status says to do.
            for sub in await env.bot.storage.subscriptions(guild_id=guild.id):
                await env.bot.storage.pause(sub.id, "Missing Access: OnAir cannot see the channel")
            await slash_scene(
                fake, out / "admin-status-paused.jsonl", STATUS, "onair", sub=["status"]
            )
            # A config copied with config.example.toml's channel id: paused, and said so.
            example = 222222222222222222
            await env.bot.storage.upsert_subscription(Subscription(0, guild.id, example, "main"))
            (copied,) = [
                s
                for s in await env.bot.storage.subscriptions(guild_id=guild.id)
                if s.channel_id == example
            ]
            await env.bot.storage.pause(copied.id, gone(404, example))
            path = out / "admin-status-example-id.jsonl"
            await slash_scene(fake, path, STATUS, "onair", sub=["status"])
            for channel, (kind, _, _) in zip(guild.channels, kinds, strict=True):
                path = out / f"announce-{kind}.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    for record in fake.requests:
                        drawn = record.method in {"POST", "PATCH", "DELETE"}
                        mine = f"/channels/{channel}/messages" in record.path
                        if drawn and mine and record.status < 300:
                            started, sim_time = max(m for m in marks if m[0] <= record.at)
                            offset = sim_time - (started or record.at)
                            handle.write(json.dumps(scene_line(record, offset, None)) + "\n")
    finally:
        await fake.stop()
        await sim.stop()


async def alert_steps(
    env: Any, fake: FakeDiscord, sim: StationSimulator, clock: Any, marks: list[tuple[float, float]]
) -> None:
    """The alerts' story, one poll a step: the first track; the live show starts; it ends; the
    station fails, is down after 150 s, and is back. ``marks`` gets (monotonic, station clock)
    at each step, so the drawing can place each post at its station time."""
    announcer = env.bot.announcer
    faults = {3: True, 5: False}  # step index -> the station fails (True) or is back
    for index, step in enumerate((0, 175, 3000, 600, 150, 30)):
        clock.advance(step)
        if index in faults:
            if faults[index]:
                sim.inject("status", status=503)
            else:
                sim.faults.clear()
        marks.append((time.monotonic(), clock()))
        watch = announcer.watched()[0]
        await fake.wait_for(settled(watch), within=60)
        before = watch.status.polls
        announcer.poll_now(watch)
        await fake.wait_for(settled(watch, after=before), within=60)
        await announcer.idle()
        await env.bot.posts.idle()


def settled(watch: StationWatch, *, after: int = -1) -> Callable[[], bool]:
    """True once the watch has polled more than ``after`` times and is not polling now."""
    return lambda: watch.status.polls > after and not watch.busy
