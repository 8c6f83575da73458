"""Record what a listener sees: every command and both announcement modes, as discord-look JSONL.

Runs the real bot against the fake Discord and the station simulator (nothing leaves loopback),
drives each listener command and both announcement modes, and writes the recorded requests in
the input shape of ``shared/tools/discord-look`` (one JSON object a line), one file per scene.
``scripts/screens`` renders them to PNG with discord-look when it is installed.

    .venv/bin/python -m tests.support.screens OUT_DIR
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.announcer.watcher import StationWatch
from bot.delivery.announcements import gone
from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, StationSimulator
from bot.storage import Subscription

from .botenv import STATION_KEY, running_bot, subscription_config
from .fakediscord import FakeDiscord, Recorded
from .screens_community import community, screen_station
from .screens_i18n import i18n
from .screens_i18n_admin import i18n_admin
from .screens_i18n_listeners import i18n_listeners
from .screens_i18n_stats import i18n_stats
from .screens_links import links
from .screens_requests import requests

BERLIN = ZoneInfo("Europe/Berlin")
# One zone per UTC offset (-12 .. +14): the scenes about midnight use the one where it is
# nearly midnight now, so they need no fake clock (the bot reads the real one).
ZONES = [
    "Etc/GMT+12",
    "Pacific/Pago_Pago",
    "Pacific/Honolulu",
    "America/Anchorage",
    "America/Los_Angeles",
    "America/Denver",
    "America/Chicago",
    "America/New_York",
    "America/Halifax",
    "America/Sao_Paulo",
    "Atlantic/South_Georgia",
    "Atlantic/Azores",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Athens",
    "Europe/Moscow",
    "Asia/Dubai",
    "Asia/Tashkent",
    "Asia/Dhaka",
    "Asia/Bangkok",
    "Asia/Singapore",
    "Asia/Tokyo",
    "Australia/Brisbane",
    "Pacific/Noumea",
    "Pacific/Fiji",
    "Pacific/Tongatapu",
    "Pacific/Kiritimati",
]


def zone_at_hour(hour: int) -> ZoneInfo:
    """A zone where the local hour is ``hour`` right now."""
    now = datetime.now(UTC)
    return next(z for z in map(ZoneInfo, ZONES) if now.astimezone(z).hour == hour)


def _line(record: Recorded, wall_offset: float, command: str | None) -> dict[str, Any]:
    line: dict[str, Any] = {"method": record.method, "path": record.path, "json": record.json}
    if record.files:
        line["files"] = [
            {"filename": filename, "base64": base64.b64encode(data).decode()}
            for _name, filename, data in record.files
        ]
    line["at"] = record.at + wall_offset
    if command:
        line["command"] = command
        line["user"] = "listener"
    return line


def write_scene(
    fake: FakeDiscord,
    path: Path,
    since: int,
    commands: dict[str, str],
    zone: ZoneInfo | None = None,
) -> int:
    """Write the requests recorded since index ``since``; returns the new index. ``zone``: the
    viewer's zone for this scene (written next to it for scripts/screens), default Berlin."""
    wall_offset = time.time() - time.monotonic()
    if zone is not None:
        path.with_suffix(".tz").write_text(zone.key, encoding="utf-8")
    with path.open("w", encoding="utf-8") as out:
        for record in fake.requests[since:]:
            if record.method == "GET" or "/commands" in record.path:
                continue
            command = next((c for iid, c in commands.items() if f"/{iid}/" in record.path), None)
            out.write(json.dumps(_line(record, wall_offset, command)) + "\n")
    return len(fake.requests)


STATUS = "/onair status"


async def _scene(
    fake: FakeDiscord,
    path: Path,
    label: str,
    command: str,
    options: dict[str, Any] | None = None,
    **how: Any,
) -> str:
    """One slash command's scene: run it, wait for its final message, write what it sent
    (labelled ``label``); the interaction's id."""
    since = len(fake.requests)
    iid = await fake.slash(command, options or {}, **how)
    await fake.final_message(iid, within=30)
    write_scene(fake, path, since, {iid: label})
    return iid


