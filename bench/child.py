"""What a benchmark needs to run ``onair run`` in a child process against its fake Discord: the
config file, the fake's CA and the environment, written into a work folder."""

from __future__ import annotations

import os
from typing import IO

from tests.support.botenv import STATION_KEY
from tests.support.fakediscord import FakeDiscord
from tests.support.run_against_fake import CA_ENV, PORT_ENV


def prepare_child(
    fake: FakeDiscord, workdir: str, config: str, extra_env: dict[str, str] | None = None
) -> tuple[str, dict[str, str]]:
    """Write ``config`` and the fake's CA into ``workdir``; the config's path and the child's
    environment (this one's, without a database URL, plus the keys and the fake's address)."""
    config_path = os.path.join(workdir, "onair.toml")
    with open(config_path, "w", encoding="utf-8") as out:
        out.write(config)
    ca = os.path.join(workdir, "fake-ca.pem")
    fake.ca.cert_pem.write_to_path(ca)
    env = {k: v for k, v in os.environ.items() if k != "ONAIR_DATABASE_URL"}
    env.update(
        {
            "ONAIR_TEST_STATION_KEY": STATION_KEY,
            "ONAIR_DISCORD_TOKEN": fake.expected_token,
            CA_ENV: ca,
            PORT_ENV: str(fake.port),
        }
    )
    env.update(extra_env or {})
    return config_path, env


def child_log(workdir: str) -> IO[bytes]:
    """The child's output file (the caller closes it once the child has exited)."""
    return open(os.path.join(workdir, "child.log"), "wb")
