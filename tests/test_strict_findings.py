"""What the strict fake Discord found in the bot beyond issue 8's list, each through the real
discord.py: station text or config that made Discord refuse OnAir's messages."""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest

from bot.guard.links import BUTTON_URL, safe_url
from bot.simulator import StationSimulator

from .support.botenv import fake_discord_fixture, running_bot, subscription_config

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
    await sim.start()
    yield sim
    await sim.stop()


@pytest.mark.e2e
@pytest.mark.parametrize("command", ["nowplaying", "listen", "station", "recent"])
async def test_links_without_a_host_are_left_out_not_sent(hostless_sim, command):
    async with running_bot(hostless_sim) as env:
        iid = await env.fake.slash(command)
        message = await env.fake.final_message(iid)
        rejected = [r for r in env.fake.requests if r.status == 400]
        assert rejected == [], [r.response for r in rejected]
        assert message.get("embeds"), message


@pytest.mark.e2e
async def test_announcement_with_hostless_links_is_posted_not_lost(fake, hostless_sim):
    guild = fake.guilds[0]
    channel = guild.channels[0]
    subscription = subscription_config(guild.id, channel)
    async with running_bot(hostless_sim, fake=fake, extra_config=subscription):
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
