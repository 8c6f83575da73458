"""`onair run` and `onair sync` against the fake Discord: Discord unreachable (DNS, TLS, refused)
is one line and a retry, a refused token one line and exit 78, the start line names the bot, its
guilds and the invite URL, and `run` syncs the command tree only when it changed."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import socket
import sqlite3
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import discord
import pytest
from aiohttp.abc import AbstractResolver
from discord import voice_client

from bot.run import run_bot, sync_once
from bot.runtime.invite import permissions
from bot.runtime.startup import Backoff

from .support import discord_rules as rules
from .support.botenv import STATION_KEY, config_text
from .support.fakediscord import FakeDiscord, FakeResolver
from .support.onair_child import OnAirChild
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


class Records(logging.Handler):
    """Collects OnAir's, discord.py's and asyncio's log records; sets an event on the start
    line."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.ready = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        if record.getMessage().startswith("logged in as"):
            self.ready.set()

    def lines(self, level: int = logging.INFO) -> list[str]:
        """OnAir's own lines at ``level`` or above."""
        return [
            r.getMessage()
            for r in self.records
            if r.levelno >= level and r.name.startswith("onair")
        ]


@pytest.fixture
def records(monkeypatch: pytest.MonkeyPatch) -> Iterator[Records]:
    handler = Records()
    loggers = [logging.getLogger(name) for name in ("onair", "asyncio", "discord")]
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logging.getLogger("discord").level)
    for logger in loggers:
        logger.addHandler(handler)
    # discord.py warns about missing voice libraries once per process: restore its first state
    # (PyNaCl and davey are installed for voice, so it has nothing to warn about).
    monkeypatch.setattr(discord.VoiceClient, "warn_nacl", not voice_client.has_nacl)
    monkeypatch.setattr(discord.VoiceClient, "warn_dave", not voice_client.has_dave)
    try:
        yield handler
    finally:
        for logger in loggers:
            logger.removeHandler(handler)
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("discord").setLevel(saved[2])


class NoDNS(AbstractResolver):
    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    async def close(self) -> None:
        return None


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _config(tmp_path: Path, sim: Any, fake: FakeDiscord, bot_extra: str = "") -> str:
    path = tmp_path / "config.toml"
    db = tmp_path / "onair.sqlite3"
    path.write_text(config_text(sim, fake, db_path=str(db), bot_extra=bot_extra))
    return str(path)


@pytest.fixture
def bot_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONAIR_TEST_STATION_KEY", STATION_KEY)


async def _run_until_ready(config: str, factory: Any, records: Records) -> int | None:
    """Run the bot until its start line, then stop it as Ctrl+C would (cancel)."""
    task = asyncio.create_task(
        run_bot(config, discord_connector=factory, backoff=Backoff(first=0.01, cap=0.05))
    )
    ready = asyncio.create_task(records.ready.wait())
    try:
        done, _ = await asyncio.wait({task, ready}, timeout=30, return_when="FIRST_COMPLETED")
        if task in done:
            return task.result()
        assert ready in done, "the bot never logged its start line"
        return None
    finally:
        ready.cancel()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_discord_unreachable_is_one_line_each_then_retried_until_ready(
    live_simulator, tmp_path, monkeypatch, records, bot_env
):
    async with FakeDiscord() as fake:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        config = _config(tmp_path, live_simulator, fake)
        untrusted = ssl.create_default_context()  # does not know the fake's CA
        attempts = iter(
            [
                lambda: aiohttp.TCPConnector(resolver=NoDNS()),
                lambda: aiohttp.TCPConnector(resolver=FakeResolver(fake.port), ssl=untrusted),
                lambda: aiohttp.TCPConnector(resolver=FakeResolver(_closed_port())),
            ]
        )

        def factory() -> aiohttp.BaseConnector:
            return next(attempts, fake.connector)()

        assert await _run_until_ready(config, factory, records) is None
    gc.collect()  # an unclosed session of a failed attempt would now complain
    warnings = records.lines(logging.WARNING)
    assert len(warnings) == 3, warnings
    assert "cannot reach Discord: DNS lookup of discord.com failed; retrying in" in warnings[0]
    assert "TLS certificate of discord.com not accepted" in warnings[1]
    assert "refused" in warnings[2]
    assert all("\n" not in line for line in warnings)
    start = [line for line in records.lines() if line.startswith("logged in as")]
    assert len(start) == 1
    assert start[0].startswith("logged in as OnAir")
    assert f"({fake.bot_id}), 1 guild;" in start[0]
    assert f"client_id={fake.app_id}" in start[0]
    assert f"permissions={permissions().value}" in start[0]
    assert "scope=bot+applications.commands" in start[0]
    # one line per retry, whoever logs it: not discord.py's login line, not the FFmpeg line again
    said = [r.getMessage() for r in records.records if r.levelno >= logging.INFO]
    assert "logging in using static token" not in said
    assert sum(line.startswith("voice: FFmpeg from") for line in said) == 1
    text = "\n".join(r.getMessage() for r in records.records)
    assert "Unclosed" not in text
    assert "PyNaCl" not in text
    assert "davey" not in text
    assert not any(r.exc_info for r in records.records if r.levelno >= logging.INFO)


