"""SIGTERM while Discord has stopped answering: ``onair run`` (a child process) playing in 20
voice guilds, the fake Discord silent as in an outage (connections hang: nothing read, nothing
answered). The stop keeps to its budget however many guilds play, keeps the stored voice
sessions (the next start rejoins them) and the announcement Discord never answered (pending for
the next run), and a second signal ends it at once."""

from __future__ import annotations

import re
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.simulator import StationSimulator
from bot.storage import Delivery, SqliteStorage, VoiceSession

from .support.botenv import STATION_KEY, config_text, subscription_config
from .support.fakediscord import FakeDiscord, Recorded
from .support.fakeicecast import FakeIcecast
from .support.onair_child import OnAirChild
from .support.voice_bot import LISTENER, icecast_fixture, mp3_fixture
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e

__all__ = ["icecast_fixture", "mp3_fixture"]

GUILDS = 20
# discord.py waits up to its voice timeout (10 s) for each guild's goodbye, one after another:
# 200 s for 20 guilds. The budget is 6 s in all (9 s at the very most, bot.runtime.stopping);
# this bound leaves a loaded machine room, and is under docker stop's 10 s grace plus slack.
BOUND = 15.0


@pytest.fixture(name="fake")
async def fake_fixture() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(guild_count=GUILDS) as fake:
        yield fake


async def _playing_everywhere(
    fake: FakeDiscord, sim: StationSimulator, icecast: FakeIcecast, tmp_path: Path, name: str
) -> tuple[OnAirChild, Path]:
    """``onair run`` rejoining a stored session in each guild, until every guild gets audio;
    the first guild's first channel subscribed to the station."""
    db = tmp_path / "onair.sqlite3"
    storage = SqliteStorage(str(db))
    await storage.open()
    try:
        for guild in fake.guilds:
            channel = fake.add_voice_channel(guild, "Radio")
            await fake.set_member_voice(guild, LISTENER, channel)
            await storage.save_voice_session(VoiceSession(guild.id, channel, "main"), now=1.0)
    finally:
        await storage.close()
    config = tmp_path / "config.toml"
    guild = fake.guilds[0]
    extra = f'stream_url = "{icecast.url}"\n' + subscription_config(guild.id, guild.channels[0])
    config.write_text(config_text(sim, fake, extra=extra, db_path=str(db)), encoding="utf-8")
    child = OnAirChild(tmp_path, fake, config, name=name)
    await child.start()
    try:
        await child.wait_output("logged in as")
        await fake.wait_for(
            lambda: all(fake.voice.stats(g.id).audio >= 10 for g in fake.guilds), within=90
        )
    except BaseException:
        await child.kill_quietly()
        raise
    return child, db


async def _kept(db: Path) -> tuple[list[VoiceSession], list[Delivery]]:
    """The stored voice sessions, and the deliveries pending that nobody holds."""
    storage = SqliteStorage(str(db))
    await storage.open()
    try:
        return await storage.voice_sessions(), await storage.due_deliveries(time.time())
    finally:
        await storage.close()


def _posts(fake: FakeDiscord) -> list[Recorded]:
    channel = fake.guilds[0].channels[0]
    return fake.sent("POST", rf"^/channels/{channel}/messages$")


async def test_sigterm_with_discord_silent_stops_within_the_budget_and_keeps_what_it_must(
    fake, icecast, tmp_path
):
    # Short slots: an announcement every few seconds, one of them in flight when Discord is gone
    # (songs still report their library length: an item under 30 s is a jingle, never announced).
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, track_seconds=(3.0, 5.0), library_durations=True)
    async with sim:
        child, db = await _playing_everywhere(fake, sim, icecast, tmp_path, "silent")
        try:
            await fake.wait_for(lambda: any(r.status == 200 for r in _posts(fake)), within=60)
            fake.go_silent()
            # (a request the silent fake has taken in and not answered: status 0)
            await fake.wait_for(lambda: any(r.status == 0 for r in _posts(fake)), within=60)
            code, seconds = await child.signal(signal.SIGTERM, within=120)
        finally:
            await child.kill_quietly()
        output = child.output()
        print(f"SIGTERM, {GUILDS} voice guilds, Discord silent: exit {code} after {seconds:.2f} s")
        assert code == 0, output
        assert seconds < BOUND, output
        assert re.search(r"SIGTERM received: stopped in \d+\.\d\d s", output), output
        assert "Traceback" not in output, output
        stored, pending = await _kept(db)
        assert sorted(s.guild_id for s in stored) == sorted(g.id for g in fake.guilds)
        # The announcement Discord never answered stays pending for the next run (lease given
        # back).
        assert pending, output
        await _next_start_picks_it_all_up(fake, child.config, tmp_path, pending[0], db)


async def _next_start_picks_it_all_up(
    fake: FakeDiscord, config: Path, tmp_path: Path, pending: Delivery, db: Path
) -> None:
    """Discord answers again; the next ``onair run`` rejoins every guild and sends what was
    pending."""
    fake.answer_again()
    connections = fake.voice.connections
    again = OnAirChild(tmp_path, fake, config, name="again")
    await again.start()
    try:
        await again.wait_output("logged in as")
        await fake.wait_for(
            lambda: (
                fake.voice.connections >= connections + GUILDS
                and all(fake.voice.connected(g.id) for g in fake.guilds)
            ),
            within=90,
        )

        async def sent() -> bool:
            storage = SqliteStorage(str(db))
            await storage.open()
            try:
                states = await storage.deliveries(pending.announcement_id)
            finally:
                await storage.close()
            return states.get(pending.subscription_id) == "sent"

        await wait_for(sent, within=60)
    finally:
        await again.kill_quietly()


async def test_a_second_sigterm_while_stopping_exits_at_once(
    live_simulator, fake, icecast, tmp_path
):
    child, db = await _playing_everywhere(fake, live_simulator, icecast, tmp_path, "twice")
    try:
        fake.go_silent()
        assert child.process is not None
        child.process.send_signal(signal.SIGTERM)
        await child.wait_output("The voice handshake is being terminated")  # (discord.py)
        code, seconds = await child.signal(signal.SIGTERM, within=60)
    finally:
        await child.kill_quietly()
    output = child.output()
    print(f"second SIGTERM while stopping: exit {code} after {seconds:.2f} s")
    assert code == 128 + signal.SIGTERM, output
    assert "SIGTERM received again while stopping: exiting at once (exit 143)" in output
    assert "stopped in" not in output, output  # it did not wait for the graceful end
    stored, _ = await _kept(db)
    assert len(stored) == GUILDS


async def test_with_discord_answering_the_stop_still_says_goodbye_in_every_guild(
    live_simulator, fake, icecast, tmp_path
):
    child, db = await _playing_everywhere(fake, live_simulator, icecast, tmp_path, "answering")
    try:
        code, seconds = await child.signal(signal.SIGTERM, within=60)
    finally:
        await child.kill_quietly()
    output = child.output()
    print(f"SIGTERM, {GUILDS} voice guilds, Discord answering: exit {code} after {seconds:.2f} s")
    assert code == 0, output
    assert "did not answer" not in output, output
    # Discord saw the bot leave every channel (the goodbyes went out, all within the budget).
    assert [g.id for g in fake.guilds if fake.bot_voice_state(g) is not None] == []
    stored, _ = await _kept(db)
    assert len(stored) == GUILDS
