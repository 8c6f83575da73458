"""Run the real ``onair run`` in a child process against a test's fake Discord.

The test passes the fake's CA certificate (a PEM file) and port in the environment; this makes
the connector ``FakeDiscord.connector()`` makes in-process (trust that CA, resolve Discord's
hosts to the fake, refuse every other name) and hands it to the unchanged ``bot.cli.main``.
Usage: ``python -m tests.support.run_against_fake run --config PATH``.
"""

from __future__ import annotations

import os
import ssl
import sys

import aiohttp

from bot.cli import main
from tests.support.fakediscord import FakeResolver

CA_ENV = "ONAIR_FAKE_DISCORD_CA"
PORT_ENV = "ONAIR_FAKE_DISCORD_PORT"


def connector() -> aiohttp.TCPConnector:
    context = ssl.create_default_context(cafile=os.environ[CA_ENV])
    return aiohttp.TCPConnector(
        resolver=FakeResolver(int(os.environ[PORT_ENV])), ssl=context, limit=0
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], discord_connector=connector))
