"""Scenes of the community features for ``scripts/screens``: a templated announcement (AutoDJ
and live variants), a liked post, ``/top``, the template preview and a refused template."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot.simulator import LIVE_SHOW, TRACKS, ManualClock, Programme, StationSimulator
from bot.simulator.library import LibraryItem
from bot.station import Play
from bot.storage import Storage

from .botenv import STATION_KEY, running_bot, subscription_config
from .fakediscord import FakeDiscord, Recorded

DESCRIPTION = (
    "by **{artist|someone}** · *{album|single}* ({year|?})\\n"
    "[▶ Tune in]({listen_url}) · {listeners|?} listening"
)
TEMPLATE = """
[subscriptions.template]
content = "🎶 Now on **{station}**"
title = "{title}"
description = "@DESCRIPTION@"
footer = "{station} · {genre|radio}"
color = "#1DB954"
[subscriptions.template.live]
content = "🔴 **{station}** is live!"
title = "LIVE: {title}"
description = "Join us now: [Tune in]({listen_url}) · {listeners|?} listening"
color = "#ED4245"
""".replace("@DESCRIPTION@", DESCRIPTION)


def _line(record: Recorded, offset: float, command: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"method": record.method, "path": record.path, "json": record.json}
    line["at"] = record.at + offset
    if isinstance(record.response, dict):
        created = record.response.get("resource", {}).get("message") or record.response
        if record.method == "POST" and created.get("id"):
            line["response_id"] = str(created["id"])
    if command:
        line["command"] = command
        line["user"] = "listener"
    return line


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line) + "\n")


def _write_since(fake: FakeDiscord, path: Path, since: int, offset: float, label: str) -> None:
    """The scene a command ``label`` made: what OnAir sent since request ``since`` (no GETs)."""
    records = fake.requests[since:]
    lines = [
        _line(r, offset, label) for r in records if r.method != "GET" and "/commands" not in r.path
    ]
    _write(path, lines)


def screen_station(
    slots: list[tuple[LibraryItem, float]], *, ago: float = 30.0, zone: ZoneInfo | None = None
) -> tuple[ManualClock, StationSimulator]:
    """Station 1 playing ``slots`` since ``ago`` seconds, with the public URL the scenes show
    (not started yet)."""
    clock = ManualClock()
    sim = StationSimulator(clock=clock)
    options: dict[str, Any] = {"zone": zone} if zone else {}
    sim.add_station(
        1,
        key=STATION_KEY,
        programme=Programme(slots, epoch=clock() - ago),
        public_url="https://c9.radioboss.fm",
        **options,
    )
    return clock, sim


async def community(out: Path) -> None:
    slots = [(TRACKS[3], 200.0), (LIVE_SHOW, 600.0), (TRACKS[4], 200.0)]
    # the zone the bot's config gives the station
    clock, sim = screen_station(slots, zone=ZoneInfo("Europe/Berlin"))
    await sim.start()
    fake = FakeDiscord(channels_per_guild=2)
    await fake.start()
    guild = fake.guilds[0]
    templated, plain = guild.channels
    config = subscription_config(guild.id, templated, mention_role=guild.roles[1]) + TEMPLATE
    config += subscription_config(guild.id, plain)
    # Message times follow the simulator's clock (moved by hand): each post is drawn at the
    # time its item started. The offset from monotonic time is taken again after each move.
    offset = clock() - time.monotonic()
    try:
        async with running_bot(sim, fake=fake, extra_config=config) as env:
            announcer = env.bot.announcer

            def posts(channel: int) -> list[Recorded]:
                found = fake.sent("POST", rf"^/channels/{channel}/messages$")
                return [r for r in found if r.status == 200]

            await fake.wait_for(lambda: posts(templated) and posts(plain))
            # Listeners like the plain post: three clicks, one of them taken back.
            post = posts(plain)[0]
            message_id = int(post.response["id"])
            clicks = []
            for user in (801, 802, 803, 802, 804):
                message = fake.messages[message_id]
                button = next(
                    b
                    for row in message["components"]
                    for b in row["components"]
                    if b.get("custom_id", "").startswith("onair:like:")
                )
                iid = await fake.click(message, button["custom_id"], user_id=user)
                clicks.append(await fake.response(iid))
            liked = _line(clicks[-1], offset)
            liked["message_id"] = str(message_id)
            _write(out / "announce-liked.jsonl", [_line(post, offset), liked])
            # The live show, worded by the live variant.
            clock.advance(175)
            moved = clock() - time.monotonic()
            watch = announcer.watched()[0]
            await fake.wait_for(lambda: not watch.busy)
            before = watch.status.polls
            announcer.poll_now(watch)
            await fake.wait_for(lambda: watch.status.polls > before and not watch.busy)
            await announcer.idle()
            await fake.wait_for(lambda: len(posts(templated)) >= 2)
            first, live = posts(templated)[:2]
            _write(out / "announce-template.jsonl", [_line(first, offset), _line(live, moved)])
            offset = moved
            await _a_week_of_plays(env.bot.storage)
            for scene, label, name, options, sub in (
                ("top", "/top period:week", "top", {"period": "week"}, None),
                (
                    "template-preview",
                    "/onair template preview channel:#announcements",
                    "onair",
                    {"channel": str(templated)},
                    ["template", "preview"],
                ),
                (  # during the live show: the AutoDJ wording can still be previewed
                    "template-preview-autodj",
                    "/onair template preview channel:#announcements variant:autodj",
                    "onair",
                    {"channel": str(templated), "variant": "autodj"},
                    ["template", "preview"],
                ),
                (
                    "template-refused",
                    "/onair template set channel:#announcements title:{title:>50000000}",
                    "onair",
                    {"channel": str(templated), "title": "{title:>50000000}"},
                    ["template", "set"],
                ),
            ):
                since = len(fake.requests)
                resolved = fake.resolved_channel(templated) if sub else None
                iid = await fake.slash(name, options, sub=sub, resolved=resolved)
                await fake.final_message(iid, within=30)
                _write_since(fake, out / f"{scene}.jsonl", since, offset, label)
    finally:
        await fake.stop()
        await sim.stop()


async def _a_week_of_plays(storage: Storage) -> None:
    """Plays and likes of the last days in the history, so /top has a week to show (recorded
    oldest first, as the announcer records them)."""
    now = datetime.now(UTC)
    plan = {5: (7, 12), 6: (5, 9), 7: (6, 4), 8: (3, 7), 9: (4, 2), 10: (2, 1)}
    airings = sorted(
        (now - timedelta(days=day, hours=index), index, day)
        for index, (plays, _) in plan.items()
        for day in range(1, plays + 1)
    )
    user = 900
    for started, index, day in airings:
        item = TRACKS[index]
        plays, likes = plan[index]
        play = Play(item.title, item.artist, started=started, started_exact=True)
        await storage.record_play("main", play, 20, started)
        play_id = await storage.play_id("main", play)
        assert play_id is not None
        for _ in range(likes // plays + (day <= likes % plays)):
            user += 1
            await storage.toggle_like(play_id, user, now=started.timestamp() + 60)
