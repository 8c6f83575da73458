"""SSRF guard: hostile station URLs, addresses and redirects are refused with a clear message."""

from __future__ import annotations

import socket

import aiohttp
import pytest
from yarl import URL

from bot.guard.netguard import GuardedResolver, HostPolicy, UrlRefused, check_target, check_url
from bot.station import StationClient, StationRefused, StationResponseError

from .support.stations import KEY

POLICY = HostPolicy()  # the defaults: *.radioboss.fm, https only, no private addresses

HOSTILE = [
    ("http://c5.radioboss.fm", "https"),
    ("ftp://c5.radioboss.fm", "https"),
    ("file:///etc/passwd", "https"),
    ("gopher://c5.radioboss.fm", "https"),
    ("https://user:pass@c5.radioboss.fm", "user name or password"),
    ("https://c5.radioboss.fm@evil.example", "user name or password"),
    ("https://evil.example", "only contacts"),
    ("https://radioboss.fm.evil.example", "only contacts"),
    ("https://c5.radioboss.fm.evil.example", "only contacts"),
    ("https://127.0.0.1", "loopback"),
    ("https://[::1]", "loopback"),
    ("https://10.0.0.5", "private"),
    ("https://192.168.1.1", "private"),
    ("https://172.16.3.4", "private"),
    ("https://169.254.169.254", "link-local"),
    ("https://224.0.0.1", "multicast"),
    ("https://0.0.0.0", "address"),
    ("https://[::ffff:127.0.0.1]", "loopback"),
    ("https://c5.radioboss.fm/?key=x", "query"),
    ("not a url", "https"),
    ("https://localhost", "only contacts"),
]


@pytest.mark.parametrize(("url", "words"), HOSTILE)
def test_hostile_urls_are_refused(url, words):
    with pytest.raises(UrlRefused) as caught:
        check_url(url, POLICY)
    assert words in caught.value.message


def test_good_url_is_normalised_and_dev_override_is_off_by_default():
    assert check_url("https://C5.radioboss.fm/", POLICY) == "https://c5.radioboss.fm"
    assert HostPolicy().allow_private is False
    assert (
        check_url("http://127.0.0.1:8080", HostPolicy(allow_private=True))
        == "http://127.0.0.1:8080"
    )


class StaticResolver(aiohttp.abc.AbstractResolver):
    def __init__(self, address: str) -> None:
        self.address = address

    async def resolve(self, host, port=0, family=socket.AF_INET):
        return [
            {
                "hostname": host,
                "host": self.address,
                "port": port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self):
        return None


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "100.64.0.1"])
async def test_dns_to_internal_address_is_refused_at_connect_time(address):
    resolver = GuardedResolver(POLICY, inner=StaticResolver(address))
    with pytest.raises(OSError, match="OnAir does not contact"):
        await resolver.resolve("c5.radioboss.fm", 443)
    connector = aiohttp.TCPConnector(resolver=resolver)
    async with aiohttp.ClientSession(connector=connector) as session:
        client = StationClient("https://c5.radioboss.fm", 1, KEY, session=session)
        with pytest.raises(StationRefused):  # a refusal, not retried as if it were an outage
            await client.info()


async def test_redirect_to_internal_address_is_refused(simulator, session):
    base = simulator.base_url.replace("127.0.0.1", "localhost")
    policy = HostPolicy(
        allowed_hosts=("localhost",), https_only=False, allowed_ports=(URL(base).port or 0,)
    )
    guard = lambda url: check_target(url, policy)  # noqa: E731
    client = StationClient(base, 1, KEY, session=session, redirect_guard=guard)
    assert (await client.info()).name  # no redirect: fine
    for target in (
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/",
        "http://evil.example/",
    ):
        simulator.inject("redirect", body=target, times=1)
        with pytest.raises(StationResponseError, match="redirected"):
            await client.info(max_age=0)
    simulator.inject("redirect", body=f"{base}/api/info/1?key={KEY}", times=1)
    assert (await client.info(max_age=0)).name  # an allowed redirect is followed


def test_check_target_on_redirect_urls():
    with pytest.raises(UrlRefused):
        check_target(URL("https://127.0.0.1/x?key=1"), POLICY)
    check_target(URL("https://c7.radioboss.fm/api/info/1?key=1"), POLICY)
