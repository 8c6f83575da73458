"""Run the real ``onair run`` in a child process against a test's fake Discord.

The test passes the fake's CA certificate (a PEM file) and port in the environment; this makes
the connector ``FakeDiscord.connector()`` makes in-process (trust that CA, resolve Discord's
hosts to the fake, refuse every other name) and hands it to the unchanged ``onair`` entry point.
Usage: ``python -m tests.support.run_against_fake run --config PATH``. Nothing heavy is imported
before the entry point is called: a Ctrl+C while OnAir imports is handled as ``onair``'s own.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import aiohttp

CA_ENV = "ONAIR_FAKE_DISCORD_CA"
PORT_ENV = "ONAIR_FAKE_DISCORD_PORT"


def connector() -> aiohttp.TCPConnector:
    import ssl

    import aiohttp

    from tests.support.fakediscord import FakeResolver

    context = ssl.create_default_context(cafile=os.environ[CA_ENV])
    return aiohttp.TCPConnector(
        resolver=FakeResolver(int(os.environ[PORT_ENV])), ssl=context, limit=0
    )


if __name__ == "__main__":
    import signal

    # Ctrl+C as a terminal delivers it: a shell without job control (`cmd &` in a script, CI)
    # starts the suite with SIGINT ignored, and the child inherits that, so a SIGINT sent
    # while OnAir imports was lost and the child ran on (tests/test_interrupt.py hung 30 s).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    from bot.entry import main

    sys.exit(main(sys.argv[1:], discord_connector=connector))
