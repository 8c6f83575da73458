"""kill -9 during an alert: a real ``onair run`` dies while Discord holds its live-show alert; the
post Discord then creates (its answer lost) is the only one after the restart, whether Discord
still remembers the nonce or not (then OnAir finds its own message in the channel)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.simulator import LIVE_SHOW, TRACKS, ManualClock, Programme, StationSimulator
from bot.storage import AlertSubscription, SqliteStorage

from .support.botenv import STATION_KEY, config_text, fake_discord_fixture
from .support.delivery import BERLIN, Child, Gate, is_post
from .support.fakediscord import FakeDiscord
from .support.stations import serving
from .support.waiting import wait_for
from .test_alerts_bot import alerts_in

pytestmark = pytest.mark.e2e
SLOTS = [(LIVE_SHOW, 3600.0), (TRACKS[0], 3600.0)]

fake = fake_discord_fixture(channels_per_guild=2)


@pytest.fixture
async def live_sim() -> AsyncIterator[StationSimulator]:
    clock = ManualClock()
    simulator = StationSimulator(clock=clock)
    simulator.add_station(
        1, key=STATION_KEY, programme=Programme(SLOTS, epoch=clock() - 1.0), zone=BERLIN
    )
    async with serving(simulator):
        yield simulator


def post_states(db: Path) -> dict[str, str]:
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
        try:
            rows = conn.execute("SELECT post_key, state FROM scheduled_posts").fetchall()
        except sqlite3.OperationalError:
            return {}
    return {str(k): str(v) for k, v in rows}


@pytest.mark.parametrize("nonce_window", [300.0, 0.0], ids=["nonce", "past-nonce-window"])
async def test_kill_9_while_an_alert_is_sent_then_restart_posts_it_once(
    live_sim: StationSimulator, fake: FakeDiscord, tmp_path: Path, nonce_window: float
) -> None:
    db = tmp_path / "onair.sqlite3"
    guild = fake.guilds[0]
    channel = guild.channels[0]
    storage = await SqliteStorage(str(db)).open()
    try:
        await storage.save_alert_subscription(
            AlertSubscription(guild.id, "main", channel, guild.roles[1])
        )
    finally:
        await storage.close()
    child = Child(tmp_path, fake, config_text(live_sim, fake, db_path=str(db)))
    gate = Gate(allow=0)  # Discord holds the alert
    fake.hold = gate
    await child.start()
    try:
        await fake.wait_for(lambda: gate.arrived >= 1, within=60)
        assert child.process is not None
        child.process.kill()
        assert await child.process.wait() == -signal.SIGKILL
    finally:
        await child.kill_quietly()
    # Discord goes on with the post it held: created now, its answer lost with the process.
    gate.open()
    await fake.wait_for(lambda: all(r.status for r in fake.sent("POST") if is_post(r)))
    fake.hold = None
    assert len(alerts_in(fake, channel)) == 1
    assert list((await asyncio.to_thread(post_states, db)).values()) == ["pending"]
    fake.nonce_window = nonce_window
    await child.start()
    try:

        async def sent() -> bool:
            return list((await asyncio.to_thread(post_states, db)).values()) == ["sent"]

        await wait_for(sent, within=60)
        await wait_for(lambda: "logged in as" in child.output(), within=30)  # stop once ready
        code, _ = await child.stop(signal.SIGTERM)
    finally:
        await child.kill_quietly()
    assert code == 0, child.output()
    (alert,) = alerts_in(fake, channel)
    assert alert["embeds"][0]["title"] == f"🔴 LIVE NOW: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"
    if not nonce_window:  # only OnAir's look at the channel kept the repeat from posting
        looks = fake.sent("GET", rf"^/channels/{channel}/messages$")
        assert any("after" in r.query for r in looks)
    output = child.output()
    assert "post(s) left in flight by the last run are pending" in output
    assert "Traceback" not in output
    assert "Task exception was never retrieved" not in output
