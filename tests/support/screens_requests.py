"""Scenes of song requests for ``scripts/screens``: /request accepted, refused in the
station's words, over the cooldown, text that matches nothing, /requests, and the
announcement that names (and pings) the listener who asked."""

from __future__ import annotations

import time
from pathlib import Path

from bot.simulator import JINGLES, TRACKS

from .botenv import running_bot, subscription_config
from .fakediscord import FakeDiscord
from .screens_community import _line, _write, _write_since, screen_station

NEON = TRACKS[3]


async def requests(out: Path) -> None:
    slots = [(TRACKS[0], 200.0), (JINGLES[0], 200.0), (TRACKS[1], 200.0)]
    clock, sim = screen_station(slots, ago=60.0)
    await sim.start()
    fake = FakeDiscord()
    await fake.start()
    offset = clock() - time.monotonic()
    owner = fake.owner_id
    fake.user_names[owner] = "Ana"
    guild = fake.guilds[0]
    config = subscription_config(guild.id, guild.channels[0])
    try:
        async with running_bot(
            sim, fake=fake, extra_config=config, station_options="requests = true"
        ) as env:
            await fake.wait_for(lambda: fake.sent("POST", r"/channels/\d+/messages$"))

            async def scene(name: str, label: str, options: dict[str, object], **kw) -> None:  # type: ignore[no-untyped-def]
                since = len(fake.requests)
                command = kw.pop("command", "request")
                iid = await fake.slash(command, options, **kw)
                await fake.final_message(iid, within=30)
                _write_since(fake, out / f"{name}.jsonl", since, offset, label)

            await fake.response(await fake.autocomplete("request", "song", "neon"))
            await scene(
                "request-accepted",
                f"/request song:{NEON.cast_title} ping:True",
                {"song": "1004", "ping": True},
            )
            await fake.response(await fake.autocomplete("request", "song", "harbour", user_id=2))
            await scene(
                "request-refused",
                f"/request song:{TRACKS[0].cast_title}",
                {"song": "1001"},
                user_id=2,
            )
            await scene("request-no-match", "/request song:zzz top", {"song": "zzz top"}, user_id=3)
            await fake.response(await fake.autocomplete("request", "song", "signal"))
            await scene("request-cooldown", "/request song:Signal Fire", {"song": "1003"})
            await scene("requests-queue", "/requests", {}, command="requests")
            since = len(fake.requests)
            clock.advance(141.0)  # the request's slot
            announcer = env.bot.announcer
            watch = announcer.watched()[0]
            announcer.poll_now(watch)
            await fake.wait_for(lambda: len(fake.sent("POST", r"/channels/\d+/messages$")) >= 2)
            await announcer.idle()
            posts = [
                r
                for r in fake.requests[since:]
                if r.method == "POST" and r.path.endswith("/messages")
            ]
            _write(out / "announce-requested.jsonl", [_line(posts[-1], offset + 141.0)])
    finally:
        await fake.stop()
        await sim.stop()
