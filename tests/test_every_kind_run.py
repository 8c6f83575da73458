"""One ``onair run`` (a child process) with a station of each kind, against the fake Discord and
each host's simulator in real time: every change of every station is announced once in every
channel subscribed to it, in the order it aired, and ``/nowplaying``, ``/recent`` and ``/listen``
answer for each kind."""

from __future__ import annotations

import itertools
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.simulator import TRACKS, Programme, StationSimulator
from bot.simulator.hosts.azuracast import AzuraCastSimulator
from bot.simulator.hosts.icecast import IcecastSimulator
from bot.simulator.hosts.shoutcast import ShoutcastSimulator

from .support.botenv import STATION_KEY, fake_discord_fixture, subscription_config
from .support.delivery import Child
from .support.fakediscord import FakeDiscord

pytestmark = pytest.mark.e2e

SECONDS = 6.0  # each track's airing: short, so a run shows several changes of every station
PER_STATION = 8  # distinct tracks a station cycles through (no title repeats within the run)
LEAD = 10.0  # seconds from now to the programmes' epoch: the bot has started by then
WANTED = 4  # announcements each channel must show

fake = fake_discord_fixture(guild_count=2, channels_per_guild=4)


@dataclass
class Host:
    slug: str
    kind: str
    station_id: str  # as the config file writes it (a TOML value)
    base_url: str
    titles: list[str]  # the station's cycle, in airing order


def programme(index: int, epoch: float) -> tuple[Programme, list[str]]:
    items = TRACKS[index * PER_STATION : (index + 1) * PER_STATION]
    return Programme([(item, SECONDS) for item in items], epoch=epoch), [i.title for i in items]


@pytest.fixture
async def hosts() -> AsyncIterator[list[Host]]:
    epoch = time.time() + LEAD
    shows = [programme(index, epoch) for index in range(4)]
    radioboss = StationSimulator()
    radioboss.add_station(1, key=STATION_KEY, programme=shows[0][0], library_durations=True)
    azura = AzuraCastSimulator()
    azura.add_azura(1, "onair_radio", programme=shows[1][0], library_durations=True)
    icecast = IcecastSimulator()
    icecast.add_mount("/live", programme=shows[2][0])
    shoutcast = ShoutcastSimulator()
    shoutcast.add_station(1, key=None, programme=shows[3][0])
    simulators: list[Any] = [radioboss, azura, icecast, shoutcast]
    for simulator in simulators:
        await simulator.start()
    try:
        yield [
            Host("rb", "radioboss", "1", radioboss.base_url, shows[0][1]),
            Host("azura", "azuracast", '"onair_radio"', azura.base_url, shows[1][1]),
            Host("ice", "icecast", '"/live"', icecast.base_url, shows[2][1]),
            Host("shout", "shoutcast", "1", shoutcast.base_url, shows[3][1]),
        ]
    finally:
        for simulator in simulators:
            await simulator.stop()


def config(hosts: list[Host], fake: FakeDiscord, db: Path) -> str:
    parts = [
        "[bot]",
        f'default_station = "{hosts[0].slug}"',
        "",
        "[database]",
        f'path = "{db}"',
        "",
        "[announcer]",  # polled hosts looked at every 1-2 s: 6-s tracks are each seen
        "min_interval = 1",
        "max_interval = 2",
        "steady_interval = 2",
        "",
        "[links]",
        "enabled = false",
        "",
    ]
    for host in hosts:
        parts += [
            "[[stations]]",
            f'id = "{host.slug}"',
            f'name = "{host.kind.title()} FM"',
            f'kind = "{host.kind}"',
            f'base_url = "{host.base_url}"',
            f"station_id = {host.station_id}",
            'key_env = "ONAIR_TEST_STATION_KEY"' if host.kind == "radioboss" else "",
            "",
        ]
    text = "\n".join(parts) + "\n"
    for guild in fake.guilds:
        for host, channel in zip(hosts, guild.channels, strict=True):
            text += subscription_config(guild.id, channel, host.slug)
    return text


def titles(fake: FakeDiscord, channel: int) -> list[str]:
    posts = fake.sent("POST", rf"^/channels/{channel}/messages$")
    return [str(r.json["embeds"][0]["title"]) for r in posts if r.status == 200 and r.json]


def in_airing_order(posted: list[str], cycle: list[str]) -> bool:
    """Each title once, each the one that aired after the one before."""
    places = [cycle.index(title) for title in posted if title in cycle]
    if len(places) != len(posted) or len(set(posted)) != len(posted):
        return False
    return all((b - a) % len(cycle) == 1 for a, b in itertools.pairwise(places))


async def test_a_station_of_each_kind_is_announced_once_in_every_channel(
    hosts: list[Host], fake: FakeDiscord, tmp_path: Path
) -> None:
    child = Child(tmp_path, fake, config(hosts, fake, tmp_path / "onair.sqlite3"))
    await child.start()
    try:
        channels = [
            (host, guild.channels[i]) for guild in fake.guilds for i, host in enumerate(hosts)
        ]
        await fake.wait_for(
            lambda: all(len(titles(fake, channel)) >= WANTED for _, channel in channels),
            within=LEAD + WANTED * SECONDS + 60,
        )
        for host, channel in channels:
            posted = titles(fake, channel)
            assert in_airing_order(posted, host.titles), (host.kind, posted)
        for index, host in enumerate(hosts):  # both servers got the same plays (one in flight)
            first = titles(fake, fake.guilds[0].channels[index])
            second = titles(fake, fake.guilds[1].channels[index])
            shorter, longer = sorted((first, second), key=len)
            assert longer[: len(shorter)] == shorter, host.kind
            assert len(longer) - len(shorter) <= 1, host.kind

        for host in hosts:
            options = {"station": host.slug}
            now = await fake.final_message(await fake.slash("nowplaying", options))
            assert now["embeds"][0]["title"] in host.titles, (host.kind, now)
            recent = await fake.final_message(await fake.slash("recent", options))
            assert recent["embeds"], (host.kind, recent)
            listen = await fake.final_message(await fake.slash("listen", options))
            urls = [
                c.get("url")
                for row in listen.get("components", [])
                for c in row.get("components", [])
            ]
            assert any(url and url.startswith(host.base_url) for url in urls), (host.kind, urls)
        code, _ = await child.stop(signal.SIGTERM)
        assert code == 0
    finally:
        await child.kill_quietly()
