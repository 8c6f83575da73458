"""`.env` in the working directory: read by the commands that need secrets, never over the real
environment, its values never printed."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.runtime.envfile import load_env_file, parse_env_file

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = (ROOT / "config.example.toml").read_text()
APP_ID = 1234567890123456789


def test_the_common_dotenv_forms_are_read():
    text = "\n".join(
        [
            "# a comment",
            "",
            "PLAIN=abc.def-ghi",
            "SPACED = value with spaces  # and a comment",
            "export EXPORTED=1",
            "SINGLE='lit # not a comment \\n'",
            'DOUBLE="a \\"b\\" c\\nd"',
            "EMPTY=",
            "HASH=a#b",
            "PLAIN=later wins",
        ]
    )
    parsed = parse_env_file(text)
    assert parsed.values == {
        "PLAIN": "later wins",
        "SPACED": "value with spaces",
        "EXPORTED": "1",
        "SINGLE": "lit # not a comment \\n",
        "DOUBLE": 'a "b" c\nd',
        "EMPTY": "",
        "HASH": "a#b",
    }
    assert parsed.bad_lines == ()


def test_lines_that_are_not_name_value_are_named_by_number_only():
    parsed = parse_env_file("GOOD=1\nsecret-token-without-a-name\n1BAD=x\nQ='open\nA='x' y\n")
    assert parsed.values == {"GOOD": "1"}
    assert parsed.bad_lines == (2, 3, 4, 5)


def test_the_environment_wins_over_the_file(tmp_path):
    (tmp_path / "secrets.env").write_text("A=from-file\nB=from-file\nC=\n")
    environ = {"ONAIR_ENV_FILE": str(tmp_path / "secrets.env"), "A": "real", "C": "real"}
    loaded = load_env_file(environ)
    assert environ["A"] == "real"
    assert environ["B"] == "from-file"
    assert environ["C"] == "real"
    assert loaded.names == ("B",)
    assert loaded.warnings() == []


def test_no_dotenv_reads_nothing_and_a_named_missing_file_is_an_error(tmp_path):
    environ: dict[str, str] = {}
    cwd = os.getcwd()
    os.chdir(tmp_path)  # no .env here: it is optional
    try:
        loaded = load_env_file(environ)
    finally:
        os.chdir(cwd)
    assert loaded.names == ()
    assert loaded.error() is None
    assert environ == {}
    missing = str(tmp_path / "missing.env")
    environ = {"ONAIR_ENV_FILE": missing}
    loaded = load_env_file(environ)
    assert loaded.names == ()
    assert loaded.error() == (
        f"ONAIR_ENV_FILE names {missing}, which does not exist (fix the path; unset "
        'ONAIR_ENV_FILE to read .env in the working directory, or set it to "" to read none)'
    )
    assert environ == {"ONAIR_ENV_FILE": missing}
    (tmp_path / "off.env").write_text("A=1\n")
    environ = {"ONAIR_ENV_FILE": ""}
    assert load_env_file(environ).names == ()
    assert environ == {"ONAIR_ENV_FILE": ""}


def test_an_unreadable_file_is_one_warning_without_its_content(tmp_path):
    (tmp_path / "bad.env").write_bytes(b"TOKEN=\xff\xfesecret\n")
    environ = {"ONAIR_ENV_FILE": str(tmp_path / "bad.env")}
    loaded = load_env_file(environ)
    assert "TOKEN" not in environ
    (warning,) = loaded.warnings()
    assert "not UTF-8" in warning
    assert "secret" not in warning


def _onair(cwd: Path, *args: str, env: dict[str, str] | None = None):
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ONAIR_")}
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={**clean, "PYTHONPATH": str(ROOT), **(env or {})},
    )


@pytest.mark.e2e
def test_invite_reads_dotenv_in_the_working_directory_and_the_environment_wins(tmp_path):
    other = 2234567890123456789
    (tmp_path / ".env").write_text(f"# OnAir\nONAIR_APPLICATION_ID={APP_ID}\nnot a line\n")
    result = _onair(tmp_path, "invite")
    assert result.returncode == 0, result.stderr
    assert f"client_id={APP_ID}&" in result.stdout
    assert result.stderr.strip() == "onair: .env line 3: expected NAME=value; ignored"
    result = _onair(tmp_path, "invite", env={"ONAIR_APPLICATION_ID": str(other)})
    assert f"client_id={other}&" in result.stdout
    result = _onair(tmp_path, "invite", env={"ONAIR_ENV_FILE": ""})
    assert result.returncode == 64  # no application id at all: .env was not read


@pytest.mark.e2e
def test_run_takes_its_secrets_from_dotenv_without_printing_them(tmp_path):
    (tmp_path / "config.toml").write_text(EXAMPLE)
    first = base64.b64encode(str(APP_ID).encode()).decode().rstrip("=")
    (tmp_path / ".env").write_text(
        f"ONAIR_DISCORD_TOKEN={first}.x.token-secret-part\n"
        "ONAIR_KEY_MAIN='station-key-secret'\n"
        "ONAIR_SECRET_KEY=fernet-secret-but-not-valid\n"
    )
    result = _onair(tmp_path, "run", "--config", "config.toml")
    # the token and the station key were found (no complaint about them), and the Fernet key
    # from .env was checked: the one line is about it, with none of the values
    assert result.returncode == 78
    lines = result.stderr.strip().splitlines()
    lines = [line for line in lines if "config.example.toml's example id" not in line]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("onair: ONAIR_SECRET_KEY is not a valid Fernet key")
    for value in ("token-secret-part", "station-key-secret", "fernet-secret-but-not-valid"):
        assert value not in result.stderr + result.stdout


def test_a_byte_order_mark_and_a_nul_byte_are_handled(tmp_path):
    # Notepad saves UTF-8 with a byte-order mark: the first name is still read. A NUL byte can
    # be in no environment variable: its line is ignored (named), not a crash.
    path = tmp_path / "my.env"
    path.write_bytes(b"\xef\xbb\xbfONAIR_DISCORD_TOKEN=abc\nONAIR_OTHER=a\x00b\nONAIR_THIRD=c\n")
    environ = {"ONAIR_ENV_FILE": str(path)}
    loaded = load_env_file(environ)
    assert environ["ONAIR_DISCORD_TOKEN"] == "abc"
    assert "ONAIR_OTHER" not in environ
    assert environ["ONAIR_THIRD"] == "c"
    assert loaded.bad_lines == (2,)


@pytest.mark.e2e
def test_a_named_env_file_that_does_not_exist_stops_every_secret_reading_command(tmp_path):
    (tmp_path / "config.toml").write_text(EXAMPLE)
    env = {"ONAIR_ENV_FILE": str(tmp_path / "typo.env"), "ONAIR_APPLICATION_ID": str(APP_ID)}
    for command in (["invite"], ["run", "--config", "config.toml"]):
        result = _onair(tmp_path, *command, env=env)
        assert result.returncode == 78, result.stderr
        assert result.stdout == ""
        assert result.stderr.strip().splitlines() == [
            f"onair: ONAIR_ENV_FILE names {tmp_path / 'typo.env'}, which does not exist (fix the "
            'path; unset ONAIR_ENV_FILE to read .env in the working directory, or set it to "" '
            "to read none)"
        ]


@pytest.mark.e2e
def test_the_placeholder_token_of_env_example_is_named_by_invite_and_run(tmp_path):
    example = (ROOT / ".env.example").read_text()
    placeholder = next(
        line.split("=", 1)[1]
        for line in example.splitlines()
        if line.startswith("ONAIR_DISCORD_TOKEN=")
    )
    (tmp_path / ".env").write_text(f"ONAIR_DISCORD_TOKEN={placeholder}\n")
    result = _onair(tmp_path, "invite")
    assert result.returncode == 78
    assert result.stderr.strip().splitlines() == [
        "onair: ONAIR_DISCORD_TOKEN is still the placeholder from .env.example: put the bot's "
        "token (Developer Portal -> your application -> Bot -> Reset Token) there, or pass "
        "--client-id"
    ]
    (tmp_path / "config.toml").write_text(EXAMPLE)
    result = _onair(tmp_path, "run", "--config", "config.toml", env={"ONAIR_KEY_MAIN": "k"})
    assert result.returncode == 78
    assert result.stderr.strip().splitlines() == [
        "onair: ONAIR_DISCORD_TOKEN is still the placeholder from .env.example: put the bot "
        "token there (Developer Portal -> your application -> Bot -> Reset Token)"
    ]
    assert placeholder not in result.stderr