async def _listener_commands(out: Path) -> None:
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=BERLIN)
    sim.add_station(2, key=STATION_KEY, seed=4, name="Second Station", zone=BERLIN)
    # A station where it is now between 23:00 and midnight: its playlist crosses midnight.
    late = zone_at_hour(23)
    sim.add_station(3, key=STATION_KEY, seed=5, name="Late Night Radio", zone=late)
    # And one where it is just past midnight: its recent plays began yesterday.
    early = zone_at_hour(0)
    sim.add_station(4, key=STATION_KEY, seed=6, name="Early Hours FM", zone=early)
    await sim.start()
    extra = "".join(
        f'[[stations]]\nid = "{slug}"\nname = "{name}"\nbase_url = "{sim.base_url}"\n'
        f'station_id = {number}\nkey_env = "ONAIR_TEST_STATION_KEY"\n'
        f'timezone = "{zone.key}"\nguilds = []\n'
        for slug, name, number, zone in (
            ("late", "Late Night Radio", 3, late),
            ("early", "Early Hours FM", 4, early),
        )
    )
    try:
        async with running_bot(sim, extra_config=extra) as env:
            fake = env.fake
            scenes: list[tuple[str, str, dict[str, Any], ZoneInfo | None]] = [
                ("nowplaying", "/nowplaying", {}, None),
                ("recent", "/recent count:5", {"count": 5}, None),
                ("recent-yesterday", "/recent station:early", {"station": "early"}, early),
                ("playlist", "/playlist", {}, None),
                ("playlist-midnight", "/playlist station:late", {"station": "late"}, late),
                ("playlist-jingles", "/playlist", {}, None),
                ("stats", "/stats period:30d", {"period": "30d"}, None),
                ("stats-7d", "/stats", {}, None),
                (
                    "stats-range-too-long",
                    "/stats from:2020-01-01 to:2022-01-01",
                    {"from": "2020-01-01", "to": "2022-01-01"},
                    None,
                ),
                ("listen", "/listen", {}, None),
                ("station", "/station", {}, None),
                ("history", "/history", {}, None),
            ]
            # Search for the artist on air (recorded in the history by the commands above).
            word = sim.station(1).programme.at(sim.clock()).item.artist.split()[-1].lower()
            scenes.append(("history-search", f"/history search:{word}", {"search": word}, None))
            for scene, label, options, zone in scenes:
                since = len(fake.requests)
                iid = await fake.slash(label.split()[0].lstrip("/"), options)
                message = await fake.final_message(iid, within=30)
                commands = {iid: label}
                if scene == "playlist":  # it opens on the item on air; back to what played
                    target = fake.original(iid)
                    click = await fake.click(target, "pg:prev")
                    await fake.response(click)
                if scene == "playlist-jingles":  # "Show jingles" clicked
                    click = await fake.click(fake.original(iid), "pg:jingles")
                    await fake.response(click)
                if scene == "playlist-midnight":
                    await _page_to_midnight(fake, iid)
                if scene == "listen":  # "More streams" → a media player: the link, privately
                    target = fake.original(iid)
                    menu = target["components"][-1]["components"][0]
                    value = next(
                        o["value"] for o in menu["options"] if "media player" in o["label"]
                    )
                    choice = await fake.choose(target, menu["custom_id"], [value])
                    await fake.final_message(choice)
                    commands[choice] = "/listen"
                write_scene(fake, out / f"{scene}.jsonl", since, commands, zone)
                assert message is not None
            admin: list[tuple[str, str, list[str]]] = [
                ("admin-status", "/onair status", ["status"]),
                ("admin-station-list", "/onair station list", ["station", "list"]),
                ("admin-preview", "/onair preview", ["preview"]),
            ]
            for scene, label, sub in admin:
                await _scene(fake, out / f"{scene}.jsonl", label, "onair", sub=sub)
    finally:
        await sim.stop()


