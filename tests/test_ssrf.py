"""SSRF rules beyond the basics (issue 8): embedded IPv4 in IPv6, site-local, ports, punycode,
paths, config-file redirects and IP literals, poll-time re-checks, and redirect hops sharing
one per-try timeout."""

from __future__ import annotations

import logging

import aiohttp
import pytest
from aiohttp import web
from yarl import URL

from bot import errors
from bot.catalog.registry import StationRegistry
from bot.config import parse_settings
from bot.guard.netguard import HostPolicy, UrlRefused, address_refused, check_target, check_url
from bot.simulator import StationSimulator
from bot.station import Problem, RetryPolicy, StationClient, StationRefused, StationUnavailable
from bot.storage import GuildStation

from .support.stations import KEY

POLICY = HostPolicy()


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("2002:7f00:1::1", "loopback"),  # 6to4 around 127.0.0.1
        ("2002:0a00:0001::1", "private"),  # 6to4 around 10.0.0.1
        ("2002:a9fe:a9fe::1", "link-local"),  # 6to4 around the metadata address
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
        ("::ffff:10.0.0.1", "private"),  # IPv4-mapped
        ("::10.0.0.1", "address"),  # IPv4-compatible
        ("64:ff9b::a00:1", "address"),  # NAT64 around 10.0.0.1
        ("64:ff9b::7f00:1", "address"),
        ("64:ff9b:1::a00:1", "address"),  # local-use NAT64
        ("fec0::1", "site-local"),
        ("fec0:1234::5", "site-local"),
    ],
)
def test_tunnelled_and_site_local_ipv6_are_refused(address, words):
    why = address_refused(address)
    assert why is not None
    assert words in why
    with pytest.raises(UrlRefused):
        check_url(f"https://[{address}]", POLICY)


def test_public_addresses_still_pass():
    for address in ("8.8.8.8", "2606:4700::1111", "2002:0808:0808::1", "::ffff:8.8.8.8"):
        assert address_refused(address) is None, address


def test_ports_are_443_and_80_only_unless_the_owner_allows_more():
    assert check_url("https://c5.radioboss.fm:443", POLICY) == "https://c5.radioboss.fm:443"
    for url in ("https://c5.radioboss.fm:8443", "https://c5.radioboss.fm:22"):
        with pytest.raises(UrlRefused, match="port"):
            check_url(url, POLICY)
    with pytest.raises(UrlRefused, match="port"):
        check_target(URL("https://c5.radioboss.fm:6379/x"), POLICY)  # a redirect target too
    http = HostPolicy(https_only=False)
    check_url("http://c5.radioboss.fm", http)
    check_url("http://c5.radioboss.fm:80", http)
    with pytest.raises(UrlRefused, match="port"):
        check_url("http://c5.radioboss.fm:8080", http)
    more = HostPolicy(allowed_ports=(443, 8443))
    assert check_url("https://c5.radioboss.fm:8443", more) == "https://c5.radioboss.fm:8443"


def test_allowed_ports_setting_is_read_from_the_config():
    settings = parse_settings("[bot]\nallowed_station_ports = [443, 8443]\n", {})
    assert settings.allowed_station_ports == (443, 8443)
    with pytest.raises(Exception, match="allowed_station_ports"):
        parse_settings("[bot]\nallowed_station_ports = [70000]\n", {})


@pytest.mark.parametrize(
    "url",
    ["https://xn--abc-.radioboss.fm", "https://xn--zz.radioboss.fm", "https://xn--.radioboss.fm"],
)
def test_malformed_punycode_is_a_polite_refusal(url):
    with pytest.raises(UrlRefused) as caught:
        check_url(url, POLICY)
    assert "server name" in caught.value.message
    with pytest.raises(UrlRefused):
        check_target(URL(url + "/api/info/1"), POLICY)


@pytest.mark.parametrize(
    "url",
    [
        "https://c5.radioboss.fm/a%3Fb",
        "https://c5.radioboss.fm/x/%23y",
        "https://c5.radioboss.fm/%2F%2Fevil",
        "https://c5.radioboss.fm/api",
    ],
)
def test_a_base_url_is_a_server_without_a_path(url):
    with pytest.raises(UrlRefused, match="server address only"):
        check_url(url, POLICY)
    assert check_url("https://c5.radioboss.fm/", POLICY) == "https://c5.radioboss.fm"


