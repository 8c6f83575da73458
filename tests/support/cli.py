"""Running ``onair`` as a child process: its command line, the repository root, and helpers for
``onair check`` against an ``onair simulate`` child (the ``sim_url`` fixture)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

KEY = "cli-test-key-987654"
# Shaped as a bot token is (an id in base64, a timestamp part, a secret part); Discord knows none.
SHAPED_TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.GfAkEd.not-the-secret-part-of-any-bot-token"
ONAIR = [sys.executable, "-m", "bot.cli"]
ROOT = Path(__file__).resolve().parents[2]


def admin(base: str, method: str, path: str, body: dict[str, Any] | None = None) -> None:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(
        base + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=5) as response:
        assert response.status == 200


def check(
    base: str, *extra: str, key: str | None = KEY, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    # No song search unless a test asks for one (Apple's is the default: never from tests).
    links = () if "--lookup-url" in extra else ("--lookup-url", "off")
    args = [*ONAIR, "check", "--base-url", base, "--station", "1", *links, *extra]
    if key is not None:
        args += ["--key", key]
    return subprocess.run(
        args,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
