"""Scenes of the scheduled posts (recaps, a week of plays) and of shows (events, voice status)."""

from __future__ import annotations

import json
import random
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bot.simulator import LIVE_SHOW, TRACKS

from .botenv import running_bot
from .fakediscord import FakeDiscord
from .screens_announcements import alert_steps
from .screens_community import screen_station
from .screens_record import BERLIN, STATUS, scene_line, slash_scene, write_scene
from .screens_voice import voice_station


async def scheduled_scenes(out: Path) -> None:
    """/onair alerts and its posts (a live show starting and ending, the station down and back),
    a role OnAir cannot ping, /onair recap and a week's recap."""
    slots = [(TRACKS[0], 200.0), (LIVE_SHOW, 3000.0), (TRACKS[1], 7200.0)]
    clock, sim = screen_station(slots, zone=BERLIN)
    await sim.start()
    fake = FakeDiscord(channels_per_guild=2)
    guild = fake.guilds[0]
    guild.everyone_permissions &= ~(1 << 17)  # no Mention @everyone: a role must be mentionable
    await fake.start()
    staff, recap_channel = guild.channels
    try:
        marks = [(0.0, clock())]
        async with running_bot(sim, fake=fake, clock=clock) as env:
            announcer = env.bot.announcer
            for scene, label, role in (
                ("alerts-cannot-mention", "/onair alerts channel:#channel-0 role:@Staff", 2),
                ("alerts-setup", "/onair alerts channel:#channel-0 role:@Listeners", 1),
            ):
                since = len(fake.requests)
                options: dict[str, Any] = {"channel": str(staff), "role": str(guild.roles[role])}
                resolved = fake.resolved_channel(staff) | fake.resolved_role(guild.roles[role])
                iid = await fake.slash("onair", options, sub=["alerts"], resolved=resolved)
                await fake.final_message(iid, within=30)
                write_scene(fake, out / f"{scene}.jsonl", since, {iid: label})
            await fake.wait_for(lambda: bool(announcer.watched()))
            await alert_steps(env, fake, sim, clock, marks)
            path = out / "alerts.jsonl"
            with path.open("w", encoding="utf-8") as handle:
                for record in fake.requests:
                    mine = record.method == "POST" and f"/channels/{staff}/messages" in record.path
                    if mine and record.status < 300:
                        started, sim_time = max(m for m in marks if m[0] <= record.at)
                        offset = sim_time - (started or record.at)
                        handle.write(json.dumps(scene_line(record, offset, None)) + "\n")
            # A week of plays for the recap (what the watches store as they poll).
            await a_week_of_plays(env.bot.storage, clock())
            iid = await fake.slash("onair", {"timezone": "Europe/Berlin"}, sub=["settings"])
            await fake.final_message(iid, within=30)
            slot = datetime.fromtimestamp(clock(), BERLIN) + timedelta(hours=1)
            day = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")[
                slot.weekday()
            ]
            since = len(fake.requests)
            options = {"channel": str(recap_channel), "day": day, "hour": slot.hour}
            label = f"/onair recap channel:#channel-1 day:{day} hour:{slot.hour}"
            iid = await fake.slash(
                "onair", options, sub=["recap"], resolved=fake.resolved_channel(recap_channel)
            )
            await fake.final_message(iid, within=30)
            write_scene(fake, out / "recap-setup.jsonl", since, {iid: label})
            await slash_scene(
                fake, out / "admin-status-alerts.jsonl", STATUS, "onair", sub=["status"]
            )
            since = len(fake.requests)
            clock.now = slot.replace(minute=0, second=0, microsecond=0).timestamp() + 60
            await env.bot.recaps.tick()
            await env.bot.posts.idle()
            offset = clock() - time.monotonic()
            path = out / "recap.jsonl"
            with path.open("w", encoding="utf-8") as handle:
                for record in fake.requests[since:]:
                    if record.method == "POST" and f"/channels/{recap_channel}/" in record.path:
                        handle.write(json.dumps(scene_line(record, offset, None)) + "\n")
    finally:
        await fake.stop()
        await sim.stop()


