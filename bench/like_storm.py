"""A like storm: 1,000 listeners click ❤ on one announcement through the fake Discord.

The fake enforces Discord's rate limits (global 50/s, 5 posts per 5 s per channel) and the 3-s
window for the first response (10062 after it). Phases, each sent back to back as fast as the
fake's gateway writes the frames: 1,000 distinct users click once (each must count once: the
final count is 1,000), the same 1,000 click again (toggled off: 0), then 100 users click 10 times
each (over the per-user limit: those are told privately). Reports per phase the time from the
fake creating the interaction to its callback request arriving (p50, p99, max), late answers,
429s, and the REST requests other than interaction responses made meanwhile (0: each count
travels in its UPDATE_MESSAGE response).

    .venv/bin/python -m bench.like_storm [--clicks 1000] [--postgres]   (--postgres needs
    ONAIR_TEST_POSTGRES_URL; default SQLite in a temporary file)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from typing import Any

from bot.simulator import StationSimulator
from tests.support.botenv import running_bot, subscription_config
from tests.support.fakediscord import FakeDiscord
from tests.support.storage_backends import POSTGRES_ENV, reset_postgres

from .common import emit, ms, percentile

WINDOW = 3.0


def _like_id(message: dict[str, Any]) -> str:
    for row in message["components"]:
        for button in row["components"]:
            if button.get("custom_id", "").startswith("onair:like:"):
                return str(button["custom_id"])
    raise AssertionError("the announcement has no ❤ button")


async def _phase(
    fake: FakeDiscord, message_id: int, users: list[int], name: str
) -> dict[str, Any]:
    callbacks = lambda: fake.sent("POST", r"^/interactions/\d+/[^/]+/callback$")  # noqa: E731
    before_callbacks = len(callbacks())
    before_requests = len(fake.requests)
    before_429 = len(fake.ratelimited)
    started = time.perf_counter()
    ids = []
    for user in users:
        message = fake.messages[message_id]  # as the listener's client shows it now
        ids.append(await fake.click(message, _like_id(message), user_id=user))
    seen = {"index": before_requests, "count": 0}

    def all_answered() -> bool:
        # Only the requests since the last look: scanning them all again on every request
        # would cost the storm's own event loop (the fake runs in it) quadratic time.
        for record in fake.requests[seen["index"] :]:
            seen["count"] += record.route.endswith("/callback")
        seen["index"] = len(fake.requests)
        return seen["count"] >= len(users)

    await fake.wait_for(all_answered, within=120)
    seconds = time.perf_counter() - started
    answered = {r.route.split("/")[2]: r for r in callbacks()[before_callbacks:]}
    latencies = [answered[i].at - fake.interactions[i].created for i in ids if i in answered]
    kinds = [(answered[i].json or {}).get("type") for i in ids if i in answered]
    other = [
        r
        for r in fake.requests[before_requests:]
        if not r.route.startswith("/interactions/") and r.method != "GET"
    ]
    return {
        "phase": name,
        "clicks": len(users),
        "answered": len(latencies),
        "late_10062": sum(r.status == 404 for r in answered.values()),
        "updated": kinds.count(7),
        "told_privately": kinds.count(4),
        "p50_ms": ms(percentile(latencies, 0.5)),
        "p99_ms": ms(percentile(latencies, 0.99)),
        "max_ms": ms(max(latencies, default=0.0)),
        "over_3s": sum(latency > WINDOW for latency in latencies),
        "seconds": round(seconds, 3),
        "429s": len(fake.ratelimited) - before_429,
        "other_rest_writes": len(other),
        "label_after": _label(fake.messages[message_id]),
    }


def _label(message: dict[str, Any]) -> str:
    for row in message["components"]:
        for button in row["components"]:
            if button.get("custom_id", "").startswith("onair:like:"):
                return str(button["label"])
    return ""


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clicks", type=int, default=1000)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    database_extra = ""
    workdir = tempfile.TemporaryDirectory()
    db_path = os.path.join(workdir.name, "onair.sqlite3")
    if args.postgres:
        url = os.environ[POSTGRES_ENV]
        await reset_postgres(url)
        database_extra = f'url = "{url}"'
    fake = FakeDiscord()
    await fake.start()
    fake.rate_limits = True
    fake.callback_window = WINDOW
    sim = StationSimulator()
    sim.add_station(1, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm")
    await sim.start()
    guild = fake.guilds[0]
    config = subscription_config(guild.id, guild.channels[0])
    channel = guild.channels[0]
    results = []
    async with running_bot(
        sim, fake=fake, extra_config=config, db_path=db_path, database_extra=database_extra
    ) as env:
        posted = lambda: [  # noqa: E731
            r for r in fake.sent("POST", rf"^/channels/{channel}/messages$") if r.status == 200
        ]
        await fake.wait_for(lambda: len(posted()) >= 1, within=30)
        message_id = int(posted()[0].response["id"])
        first = [10_000 + n for n in range(args.clicks)]
        results.append(await _phase(fake, message_id, first, "distinct users like"))
        play_id = int(_like_id(fake.messages[message_id]).rsplit(":", 1)[1])
        stored_after_likes = await env.bot.storage.like_count(play_id)
        results.append(await _phase(fake, message_id, first, "the same users unlike"))
        stored_after_unlikes = await env.bot.storage.like_count(play_id)
        hammering = [20_000 + n for n in range(100) for _ in range(10)]
        results.append(await _phase(fake, message_id, hammering, "100 users x 10 clicks"))
        stored_after_hammering = await env.bot.storage.like_count(play_id)
    await sim.stop()
    await fake.stop()
    workdir.cleanup()
    emit(
        {
            "bench": "like_storm",
            "storage": "postgresql" if args.postgres else "sqlite",
            "phases": results,
            "stored_count_after_likes": stored_after_likes,
            "stored_count_after_unlikes": stored_after_unlikes,
            "stored_count_after_hammering": stored_after_hammering,
            "goals": {"counted": args.clicks, "429s": 0, "over_3s": 0},
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