@pytest.fixture
async def second_sim():
    """A second simulator on another loopback address (an 'internal' server)."""
    sim = StationSimulator()
    sim.add_station(1, key=KEY, seed=4)
    await sim.start(host="127.0.0.2")
    yield sim
    await sim.stop()


def _settings(sim: StationSimulator, extra: str = ""):
    return parse_settings(
        f"[bot]\n{extra}\n[[stations]]\nid='main'\nname='Main'\n"
        f"base_url='{sim.base_url}'\nstation_id=1\nkey_env='K'\n",
        {"K": KEY},
    )


async def test_config_station_redirect_to_an_ip_literal_is_refused(simulator, second_sim, session):
    registry = StationRegistry(_settings(simulator), session)
    client = registry.client(registry.station("main"))
    assert (await client.info(max_age=0)).name  # the owner's own host: trusted
    simulator.inject("redirect", body=f"{second_sim.base_url}/api/info/1?key={KEY}", times=1)
    with pytest.raises(StationRefused, match="redirected"):
        await client.info(max_age=0)
    assert second_sim.counters["total"] == 0  # never contacted


async def test_stored_guild_station_is_rechecked_at_every_poll(simulator, session, caplog):
    caplog.set_level(logging.INFO)
    registry = StationRegistry(_settings(simulator), session)  # default policy: *.radioboss.fm
    # Stored under an earlier, looser policy; the owner has tightened it since.
    stored = GuildStation(7, "old", "Old", simulator.base_url, 1, None)
    station = registry.add_guild_station(stored, KEY)
    before = simulator.counters["total"]
    with pytest.raises(StationRefused) as caught:
        await registry.client(station).info()
    assert simulator.counters["total"] == before  # no request sent
    assert caught.value.problem is Problem.NO_LONGER_CONTACTED
    assert "OnAir no longer contacts" in errors.station_detail(caught.value)
    assert any("refused" in r.getMessage() for r in caplog.records)
    assert KEY not in caplog.text
    assert KEY not in caught.value.message


async def test_redirect_hops_share_one_per_try_timeout(simulator, session):
    # Each request takes >= 0.3 s; a try may take 0.5 s. Endless redirects info -> info: with a
    # fresh timeout per hop, four hops (1.2 s) would finish as "redirected too many times".
    simulator.latency = 0.3
    simulator.inject("redirect", endpoint="info", body=f"{simulator.base_url}/api/info/1?key={KEY}")
    policy = HostPolicy(allow_private=True)
    tries = 2
    client = StationClient(
        simulator.base_url,
        1,
        KEY,
        session=session,
        timeout=aiohttp.ClientTimeout(total=0.5),
        retry=RetryPolicy(tries=tries, base_delay=0.01, budget=10.0),
        redirect_guard=lambda url: check_target(url, policy),
    )
    with pytest.raises(StationUnavailable, match="in time"):
        await client.info()
    # At most two requests fit in one 0.5 s try (the second one is cut off).
    assert simulator.counters["info"] <= 2 * tries


@pytest.fixture
async def raw_redirector():
    """A server answering every request with a 302 to whatever Location the test sets."""
    location: list[str] = ["/"]

    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": location[0]})

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield f"http://127.0.0.1:{runner.addresses[0][1]}", location
    await runner.cleanup()


@pytest.mark.parametrize(
    "target", ["https://xn--abc-.radioboss.fm/x", "http://[::1/x", "http://a:b:c/", "http://:80"]
)
async def test_a_malformed_redirect_is_a_refusal(raw_redirector, session, target):
    base, location = raw_redirector
    location[0] = target
    policy = HostPolicy(allow_private=True)
    client = StationClient(
        base, 1, KEY, session=session, redirect_guard=lambda url: check_target(url, policy)
    )
    with pytest.raises(StationRefused):
        await client.info()
