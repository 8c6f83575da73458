"""A like storm: 1,000 listeners click ❤ on one announcement through the fake Discord.

The fake enforces Discord's rate limits (global 50/s, 5 posts per 5 s per channel) and the 3-s
window for the first response (10062 after it). Phases, each sent back to back as fast as the
fake's gateway writes the frames: 1,000 distinct users click once (each must count once: the
final count is 1,000), the same 1,000 click again (toggled off: 0), then 100 users click 10 times
each (over the per-user limit: those are told privately). Reports per phase the time from the
fake creating the interaction to its callback request arriving (p50, p99, max; what Discord's
3 s counts, including the queue of frames the fake writes faster than one process reads them)
and from discord.py reading the frame to the callback (bot side), late answers,
429s, and the REST requests other than interaction responses made meanwhile (0: each click is
answered by a private reply in its interaction response, which says what it did).

    .venv/bin/python -m bench.like_storm [--clicks 1000] [--postgres] [--in-process]
    (--postgres needs ONAIR_TEST_POSTGRES_URL; default SQLite in a temporary file; the bot runs
    as `onair run` in a child process unless --in-process)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bot.simulator import StationSimulator
from bot.storage import PostgresStorage, SqliteStorage, Storage
from tests.support.botenv import STATION_KEY, config_text, running_bot, subscription_config
from tests.support.fakediscord import FakeDiscord
from tests.support.storage_backends import POSTGRES_ENV, reset_postgres

from .child import child_log, prepare_child
from .common import emit, ms, percentile

WINDOW = 3.0


def _like_id(message: dict[str, Any]) -> str:
    for row in message["components"]:
        for button in row["components"]:
            if button.get("custom_id", "").startswith("onair:like:"):
                return str(button["custom_id"])
    raise AssertionError("the announcement has no ❤ button")


async def _phase(
    fake: FakeDiscord, message_id: int, users: list[int], name: str, received: dict[str, float]
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
    bot_side = [answered[i].at - received[i] for i in ids if i in answered and i in received]
    said = [
        str(((answered[i].json or {}).get("data") or {}).get("content") or "")
        for i in ids
        if i in answered
    ]
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
        "liked_or_removed": sum(s.startswith(("Liked", "Like removed")) for s in said),
        "told_to_wait": sum("quickly" in s for s in said),
        "p50_ms": ms(percentile(latencies, 0.5)),
        "p99_ms": ms(percentile(latencies, 0.99)),
        "max_ms": ms(max(latencies, default=0.0)),
        "over_3s": sum(latency > WINDOW for latency in latencies),
        "bot_side_p50_ms": ms(percentile(bot_side, 0.5)),
        "bot_side_p99_ms": ms(percentile(bot_side, 0.99)),
        "seconds": round(seconds, 3),
        "429s": len(fake.ratelimited) - before_429,
        "other_rest_writes": len(other),
    }


async def _in_process(
    fake: FakeDiscord, sim: StationSimulator, config: str, db_path: str, database_extra: str
) -> tuple[list[dict[str, Any]], list[int]]:
    """The bot in this process (the fake's work and the bot's share one core), with the
    bot-side time measured from discord.py reading each frame."""
    channel = fake.guilds[0].channels[0]
    async with running_bot(
        sim,
        fake=fake,
        extra_config=config,
        db_path=db_path,
        database_extra=database_extra,
        enable_debug_events=True,
    ) as env:
        received: dict[str, float] = {}

        async def on_socket_raw_receive(raw: str) -> None:
            # discord.py has just read this frame off the gateway: the bot-side clock starts.
            if '"INTERACTION_CREATE"' in raw:
                received[json.loads(raw)["d"]["id"]] = time.monotonic()

        env.bot.add_listener(on_socket_raw_receive)
        message_id = await _first_post(fake, channel)

        async def stored(play_id: int) -> int:
            return await env.bot.storage.like_count(play_id)

        return await _phases(fake, message_id, received, stored)


async def _child_process(
    fake: FakeDiscord, sim: StationSimulator, config: str, workdir: str, database_extra: str
) -> tuple[list[dict[str, Any]], list[int]]:
    """``onair run`` in a child process (as deployed): the fake Discord's work is on another
    core, as Discord's is."""
    channel = fake.guilds[0].channels[0]
    db_path = os.path.join(workdir, "child.sqlite3")
    text = config_text(sim, fake, extra=config, db_path=db_path, database_extra=database_extra)
    config_path, env = prepare_child(fake, workdir, text)
    log = child_log(workdir)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.support.run_against_fake",
        "run",
        "--config",
        config_path,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    try:
        await fake.wait_for(lambda: bool(fake.commands), within=60)  # synced: it is ready
        message_id = await _first_post(fake, channel)

        async def stored(play_id: int) -> int:
            if database_extra:
                storage: Storage = PostgresStorage(os.environ[POSTGRES_ENV])
            else:
                storage = SqliteStorage(db_path)
            await storage.open()
            try:
                return await storage.like_count(play_id)
            finally:
                await storage.close()

        return await _phases(fake, message_id, {}, stored)
    finally:
        process.terminate()
        await process.wait()
        log.close()


