"""Ctrl+C (SIGINT) at each stage of ``onair run``'s start-up: a real child process against the
fake Discord, interrupted while a stage is held open (the login request, the command sync, the
gateway's READY), so the stage is known, not guessed with a sleep. It stops with one line and no
traceback, before the held stage goes on; the seconds it took are printed."""

from __future__ import annotations

import asyncio
import re
import signal
from pathlib import Path

import pytest

from .support.botenv import config_text, fake_discord_fixture
from .support.fakediscord import FakeDiscord, Recorded
from .support.onair_child import OnAirChild

pytestmark = pytest.mark.e2e

fake = fake_discord_fixture()

# What OnAir writes when a signal stops it before it is ready, and once it is.
STOPPED_STARTING = re.compile(
    r"SIGINT received while starting \(([a-z ]+)\); stopped in \d+\.\d\d s"
)


class Held:
    """Holds the fake's answers to requests matching ``pattern`` until released."""

    def __init__(self, method: str, pattern: str) -> None:
        self.method, self.pattern = method, re.compile(pattern)
        self.arrived = asyncio.Event()
        self.released = asyncio.Event()

    async def __call__(self, record: Recorded) -> None:
        if record.method == self.method and self.pattern.search(record.route):
            self.arrived.set()
            await self.released.wait()

    async def reached(self) -> None:
        await self.arrived.wait()


def _config(tmp_path: Path, sim: object, fake: FakeDiscord) -> Path:
    path = tmp_path / "config.toml"
    db = tmp_path / "onair.sqlite3"
    path.write_text(config_text(sim, fake, db_path=str(db)), encoding="utf-8")  # type: ignore[arg-type]
    return path


def _stage_login(fake: FakeDiscord) -> Held:
    held = Held("GET", r"^/users/@me$")
    fake.hold = held
    return held


def _stage_sync(fake: FakeDiscord) -> Held:
    held = Held("PUT", r"^/applications/\d+/commands$")
    fake.hold = held
    return held


class HeldReady(Held):
    """READY held by the fake's gateway; arrived once the bot has identified."""

    def __init__(self, fake: FakeDiscord) -> None:
        super().__init__("", "")
        self.fake = fake
        self.released = fake.ready_held = asyncio.Event()

    async def reached(self) -> None:
        await self.fake.wait_for(lambda: self.fake.identify_count >= 1, within=60)


def _stage_gateway(fake: FakeDiscord) -> Held:
    return HeldReady(fake)


STAGES = {"login": _stage_login, "command sync": _stage_sync, "gateway": _stage_gateway}


def _assert_one_quiet_line(output: str) -> str:
    assert "Traceback" not in output, output
    assert "Task was destroyed" not in output, output
    assert "never retrieved" not in output, output
    assert "Unclosed" not in output, output
    stops = [line for line in output.splitlines() if "stopped" in line or "stopping" in line]
    assert len(stops) == 1, output
    return stops[0]


@pytest.mark.parametrize("stage", list(STAGES))
async def test_sigint_while_a_start_up_stage_is_held_stops_with_one_line(
    stage, live_simulator, fake, tmp_path
):
    held = STAGES[stage](fake)
    child = OnAirChild(tmp_path, fake, _config(tmp_path, live_simulator, fake))
    await child.start()
    try:
        await asyncio.wait_for(held.reached(), timeout=60)
        code, seconds = await child.signal(signal.SIGINT)
    finally:
        await child.kill_quietly()
        held.released.set()
    output = child.output()
    print(f"SIGINT at {stage}: exit {code} after {seconds:.2f} s")
    assert code == 0, output
    line = _assert_one_quiet_line(output)
    match = STOPPED_STARTING.search(line)
    assert match, line
    assert match.group(1) == stage
    # It stopped while the stage was held: nothing after it happened.
    assert "logged in as" not in output
    if stage == "login":
        assert not fake.sent("PUT")


async def test_sigint_at_once_and_after_ready_stop_with_one_line(live_simulator, fake, tmp_path):
    config = _config(tmp_path, live_simulator, fake)
    # While Python imports OnAir (-X importtime writes a line as each module is imported: the
    # signal comes once aiohttp is, wherever the rest is by then).
    early = OnAirChild(tmp_path, fake, config, name="early")
    early.env["PYTHONPROFILEIMPORTTIME"] = "1"
    await early.start()
    try:
        await early.wait_output(re.compile(r"\|\s+aiohttp\n"))
        code, seconds = await early.signal(signal.SIGINT)
    finally:
        await early.kill_quietly()
    output = "\n".join(
        line for line in early.output().splitlines() if not line.startswith("import time:")
    )
    print(f"SIGINT while importing: exit {code} after {seconds:.2f} s")
    # 130: before the event loop's handler. -SIGINT: the import was cut where Python itself ends
    # by the signal after OnAir's line (seen once in 8 runs and once in CI); a shell shows 130
    # either way. The one line and no traceback are what the owner sees, asserted below.
    assert code in (0, 130, -signal.SIGINT), output
    assert "Traceback" not in output, output
    assert "KeyboardInterrupt" not in output, output
    stops = [line for line in output.splitlines() if "stopped" in line]
    assert len(stops) == 1, output
    assert "SIGINT received while starting" in stops[0]

    ready = OnAirChild(tmp_path, fake, config, name="ready")
    await ready.start()
    try:
        await ready.wait_output("logged in as")
        code, seconds = await ready.signal(signal.SIGINT)
    finally:
        await ready.kill_quietly()
    output = ready.output()
    print(f"SIGINT once ready: exit {code} after {seconds:.2f} s")
    assert code == 0, output
    line = _assert_one_quiet_line(output)
    assert re.search(r"SIGINT received: stopped in \d+\.\d\d s", line), line
