"""``onair run`` as a child process against a test's fake Discord (through
tests/support/run_against_fake.py), its output in a file the test reads."""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from pathlib import Path

from .botenv import STATION_KEY
from .fakediscord import FakeDiscord
from .run_against_fake import CA_ENV, PORT_ENV

ROOT = Path(__file__).resolve().parents[2]


class OnAirChild:
    """One ``onair run --config CONFIG`` at a time; ``output()`` is what it wrote (both
    streams)."""

    def __init__(self, tmp_path: Path, fake: FakeDiscord, config: Path, name: str = "run") -> None:
        ca = tmp_path / "fake-ca.pem"
        fake.ca.cert_pem.write_to_path(str(ca))
        self.config = config
        self.env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("ONAIR_DATABASE_URL", "PYTHONASYNCIODEBUG")
        }
        self.env.update(
            {
                "ONAIR_TEST_STATION_KEY": STATION_KEY,
                "ONAIR_DISCORD_TOKEN": fake.expected_token,
                CA_ENV: str(ca),
                PORT_ENV: str(fake.port),
                "PYTHONUNBUFFERED": "1",
            }
        )
        self.log = tmp_path / f"{name}.log"
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        with self.log.open("wb") as out:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "tests.support.run_against_fake",
                "run",
                "--config",
                str(self.config),
                cwd=ROOT,
                env=self.env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=out,
            )

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    async def wait_output(self, text: str | re.Pattern[str], within: float = 60.0) -> None:
        """Until the child has written ``text`` (or a match of the pattern; fail with its output
        if it exits first)."""
        deadline = time.monotonic() + within

        def written() -> bool:
            if isinstance(text, str):
                return text in self.output()
            return text.search(self.output()) is not None

        while not written():
            assert self.process is not None
            if self.process.returncode is not None:
                raise AssertionError(f"exited {self.process.returncode} first:\n{self.output()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not written within {within}s:\n{self.output()}")
            await asyncio.sleep(0.02)

    async def exit_code(self, within: float = 30.0) -> int:
        assert self.process is not None
        return await asyncio.wait_for(self.process.wait(), timeout=within)

    async def signal(self, signum: int, within: float = 30.0) -> tuple[int, float]:
        """Send ``signum``; the exit code and the seconds it took to exit."""
        assert self.process is not None
        started = time.monotonic()
        self.process.send_signal(signum)
        code = await self.exit_code(within)
        return code, time.monotonic() - started

    async def kill_quietly(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
            await self.process.wait()
