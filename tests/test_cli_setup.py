"""The first hour at the command line, as subprocesses: --version, invite, argument checks on the
base URL, the key from a prompt, `watch` giving up on a wrong key, and config problems reported
all at once."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import discord
import pytest

from bot.runtime.invite import PERMISSIONS, permissions
from bot.simulator import StationSimulator

from .support.cli import SHAPED_TOKEN

pytestmark = pytest.mark.e2e  # every test here runs `onair` as a child process

ROOT = Path(__file__).resolve().parent.parent
ONAIR = [sys.executable, "-m", "bot.cli"]
KEY = "prompt-key-SECRET-314"
APP_ID = 1234567890123456789


def onair(*args: str, env: dict[str, str] | None = None, stdin: str | None = None):
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith("ONAIR_") or k == "ONAIR_ENV_FILE"
    }
    return subprocess.run(
        [*ONAIR, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**clean, **(env or {})},
        input=stdin,
    )


def test_version_comes_from_the_package_metadata():
    result = onair("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"onair {metadata.version('onair-bot')}"


def test_invite_from_client_id_env_or_token_without_printing_the_token():
    # Two links: the server install (the bot with its permissions) and the user install
    # (integration type 1: commands only, no bot, no permissions).
    expected = (
        "Add OnAir to a server: "
        f"https://discord.com/oauth2/authorize?client_id={APP_ID}"
        f"&scope=bot+applications.commands&permissions={permissions().value}\n"
        "Install it on your own account (/nowplaying, /recent and /listen in any chat): "
        f"https://discord.com/oauth2/authorize?client_id={APP_ID}"
        "&integration_type=1&scope=applications.commands\n"
        "  (Discord offers it only when User Install is ticked: Developer Portal -> your "
        "application -> Installation -> Installation Contexts; `onair sync` says when it is not.)"
    )
    assert onair("invite", "--client-id", str(APP_ID)).stdout.strip() == expected
    assert onair("invite", env={"ONAIR_APPLICATION_ID": str(APP_ID)}).stdout.strip() == expected
    first = base64.b64encode(str(APP_ID).encode()).decode().rstrip("=")
    token = f"{first}.GhIjKl.secret-part-of-the-token"
    result = onair("invite", env={"ONAIR_DISCORD_TOKEN": token})
    assert result.returncode == 0
    assert result.stdout.strip() == expected
    assert "secret-part" not in result.stdout + result.stderr
    for unusable in ("not-base64!.x.y", "bad-token", "..."):
        refused = onair("invite", env={"ONAIR_DISCORD_TOKEN": unusable})
        assert refused.returncode == 78
        line = refused.stderr.strip()
        assert line.startswith("onair: ONAIR_DISCORD_TOKEN cannot be a bot token ("), line
        assert "--client-id" in line
        assert "set ONAIR_DISCORD_TOKEN" not in line  # it is set: the line says what is wrong
        assert unusable not in line
    unset = onair("invite", env={"ONAIR_DISCORD_TOKEN": ""})
    assert unset.returncode == 64
    assert "--client-id" in unset.stderr


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("https://c5.radioboss.fm/api/info/123", None),
        ("https://c5.radioboss.fm/?key=QUERY-SECRET", "QUERY-SECRET"),
        ("https://c5.radioboss.fm?key=QUERY-SECRET", "QUERY-SECRET"),
        ("https://admin:PASS-SECRET@c5.radioboss.fm", "PASS-SECRET"),
    ],
)
def test_base_url_with_path_query_or_credentials_is_refused(url, secret):
    result = onair("check", "--base-url", url, "--station", "1")
    assert result.returncode == 64
    assert "give the server only, like https://c5.radioboss.fm" in result.stderr
    if secret:
        assert secret not in result.stderr
        assert "admin" not in result.stderr


def test_check_against_a_refused_port_is_one_line_without_session_noise():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = onair("check", "--base-url", f"http://127.0.0.1:{port}", "--station", "1")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Unclosed" not in result.stderr
    assert "Traceback" not in result.stderr


async def _onair_async(*args: str, stdin: bytes | None = None, within: float = 60):
    clean = {
        k: v for k, v in os.environ.items() if not k.startswith("ONAIR_") or k == "ONAIR_ENV_FILE"
    }
    proc = await asyncio.create_subprocess_exec(
        *ONAIR,
        *args,
        cwd=ROOT,
        env=clean,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=within)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return proc.returncode, out.decode(), err.decode()


async def test_key_from_stdin_with_dash_and_watch_gives_up_on_a_wrong_key():
    sim = StationSimulator()
    sim.add_station(1, key=KEY, seed=2)
    sim.add_station(2, key=KEY, seed=3)
    await sim.start()
    try:
        base = ["--base-url", sim.base_url]
        code, out, err = await _onair_async(
            "check", *base, "--station", "1", "--key", "-", stdin=f"{KEY}\n".encode()
        )
        assert code == 0, err
        assert KEY not in out + err
        code, _, err = await _onair_async(
            "check", *base, "--station", "1", "--key", "-", stdin=b"wrong\n"
        )
        assert code == 2
        # watch: a wrong key and an unknown station end it (exit 2) instead of retrying forever
        code, _, err = await _onair_async(
            "watch", *base, "--station", "1", "--key", "-", stdin=b"wrong\n", within=30
        )
        assert code == 2
        assert err.startswith("onair watch:")
        assert "wrong" not in err
        code, _, err = await _onair_async(
            "watch", *base, "--station", "99", "--key", "-", stdin=f"{KEY}\n".encode(), within=30
        )
        assert code == 2
        assert len(err.strip().splitlines()) == 1
    finally:
        await sim.stop()


def _run_config(tmp_path: Path, text: str, env: dict[str, str]):
    path = tmp_path / "config.toml"
    path.write_text(text)
    return onair("run", "--config", str(path), env={"ONAIR_DISCORD_TOKEN": SHAPED_TOKEN, **env})


@pytest.mark.parametrize("scheme", ["postgress", "mysql", "sqlite"])
def test_misspelt_database_url_scheme_is_a_config_error(tmp_path, scheme):
    url = f"{scheme}://onair:DB-PASSWORD@db.internal/onair"
    result = _run_config(tmp_path, "", {"ONAIR_DATABASE_URL": url})
    assert result.returncode == 78
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "ONAIR_DATABASE_URL" in lines[0]
    assert f"'{scheme}://'" in lines[0]
    assert "DB-PASSWORD" not in result.stderr
    if scheme == "postgress":
        assert "did you mean 'postgresql://'" in lines[0] or "'postgres://'" in lines[0]
    in_file = _run_config(tmp_path, f'[database]\nurl = "{url}"\n', {})
    assert in_file.returncode == 78
    assert "[database] url" in in_file.stderr


def test_config_problems_are_all_reported_at_once_where_toml_puts_them(tmp_path):
    text = "\n".join(
        [
            "[bot]",
            "log_levl = 'INFO'",
            "[announcer]",
            "min_interval = 'fast'",
            "[[stations]]",
            "id = 'main'",
            "name = 'Main'",
            "base_url = 'https://c5.radioboss.fm'",
            "station_id = 1",
            "key_env = 'ONAIR_UNSET_KEY_FOR_TEST'",
            "[[stations]]",
            "id = 'two'",
            "name = 'Two'",
            "base_url = 'https://c5.radioboss.fm/api'",
            "station_id = 2",
        ]
    )
    result = _run_config(tmp_path, text, {})
    assert result.returncode == 78
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 4, lines
    assert all(line.startswith(f"onair: {tmp_path / 'config.toml'}: ") for line in lines)
    joined = "\n".join(lines)
    assert "[bot] unknown key 'log_levl'; did you mean 'log_level'?" in joined
    assert "[announcer] bad value for 'min_interval'" in joined
    assert "[[stations]] #2 bad value for 'base_url': give the server only" in joined
    assert "[[stations]] #1 key_env: $ONAIR_UNSET_KEY_FOR_TEST is not set" in joined


def test_the_setup_page_shows_the_invite_permissions():
    # The manual's "Set up on Discord" page (docs/setup.md) lists what `onair invite` asks for.
    page = (ROOT / "docs" / "setup.md").read_text(encoding="utf-8")
    value = permissions().value
    assert f"permissions={value}&" in page or f"permissions={value}`" in page
    assert f"The permission integer {value} is computed" in page
    for flag in PERMISSIONS:
        bit = getattr(discord.Permissions, flag).flag
        assert f"| {bit} |" in page, flag