async def test_healthz_answers_503_while_discord_is_unreachable_then_200(
    live_simulator, tmp_path, monkeypatch, records, bot_env
):
    port = _closed_port()  # free now; the bot's metrics server takes it
    async with FakeDiscord() as fake, aiohttp.ClientSession() as session:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        path = tmp_path / "config.toml"
        db = tmp_path / "onair.sqlite3"
        extra = f"\n[metrics]\nport = {port}\n"
        path.write_text(config_text(live_simulator, fake, db_path=str(db), extra=extra))
        reachable = False

        def factory() -> aiohttp.BaseConnector:
            if reachable:
                return fake.connector()
            return aiohttp.TCPConnector(resolver=FakeResolver(_closed_port()))

        async def health() -> int:
            async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                return response.status

        task = asyncio.create_task(
            run_bot(str(path), discord_connector=factory, backoff=Backoff(first=0.01, cap=0.05))
        )
        try:
            await wait_for(lambda: len(records.lines(logging.WARNING)) >= 2 or task.done())
            assert not task.done(), task.result()
            assert await health() == 503  # served, and unhealthy, between two failed attempts
            reachable = True
            await asyncio.wait_for(records.ready.wait(), timeout=30)
            assert await health() == 200
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    assert all("cannot reach Discord" in line for line in records.lines(logging.WARNING))


