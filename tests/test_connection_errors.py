"""Connection failures are named in what people read of a StationUnavailable
(``errors.station_detail``) and in its line for logs (never with the key): DNS, refused
connection, TLS/certificate, timeout."""

from __future__ import annotations

import socket
import ssl
import subprocess
from collections.abc import AsyncIterator

import aiohttp
import pytest
import trustme
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from bot import errors
from bot.station import Problem, RetryPolicy, StationClient, StationUnavailable

from .support.cli import ONAIR, ROOT

KEY = "conn-test-KEY-31337"
FAST = RetryPolicy(tries=2, base_delay=0.01, budget=5.0)


def _closed_port() -> int:
    """A loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RefusingResolver(AbstractResolver):
    """A resolver that knows no names (as DNS answers NXDOMAIN); no network is touched."""

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        raise OSError(socket.EAI_NONAME, "Name or service not known")

    async def close(self) -> None:
        return None


async def _failure(client: StationClient) -> StationUnavailable:
    with pytest.raises(StationUnavailable) as caught:
        await client.info()
    error = caught.value
    chain = [error]
    while chain[-1].__cause__ is not None or chain[-1].__context__ is not None:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)  # type: ignore[arg-type]
    assert all(KEY not in str(e) and KEY not in repr(e) for e in chain)
    return error


async def test_refused_port_is_named(session):
    port = _closed_port()
    client = StationClient(f"http://127.0.0.1:{port}", 1, KEY, session=session, retry=FAST)
    error = await _failure(client)
    assert error.problem is Problem.CONNECTION_REFUSED
    assert "refused the connection" in errors.station_detail(error)
    assert f"127.0.0.1:{port}" in errors.station_detail(error)
    assert f"127.0.0.1:{port}" in error.message


async def test_unknown_name_is_named():
    connector = aiohttp.TCPConnector(resolver=RefusingResolver())
    async with aiohttp.ClientSession(connector=connector) as session:
        client = StationClient("https://radio.nowhere.example", 1, KEY, session=session, retry=FAST)
        error = await _failure(client)
    assert "could not find the server radio.nowhere.example" in errors.station_detail(error)


@pytest.fixture
async def untrusted_tls() -> AsyncIterator[str]:
    ca = trustme.CA()  # a CA the client does not trust
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)

    async def info(request: web.Request) -> web.Response:
        return web.json_response({"station_name": "x"})

    app = web.Application()
    app.router.add_get("/api/info/1", info)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"https://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def test_untrusted_certificate_is_named(untrusted_tls, session):
    client = StationClient(untrusted_tls, 1, KEY, session=session, retry=FAST)
    error = await _failure(client)
    assert "certificate" in errors.station_detail(error)
    assert "127.0.0.1" in errors.station_detail(error)


async def test_timeout_is_named(simulator, session):
    simulator.inject("delay", seconds=5, endpoint="info")
    client = StationClient(
        simulator.base_url,
        1,
        KEY,
        session=session,
        retry=FAST,
        timeout=aiohttp.ClientTimeout(total=0.3),
    )
    error = await _failure(client)
    assert "did not answer in time" in errors.station_detail(error)


@pytest.mark.e2e
def test_onair_check_names_a_refused_connection():
    port = _closed_port()
    done = subprocess.run(
        [*ONAIR, "check", "--base-url", f"http://127.0.0.1:{port}", "--station", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={"ONAIR_STATION_KEY": KEY, "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "refused the connection" in done.stderr
    assert KEY not in done.stderr
