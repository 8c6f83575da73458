"""A card's "Find this song" edit never writes an older play back over a newer one: the link
edit checks that the card still shows its play and edits in the channel's turn, which the card's
own delivery takes too; link edits give way to announcements at the shared rate gate.

The deliverer is OnAir's own, with its real rendering and song links (searched on the
simulator's fake of Apple's search); only discord.py's channel is a stand-in that records."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any
from unittest.mock import MagicMock

import aiohttp
import discord
import pytest

from bot.announcer import Announcement
from bot.config import StationConfig
from bot.delivery.announcements import DiscordDeliverer, RateGate
from bot.simulator.songsearch import SongSearchSim
from bot.songlinks import SongLinks
from bot.songsearch import SongSearch
from bot.station import Play, StationInfo
from bot.storage import Subscription

from .support.storage_backends import open_backend
from .test_song_links import FAST, OTHER, SONG, serving

CARD = 99
CHANNEL = 5
STATION = StationConfig("main", "Main FM", "https://c9.radioboss.fm", 1, key="k")
SUB = Subscription(1, 7, CHANNEL, "main", mode="card", card_message_id=CARD)
INFO = StationInfo(fetched_at=datetime(2026, 11, 29, tzinfo=UTC))


def aired(play: Play) -> Announcement:
    return Announcement(play, INFO, 1_800_000_000.0)


@pytest.fixture
async def links(tmp_path: Any) -> AsyncIterator[SongLinks]:
    store = await open_backend("sqlite", tmp_path)
    async with serving(SongSearchSim()) as url, aiohttp.ClientSession() as session:
        yield SongLinks(SongSearch(session, url), store, per_minute=FAST)
    await store.close()


class SlowGate(RateGate):
    """The shared gate under load: once armed, the next request (the link edit's) waits until
    the test lets it through; the others pass."""

    def __init__(self) -> None:
        super().__init__()
        self.armed = False
        self.hold = asyncio.Event()
        self.waiting = asyncio.Event()

    async def acquire(self, *, deferrable: bool = False) -> None:
        if self.armed and not self.waiting.is_set():
            self.waiting.set()
            await self.hold.wait()
        if deferrable:
            await super().acquire(deferrable=True)
        else:
            await super().acquire()


def card_channel(edit: Any) -> MagicMock:
    """discord.py's channel, whose newest message is the card, edited through ``edit``."""
    channel = MagicMock(spec=discord.TextChannel)
    channel.get_partial_message.return_value = SimpleNamespace(edit=edit)

    async def newest(limit: int) -> AsyncIterator[Any]:
        yield SimpleNamespace(id=CARD)

    channel.history = newest
    return channel


def deliverer_for(channel: MagicMock, links: SongLinks, gate: RateGate) -> DiscordDeliverer:
    client = MagicMock(spec=discord.Client)
    client.get_channel.return_value = channel
    return DiscordDeliverer(client, gate=gate, links=links)


async def test_a_link_edit_waiting_at_the_gate_never_overwrites_a_newer_card(
    links: SongLinks,
) -> None:
    """The link edit has checked that the card shows the first song, then waits its turn at
    the gate; meanwhile the second song's card is delivered. The link edit then does nothing."""
    shown: list[str] = []

    async def edit(*, embed: discord.Embed, **_: Any) -> None:
        shown.append(embed.title or "")

    gate = SlowGate()
    deliverer = deliverer_for(card_channel(edit), links, gate)
    assert await deliverer.deliver(SUB, aired(SONG), STATION, nonce="1") == CARD
    gate.armed = True
    await gate.waiting.wait()  # the first song's link is found; its edit waits at the gate
    assert await deliverer.deliver(SUB, aired(OTHER), STATION, nonce="2") == CARD
    gate.hold.set()
    await asyncio.gather(*deliverer._link_edits)
    since = shown[shown.index(OTHER.title) :]
    assert set(since) == {OTHER.title}, f"the card went back to the older song: {shown}"


async def test_the_next_card_waits_for_a_link_edit_in_flight(links: SongLinks) -> None:
    """The link edit's request is under way when the next play is delivered: the card's edit
    for the next play is made after it, never before (Discord keeps the last one)."""
    applied: list[str] = []
    link_sent = asyncio.Event()
    link_answered = asyncio.Event()

    async def edit(*, embed: discord.Embed, view: Any = None, **_: Any) -> None:
        linked = view is not None and any(
            getattr(item, "url", None) and "song.link" in item.url for item in view.children
        )
        if linked and embed.title == SONG.title:
            link_sent.set()
            await link_answered.wait()
        applied.append(f"{embed.title}{' + link' if linked else ''}")

    deliverer = deliverer_for(card_channel(edit), links, RateGate())
    await deliverer.deliver(SUB, aired(SONG), STATION, nonce="1")
    await link_sent.wait()
    nxt = asyncio.create_task(deliverer.deliver(SUB, aired(OTHER), STATION, nonce="2"))
    for _ in range(50):
        await asyncio.sleep(0)  # let the next delivery run as far as it can
    link_answered.set()
    assert await nxt == CARD
    await asyncio.gather(*deliverer._link_edits)
    assert applied[:3] == [SONG.title, f"{SONG.title} + link", OTHER.title], applied


async def test_announcements_never_wait_behind_link_edits() -> None:
    """An empty bucket: link edits that wait for a token and announcements that come after
    them; the announcements are served first."""
    gate = RateGate(rate=1000.0)
    gate.tokens = 0.0
    served: list[str] = []

    async def take(name: str, deferrable: bool) -> None:
        await gate.acquire(deferrable=deferrable)
        served.append(name)

    edits = [asyncio.create_task(take(f"edit {k}", True)) for k in range(3)]
    await asyncio.sleep(0)  # the link edits queue first
    posts = [asyncio.create_task(take(f"post {k}", False)) for k in range(3)]
    await asyncio.gather(*edits, *posts)
    assert served[:3] == ["post 0", "post 1", "post 2"], served