async def test_refused_token_is_one_line_and_exit_78(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    async with FakeDiscord() as fake:
        # Shaped like a token (the fake's bot id first), but not the one Discord knows.
        wrong = fake.expected_token.replace("fake-secret", "reset-since")
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", wrong)
        config = _config(tmp_path, live_simulator, fake)
        assert await _run_until_ready(config, fake.connector, records) == 78
        assert not fake.sent("PUT")  # never got as far as syncing
    gc.collect()
    errors = records.lines(logging.ERROR)
    assert errors == [
        "Discord refused the bot token in ONAIR_DISCORD_TOKEN: reset it in the Developer Portal "
        "(Developer Portal -> your application -> Bot -> Reset Token) and put the new one there "
        "(exit 78)"
    ]
    stderr = capsys.readouterr().err
    assert "Traceback" not in stderr
    assert "reset-since" not in stderr + "\n".join(errors)
    assert "Unclosed" not in "\n".join(r.getMessage() for r in records.records)


def _puts(fake: FakeDiscord) -> list[str]:
    return [r.route for r in fake.sent("PUT") if r.route.endswith("/commands")]


async def test_sync_registers_once_and_run_syncs_only_a_changed_tree(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    async with FakeDiscord() as fake:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        config = _config(tmp_path, live_simulator, fake)
        assert await sync_once(config, None, connector=fake.connector()) == 0
        assert _puts(fake) == [f"/applications/{fake.app_id}/commands"]
        synced_by_sync = sorted(c["name"] for c in fake.commands)
        assert {"nowplaying", "playlist", "stats", "onair"} <= set(synced_by_sync)
        assert (tmp_path / "onair.sqlite3.commands").is_file()
        assert "Synced" in capsys.readouterr().out

        # run: the tree is the one `sync` registered, so nothing is sent again
        assert await _run_until_ready(config, fake.connector, records) is None
        assert len(_puts(fake)) == 1
        assert "application commands unchanged since the last sync" in records.lines()

        # run with the tree of a full start (announcer loaded too) after losing the state file:
        # it syncs, and the payload is the one `sync` sent
        (tmp_path / "onair.sqlite3.commands").unlink()
        records.ready.clear()
        assert await _run_until_ready(config, fake.connector, records) is None
        assert len(_puts(fake)) == 2
        assert sorted(c["name"] for c in fake.commands) == synced_by_sync

        # a different target (a development guild) is a different tree: synced there at once
        guild = fake.guilds[0].id
        config = _config(tmp_path, live_simulator, fake, bot_extra=f"dev_guild = {guild}")
        records.ready.clear()
        assert await _run_until_ready(config, fake.connector, records) is None
        assert _puts(fake)[-1] == f"/applications/{fake.app_id}/guilds/{guild}/commands"

        # `onair sync --guild ID` always syncs, to that guild
        assert await sync_once(config, guild, connector=fake.connector()) == 0
        assert len(_puts(fake)) == 4


async def test_ticking_user_install_later_syncs_the_three_commands_again(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    async with FakeDiscord() as fake:
        fake.app_install_types = (rules.GUILD_INSTALL,)
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        config = _config(tmp_path, live_simulator, fake)
        assert await sync_once(config, None, connector=fake.connector()) == 0
        assert "User Install is off" in capsys.readouterr().err
        nowplaying = next(c for c in fake.commands if c["name"] == "nowplaying")
        assert nowplaying["integration_types"] == [0]

        # the owner ticks User Install: the next start registers the three for both installs
        fake.app_install_types = (rules.GUILD_INSTALL, rules.USER_INSTALL)
        assert await _run_until_ready(config, fake.connector, records) is None
        assert len(_puts(fake)) == 2
        nowplaying = next(c for c in fake.commands if c["name"] == "nowplaying")
        assert nowplaying["integration_types"] == [0, 1]
        assert nowplaying["contexts"] == [0, 1, 2]


async def test_sync_with_discord_unreachable_is_one_line_and_exit_69(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    async with FakeDiscord() as fake:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        config = _config(tmp_path, live_simulator, fake)
        connector = aiohttp.TCPConnector(resolver=NoDNS())
        assert await sync_once(config, None, connector=connector) == 69
        assert not fake.sent("PUT")
    gc.collect()
    err = capsys.readouterr().err.strip().splitlines()
    problems = [line for line in err if "logging in using static token" not in line]
    assert problems == ["onair: could not sync the commands: DNS lookup of discord.com failed"]
    assert not (tmp_path / "onair.sqlite3.commands").exists()
    assert "Unclosed" not in "\n".join(r.getMessage() for r in records.records)


async def test_a_start_up_failure_that_is_not_the_network_is_one_line_and_exit_70(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    async with FakeDiscord() as fake:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        path = tmp_path / "config.toml"
        corrupt = tmp_path / "onair.sqlite3"
        corrupt.write_bytes(b"not a database, " * 512)
        path.write_text(config_text(live_simulator, fake, db_path=str(corrupt)))
        assert await _run_until_ready(str(path), fake.connector, records) == 70
    gc.collect()
    errors = records.lines(logging.ERROR)
    assert len(errors) == 1
    assert errors[0].startswith("start-up failed: DatabaseError:")
    assert not any(r.exc_info for r in records.records if r.levelno > logging.DEBUG)
    assert "Traceback" not in capsys.readouterr().err
    assert "Unclosed" not in "\n".join(r.getMessage() for r in records.records)


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("missing-directory/onair.sqlite3", "the directory {tmp}/missing-directory does not exist"),
        ("a-file/onair.sqlite3", "the directory {tmp}/a-file does not exist"),
        ("a-directory", "is a directory; name a file in it"),
        ("", "[database] path is empty"),
    ],
)
async def test_an_unusable_database_path_is_named_before_login_and_exit_78(
    where, says, live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    (tmp_path / "a-file").write_text("a file, not a directory")
    (tmp_path / "a-directory").mkdir()
    db = str(tmp_path / where) if where else ""
    async with FakeDiscord() as fake:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        path = tmp_path / "config.toml"
        path.write_text(config_text(live_simulator, fake, db_path=db))
        assert await _run_until_ready(str(path), fake.connector, records) == 78
        assert not fake.sent()  # before login
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("onair: ")
    assert "[database] path" in err[0]
    assert says.format(tmp=tmp_path) in err[0]
    assert "Traceback" not in "\n".join(err)
    assert fake.expected_token not in "\n".join(err)


async def test_a_busy_metrics_port_names_the_setting_and_exits_78(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        async with FakeDiscord() as fake:
            monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
            path = tmp_path / "config.toml"
            extra = f"\n[metrics]\nport = {port}\n"
            path.write_text(
                config_text(live_simulator, fake, db_path=str(tmp_path / "db"), extra=extra)
            )
            assert await _run_until_ready(str(path), fake.connector, records) == 78
            assert not fake.sent()
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        f"onair: cannot serve /metrics and /healthz on 127.0.0.1:{port} (another program "
        "listens there): change [metrics] port (or ONAIR_METRICS_PORT), or 0 to turn them off"
    ]


async def test_a_second_run_on_one_sqlite_file_refuses_and_the_lock_dies_with_kill_9(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    async with FakeDiscord() as fake:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        config = _config(tmp_path, live_simulator, fake)
        first = OnAirChild(tmp_path, fake, Path(config))
        await first.start()
        try:
            await first.wait_output("logged in as")
            logins = len(fake.sent("GET", r"^/users/@me$"))
            assert await _run_until_ready(config, fake.connector, records) == 78
            assert len(fake.sent("GET", r"^/users/@me$")) == logins  # refused before login
            err = capsys.readouterr().err.strip().splitlines()
            assert first.process is not None
            db = tmp_path / "onair.sqlite3"
            assert err == [
                f"onair: another onair run (pid {first.process.pid}) already uses the database "
                f'[database] path = "{db}" (it holds {db}.lock); two processes on one SQLite '
                "file would each post every play: stop the other one, or give this one its own "
                "path (several processes share a PostgreSQL database, [database] url)"
            ]
            first.process.kill()  # kill -9: no clean-up runs, the kernel drops the lock
            assert await first.exit_code() == -9
        finally:
            await first.kill_quietly()
        records.ready.clear()
        assert await _run_until_ready(config, fake.connector, records) is None


async def test_a_database_of_a_newer_onair_is_refused_with_exit_78(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys
):
    db = tmp_path / "onair.sqlite3"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version (version) VALUES (999)")
        conn.commit()
    async with FakeDiscord() as fake:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", fake.expected_token)
        config = _config(tmp_path, live_simulator, fake)
        assert await _run_until_ready(config, fake.connector, records) == 78
    gc.collect()
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("onair:")]
    assert len(err) == 1, err
    assert err[0].startswith(
        "onair: [database] path: the database is at schema 999, newer than this OnAir knows ("
    )
    assert not records.lines(logging.ERROR)
    assert "Unclosed" not in "\n".join(r.getMessage() for r in records.records)


@pytest.mark.parametrize("token", ["...", "bad-token", "Bot a.b.c", "x.y.z"])
async def test_a_token_that_cannot_be_one_is_refused_before_connecting(
    live_simulator, tmp_path, monkeypatch, records, bot_env, capsys, token
):
    """Not retried for ever while Discord is unreachable: one line, exit 78, no connection."""
    attempts: list[int] = []

    def unreachable() -> aiohttp.BaseConnector:
        attempts.append(1)
        return aiohttp.TCPConnector(resolver=NoDNS())

    async with FakeDiscord() as fake:
        monkeypatch.setenv("ONAIR_DISCORD_TOKEN", token)
        config = _config(tmp_path, live_simulator, fake)
        assert await _run_until_ready(config, unreachable, records) == 78
    assert attempts == []
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("onair: ONAIR_DISCORD_TOKEN cannot be a bot token (")
    assert "Reset Token" in lines[0]
    if len(token) > 3:
        assert token not in lines[0]
