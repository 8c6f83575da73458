"""Station text or config Discord would refuse (links without a host or with a user part, an
empty name) is left out or worked around, so OnAir's messages are still accepted; each through
the real discord.py against the strict fake Discord."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from bot.simulator import StationSimulator
from bot.util.links import BUTTON_URL, safe_url

from .support.botenv import channel_subscription, command_reply, fake_discord_fixture, running_bot
from .support.stations import serving

fake = fake_discord_fixture()


@pytest.fixture
async def hostless_sim():
    """A station whose links have no host (``https://:8443/...``): hostile or broken station."""
    sim = StationSimulator()
    sim.add_station(
        1,
        key="station-key-SECRET-42",
        seed=3,
        public_url="https://:8443",
        zone=ZoneInfo("Europe/Berlin"),
    )
    async with serving(sim):
        yield sim


@pytest.mark.e2e
@pytest.mark.parametrize("command", ["nowplaying", "listen", "station", "recent"])
async def test_links_without_a_host_are_left_out_not_sent(hostless_sim, command):
    async with command_reply(hostless_sim, command) as (env, message):
        rejected = [r for r in env.fake.requests if r.status == 400]
        assert rejected == [], [r.response for r in rejected]
        assert message.get("embeds"), message


@pytest.mark.e2e
async def test_announcement_with_hostless_links_is_posted_not_lost(fake, hostless_sim):
    channel = fake.guilds[0].channels[0]
    async with running_bot(hostless_sim, fake=fake, extra_config=channel_subscription(fake)):
        posts = await fake.wait_request("POST", rf"^/channels/{channel}/messages$")
        await fake.wait_for(lambda: posts[0].status != 0)
        assert posts[0].status == 200, posts[0].response


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://c5.radioboss.fm/x", True),
        ("https://:8443/x", False),
        ("https:///x", False),
        ("https://[::1/x", False),
        ("https://a.example/\x00", False),
    ],
)
def test_safe_url_needs_a_host(url, ok):
    assert (safe_url(url, BUTTON_URL) is not None) is ok


@pytest.mark.e2e
async def test_a_station_with_an_empty_name_does_not_break_autocomplete(live_simulator):
    blank = (
        '[[stations]]\nid = "blank"\nname = ""\n'
        f'base_url = "{live_simulator.base_url}"\nstation_id = 2\n'
    )
    async with running_bot(live_simulator, extra_config=blank) as env:
        iid = await env.fake.autocomplete("nowplaying", "station", "")
        answer = await env.fake.response(iid)
        await env.fake.wait_for(lambda: answer.status != 0)
        assert answer.status == 200, answer.response
        choices = answer.json["data"]["choices"]
        assert {"name": "blank", "value": "blank"} in choices


def test_station_links_with_a_user_part_are_left_out() -> None:
    assert safe_url("https://x.example@everyone", BUTTON_URL) is None
    assert safe_url("https://user:pw@c9.radioboss.fm/p/1", BUTTON_URL) is None
    assert safe_url("https://c9.radioboss.fm/p/1?who=@x", BUTTON_URL) is not None


# Issue 27: station links Discord refuses (not RFC 3986 URIs), in every place OnAir sends one ----

PHISH = "https://phish.example"


def _typed(path: str) -> str:
    """A station owner's link that closes ``<…>`` or ``(…)`` early and adds a masked link."""
    return f"https://r.example/{path}>[Free]({PHISH}/{path})"


TYPED_LINKS = {
    "artwork": _typed("art.png"),
    "artwork_recent": _typed("ARTID.png"),
    "stationlogo": _typed("logo.png"),
    "page": _typed("player"),
    "port443": _typed("stream"),
    "ssl": "https://r.example/stream two",
    "m3u_ssl": _typed("m3u"),
    "station_url": _typed("website"),
}


@pytest.fixture
async def typed_sim():
    sim = StationSimulator()
    sim.add_station(1, key="station-key-SECRET-42", seed=3, public_url="https://c9.radioboss.fm")
    sim.station(1).typed_links = dict(TYPED_LINKS)
    async with serving(sim):
        yield sim


def _urls(body: object) -> list[str]:
    """Every value of a ``url`` or ``icon_url`` key anywhere in a request body."""
    if isinstance(body, dict):
        found = [str(v) for k, v in body.items() if k in ("url", "icon_url") and v]
        return found + [u for v in body.values() for u in _urls(v)]
    if isinstance(body, list):
        return [u for v in body for u in _urls(v)]
    return []


def _refused(fake) -> list[object]:
    return [(r.method, r.route, r.response) for r in fake.requests if 400 <= r.status < 500]


@pytest.mark.e2e
@pytest.mark.parametrize("command", ["nowplaying", "listen", "station", "recent"])
async def test_station_links_discord_refuses_are_left_out_of_every_command(typed_sim, command):
    async with command_reply(typed_sim, command) as (env, message):
        assert _refused(env.fake) == []  # the reply is one Discord takes
        # /listen is one line of text and its buttons since issue 25; the rest are embeds.
        assert message.get("content" if command == "listen" else "embeds"), message
        sent = [u for r in env.fake.requests for u in _urls(r.json)]
        assert not [u for u in sent if "r.example" in u or "phish" in u], sent
        assert "phish" not in str(message)
        if command in ("nowplaying", "listen"):
            buttons = [b for row in message["components"] for b in row["components"]]
            listen = next(b for b in buttons if b.get("label") == "Listen")
            assert listen["url"].startswith("https://c9.radioboss.fm:")  # the mount's, instead


@pytest.mark.e2e
@pytest.mark.parametrize(("mode", "style"), [("post", "compact"), ("card", "full")])
async def test_an_announcement_with_links_discord_refuses_is_posted(fake, typed_sim, mode, style):
    channel = fake.guilds[0].channels[0]
    subscription = channel_subscription(fake, mode=mode, style=style)
    async with running_bot(typed_sim, fake=fake, extra_config=subscription):
        posts = await fake.wait_request("POST", rf"^/channels/{channel}/messages$")
        await fake.wait_for(lambda: posts[0].status != 0)
        assert posts[0].status == 200, posts[0].response
        urls = _urls(posts[0].json)
        assert urls  # the title's search link and the buttons are still there
        assert not [u for u in urls if "r.example" in u or "phish" in u], urls