async def _page_to_midnight(fake: FakeDiscord, iid: str) -> None:
    """Click ▶ until the page that shows the day line at midnight (at most 6 pages)."""
    message = fake.original(iid)
    for _ in range(6):
        if "──" in (message["embeds"][0].get("description") or ""):
            return
        click = await fake.click(message, "pg:next")
        update = await fake.response(click)
        message = {**message, **update.json["data"]}
    raise AssertionError("no day line within six pages")


async def _announcements(out: Path) -> None:
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
            await _scene(
                fake, out / "admin-status-announcing.jsonl", STATUS, "onair", sub=["status"]
            )
            # Every channel paused (as after Discord refused them): what status says to do.
            for sub in await env.bot.storage.subscriptions(guild_id=guild.id):
                await env.bot.storage.pause(sub.id, "Missing Access: OnAir cannot see the channel")
            await _scene(fake, out / "admin-status-paused.jsonl", STATUS, "onair", sub=["status"])
            # A config copied with config.example.toml's channel id: paused, and said so (issue 25).
            example = 222222222222222222
            await env.bot.storage.upsert_subscription(Subscription(0, guild.id, example, "main"))
            (copied,) = [
                s
                for s in await env.bot.storage.subscriptions(guild_id=guild.id)
                if s.channel_id == example
            ]
            await env.bot.storage.pause(copied.id, gone(404, example))
            path = out / "admin-status-example-id.jsonl"
            await _scene(fake, path, STATUS, "onair", sub=["status"])
            for channel, (kind, _, _) in zip(guild.channels, kinds, strict=True):
                path = out / f"announce-{kind}.jsonl"
                with path.open("w", encoding="utf-8") as handle:
                    for record in fake.requests:
                        drawn = record.method in {"POST", "PATCH", "DELETE"}
                        mine = f"/channels/{channel}/messages" in record.path
                        if drawn and mine and record.status < 300:
                            started, sim_time = max(m for m in marks if m[0] <= record.at)
                            offset = sim_time - (started or record.at)
                            handle.write(json.dumps(_line(record, offset, None)) + "\n")
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


async def _voice_station(scenes: str) -> tuple[Any, StationSimulator] | None:
    """A fake Icecast playing a sine and station 1 (random programme, c9 URL, Berlin) for the
    voice and shows scenes; None (said on stderr) where there is no FFmpeg to make the sine."""
    from bot.voice import find_ffmpeg

    from .fakeicecast import FakeIcecast, make_mp3

    binary = find_ffmpeg()
    if binary is None:
        print(f"no FFmpeg: the {scenes} scenes are left out", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as folder:
        mp3 = await asyncio.to_thread(make_mp3, binary.path, Path(folder) / "sine.mp3")
        icecast = FakeIcecast(mp3.read_bytes())
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=BERLIN)
    return icecast, sim


async def _voice(out: Path) -> None:
    """/nowplaying with the "Play in" button for a listener in a voice channel, /join, and
    /join by someone in no voice channel."""
    rig = await _voice_station("voice")
    if rig is None:
        return
    icecast, sim = rig
    fake = FakeDiscord(channels_per_guild=2)
    guild = fake.guilds[0]
    lounge = fake.add_voice_channel(guild, "Lounge")
    listener = 700000000000000001
    await sim.start()
    await icecast.start()
    await fake.start()
    await fake.set_member_voice(guild, listener, lounge, name="listener")
    try:
        extra = f'stream_url = "{icecast.url}"\n'
        async with running_bot(sim, fake=fake, extra_config=extra):
            scenes = (
                ("nowplaying-voice", "nowplaying", listener),
                ("join", "join", listener),
                ("join-not-in-voice", "join", None),  # someone in no voice channel
            )
            for scene, name, user in scenes:
                await _scene(fake, out / f"{scene}.jsonl", f"/{name}", name, user_id=user)
            # An admin makes the Lounge the 24/7 home channel; /leave then says it stays set; a
            # stream address for a config-file station is the owner's, said politely.
            admin: tuple[tuple[str, str, dict[str, Any], list[str]], ...] = (
                (
                    "voice-settings",
                    "/onair voice channel:Lounge leave_when_empty:300",
                    {"channel": str(lounge), "leave_when_empty": 300},
                    ["voice"],
                ),
                ("leave-home", "/leave", {}, []),
                (
                    "voice-stream-config-station",
                    "/onair voice station:main stream_url:…",
                    {"station": "main", "stream_url": "https://radio.example/live"},
                    ["voice"],
                ),
            )
            for scene, label, options, sub in admin:
                command = "onair" if sub else "leave"
                path = out / f"{scene}.jsonl"
                await _scene(fake, path, label, command, options, sub=sub or None, user_id=listener)
    finally:
        await fake.stop()
        await icecast.stop()
        await sim.stop()