async def a_week_of_plays(storage: Any, end: float) -> None:
    """A station's week: a track every ~3.5 minutes, listeners following the day, a live show
    on two evenings."""
    rows = []
    moment = end - 7 * 86400
    index = 0
    # Some tracks are on rotation more than others.
    favourites = [
        n for n, weight in enumerate((9, 7, 6, 6, 5, 4, 3, 3, 2, 2, 1, 1)) for _ in range(weight)
    ]
    random.Random(3).shuffle(favourites)
    while moment < end:
        local = datetime.fromtimestamp(moment, BERLIN)
        evening = 19 <= local.hour < 21 and local.weekday() in (2, 4)
        listeners = int(60 + 140 * max(0.0, 1 - abs(local.hour - 20) / 12) + (index * 7) % 23)
        if evening:
            title, artist, length, live = "Friday Night Live Mix", "DJ Nova", 7200.0, 1
            if local.weekday() == 2:
                title, artist = "The Wednesday Session", "Ada & Bruno"
            listeners += 120
        else:
            track = TRACKS[favourites[index % len(favourites)]]
            title, artist, length, live = track.title, track.artist, 210.0, 0
        rows.append(("main", moment, title, artist, None, length, listeners, live))
        moment += length
        index += 1
    await storage.execute_atomic(
        [
            (
                "INSERT INTO plays (station, started, title, artist, album, duration, "
                "listeners, live) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                row,
            )
            for row in rows
        ]
    )
    # Listeners' ❤ on some of the week's tracks (the favourites get more).
    plays = await storage.fetch(
        "SELECT id, started, title FROM plays WHERE station = 'main' AND live = 0 ORDER BY id"
    )
    pick = random.Random(5)
    likes: list[tuple[Any, int, float]] = []
    for play_id, started, title in plays:
        weight = 3 if title in (TRACKS[2].title, TRACKS[5].title) else 1
        for user in range(pick.choice((0, 0, 0, 1, 1, 2)) * weight):
            likes.append((play_id, 990_000 + len(likes) + user, float(started) + 60))
    await storage.execute_atomic(
        [
            ("INSERT INTO likes (play_id, user_id, liked_at) VALUES (?, ?, ?)", like)
            for like in likes
        ]
    )


async def show_scenes(out: Path) -> None:
    """/onair voice status:on|off while OnAir plays (the channel status itself is in Discord's
    sidebar, which discord-look does not draw), /onair events, and /onair events without
    Create Events (the other guild has Manage Events, which makes no event since 2026)."""
    from .fakediscord import CREATE_EVENTS, MANAGE_EVENTS, SET_VOICE_CHANNEL_STATUS

    rig = await voice_station("shows")
    if rig is None:
        return
    icecast, sim = rig
    fake = FakeDiscord(guild_count=2, channels_per_guild=2)
    guild, other = fake.guilds
    guild.bot_role_permissions = CREATE_EVENTS
    other.bot_role_permissions = MANAGE_EVENTS
    lounge = fake.add_voice_channel(guild, "Lounge", bot_allow=SET_VOICE_CHANNEL_STATUS)
    radio = fake.add_voice_channel(other, "Radio")  # no Set Voice Channel Status there
    listener = 700000000000000001
    await sim.start()
    await icecast.start()
    await fake.start()
    await fake.set_member_voice(guild, listener, lounge, name="listener")
    await fake.set_member_voice(other, listener, radio, name="listener")
    try:
        extra = f'stream_url = "{icecast.url}"\n'
        async with running_bot(sim, fake=fake, extra_config=extra):
            for where in (guild, other):
                iid = await fake.slash("join", {}, guild=where, user_id=listener)
                await fake.final_message(iid, within=30)
            scenes: tuple[tuple[str, str, dict[str, Any], Any], ...] = (
                ("voice-status-off", "/onair voice status:False", {"status": False}, guild),
                ("voice-status-on", "/onair voice status:True", {"status": True}, guild),
                ("events-on", "/onair events enabled:True", {"enabled": True}, guild),
                ("events-no-permission", "/onair events enabled:True", {"enabled": True}, other),
                ("voice-status-no-permission", "/onair voice status:True", {"status": True}, other),
            )
            for scene, label, options, where in scenes:
                sub = ["events"] if "enabled" in options else ["voice"]
                path = out / f"{scene}.jsonl"
                await slash_scene(
                    fake, path, label, "onair", options, sub=sub, guild=where, user_id=listener
                )
    finally:
        await fake.stop()
        await icecast.stop()
        await sim.stop()