async def _first_post(fake: FakeDiscord, channel: int) -> int:
    def posted() -> list[Any]:
        found = fake.sent("POST", rf"^/channels/{channel}/messages$")
        return [r for r in found if r.status == 200]

    await fake.wait_for(lambda: len(posted()) >= 1, within=60)
    return int(posted()[0].response["id"])


async def _phases(
    fake: FakeDiscord,
    message_id: int,
    received: dict[str, float],
    stored: Callable[[int], Awaitable[int]],
) -> tuple[list[dict[str, Any]], list[int]]:
    play_id = int(_like_id(fake.messages[message_id]).rsplit(":", 1)[1])
    first = [10_000 + n for n in range(CLICKS)]
    hammering = [20_000 + n for n in range(100) for _ in range(10)]
    results, counts = [], []
    for users, name in (
        (first, "distinct users like"),
        (first, "the same users unlike"),
        (hammering, "100 users x 10 clicks"),
    ):
        results.append(await _phase(fake, message_id, users, name, received))
        counts.append(await stored(play_id))
    return results, counts


CLICKS = 1000


async def main() -> None:
    global CLICKS
    parser = argparse.ArgumentParser()
    parser.add_argument("--clicks", type=int, default=1000)
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--in-process", action="store_true", help="the bot in this process")
    args = parser.parse_args()
    CLICKS = args.clicks
    database_extra = ""
    workdir = tempfile.TemporaryDirectory()
    if args.postgres:
        url = os.environ[POSTGRES_ENV]
        await reset_postgres(url)
        database_extra = f'url = "{url}"'
    fake = FakeDiscord()
    await fake.start()
    fake.rate_limits = True
    fake.callback_window = WINDOW
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, public_url="https://c9.radioboss.fm")
    await sim.start()
    guild = fake.guilds[0]
    config = subscription_config(guild.id, guild.channels[0])
    try:
        if args.in_process:
            db_path = os.path.join(workdir.name, "onair.sqlite3")
            results, counts = await _in_process(fake, sim, config, db_path, database_extra)
        else:
            results, counts = await _child_process(fake, sim, config, workdir.name, database_extra)
    finally:
        await sim.stop()
        await fake.stop()
        workdir.cleanup()
    emit(
        {
            "bench": "like_storm",
            "bot": "this process" if args.in_process else "onair run, a child process",
            "storage": "postgresql" if args.postgres else "sqlite",
            "phases": results,
            "stored_count_after_each_phase": counts,
            "tls_connections_opened": len(fake.connections),
            "goals": {"counted": [args.clicks, 0, 0], "429s": 0, "over_3s": 0},
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