async def _scheduled(out: Path) -> None:
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
                        handle.write(json.dumps(_line(record, offset, None)) + "\n")
            # A week of plays for the recap (what the watches store as they poll).
            await _a_week_of_plays(env.bot.storage, clock())
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
            await _scene(fake, out / "admin-status-alerts.jsonl", STATUS, "onair", sub=["status"])
            since = len(fake.requests)
            clock.now = slot.replace(minute=0, second=0, microsecond=0).timestamp() + 60
            await env.bot.recaps.tick()
            await env.bot.posts.idle()
            offset = clock() - time.monotonic()
            path = out / "recap.jsonl"
            with path.open("w", encoding="utf-8") as handle:
                for record in fake.requests[since:]:
                    if record.method == "POST" and f"/channels/{recap_channel}/" in record.path:
                        handle.write(json.dumps(_line(record, offset, None)) + "\n")
    finally:
        await fake.stop()
        await sim.stop()


async def _a_week_of_plays(storage: Any, end: float) -> None:
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


async def _shows(out: Path) -> None:
    """/onair voice status:on|off while OnAir plays (the channel status itself is in Discord's
    sidebar, which discord-look does not draw), /onair events, and /onair events without
    Manage Events."""
    from .fakediscord import MANAGE_EVENTS, SET_VOICE_CHANNEL_STATUS

    rig = await _voice_station("shows")
    if rig is None:
        return
    icecast, sim = rig
    fake = FakeDiscord(guild_count=2, channels_per_guild=2)
    guild, other = fake.guilds
    guild.bot_role_permissions = MANAGE_EVENTS
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
                await _scene(
                    fake, path, label, "onair", options, sub=sub, guild=where, user_id=listener
                )
    finally:
        await fake.stop()
        await icecast.stop()
        await sim.stop()


async def _stale(out: Path) -> None:
    """/nowplaying of a station that stopped answering: the last known state, marked."""
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=BERLIN)
    await sim.start()
    try:
        async with running_bot(sim, cache_seconds=0) as env:
            fake = env.fake
            await fake.final_message(await fake.slash("nowplaying"), within=30)  # known state
            sim.inject("status", endpoint="info", status=503)
            since = len(fake.requests)
            iid = await fake.slash("nowplaying")
            await fake.final_message(iid, within=60)
            write_scene(fake, out / "nowplaying-stale.jsonl", since, {iid: "/nowplaying"})
    finally:
        await sim.stop()


SCENES = {
    "listener": _listener_commands,
    "stale": _stale,
    "announcements": _announcements,
    "voice": _voice,
    "shows": _shows,
    "scheduled": _scheduled,
    "community": community,
    "requests": requests,
    "links": links,
    "i18n": i18n,
    "i18n_listeners": i18n_listeners,
    "i18n_stats": i18n_stats,
    "i18n_admin": i18n_admin,
}


async def main(out: Path, groups: list[str]) -> None:
    for name in groups or list(SCENES):
        await SCENES[name](out)


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/screens/jsonl")
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(target, sys.argv[2:]))
