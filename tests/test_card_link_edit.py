"""A card's "Find this song" edit never writes an older play back over a newer one: the link
edit checks that the card still shows its play and edits in the channel's turn, which the card's
own delivery takes too; the link edits give way to announcements at the shared rate gate."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any
from unittest.mock import MagicMock

import discord

from bot.delivery.announcements import DiscordDeliverer, RateGate
from bot.songlinks import SongLink

CARD = 99


class SlowGate:
    """The shared RateGate under load: the link edit's turn comes after the next play's."""

    def __init__(self) -> None:
        self.hold = asyncio.Event()
        self.waiting = asyncio.Event()

    async def acquire(self, **_: Any) -> None:
        self.waiting.set()
        await self.hold.wait()


class OpenGate:
    async def acquire(self, **_: Any) -> None:
        return None


def card_channel(edit: Any) -> MagicMock:
    """A channel whose newest message is the card, edited through ``edit``."""
    channel = MagicMock(spec=discord.TextChannel)
    channel.get_partial_message.return_value = SimpleNamespace(edit=edit)

    async def newest(limit: int) -> AsyncIterator[Any]:
        yield SimpleNamespace(id=CARD)

    channel.history = newest
    return channel


def deliverer_for(channel: MagicMock, gate: Any) -> DiscordDeliverer:
    client = MagicMock()
    client.get_channel.return_value = channel
    links = MagicMock()
    links.enabled = True

    async def find(_play: Any) -> SongLink:
        return SongLink("https://song.link/i/1")

    links.find = find
    deliverer = DiscordDeliverer(client, gate=gate, links=links)

    async def render(_sub: Any, announcement: Any, _station: Any, _link: Any = None) -> Any:
        return discord.Embed(title=announcement.play.claim_key), None, None, ()

    deliverer._render = render  # type: ignore[method-assign]
    return deliverer


def play(key: str) -> Any:
    return SimpleNamespace(play=SimpleNamespace(claim_key=key, live=True), requested_by=())


SUB = SimpleNamespace(mode="card", channel_id=5, guild_id=1, card_message_id=CARD, mention_role=0)


async def test_a_link_edit_waiting_at_the_gate_never_overwrites_a_newer_card() -> None:
    edits: list[str] = []

    async def edit(*, embed: Any, **_: Any) -> None:
        edits.append(embed.title)

    gate = SlowGate()
    deliverer = deliverer_for(card_channel(edit), gate)
    deliverer._cards[5] = "song one"  # deliver() of the first song
    task = asyncio.create_task(deliverer._add_link(SUB, play("song one"), None, CARD))  # type: ignore[arg-type]
    await gate.waiting.wait()  # checked "still shows song one", now waits its turn
    deliverer._cards[5] = "song two"  # deliver() of the next song edits the card
    edits.append("song two")
    gate.hold.set()
    await task
    assert edits[-1] == "song two", f"the card went back to the older song: {edits}"


async def test_the_next_card_waits_for_a_link_edit_in_flight() -> None:
    """The link edit's request is under way when the next play is delivered: the card's edit
    for the next play is made after it, never before (Discord keeps the last one)."""
    applied: list[str] = []
    link_sent = asyncio.Event()
    link_answered = asyncio.Event()

    async def edit(*, embed: Any, **_: Any) -> None:
        if embed.title == "song one":
            link_sent.set()
            await link_answered.wait()
        applied.append(embed.title)

    deliverer = deliverer_for(card_channel(edit), OpenGate())
    deliverer._cards[5] = "song one"
    link = asyncio.create_task(deliverer._add_link(SUB, play("song one"), None, CARD))  # type: ignore[arg-type]
    await link_sent.wait()
    nxt = asyncio.create_task(
        deliverer.deliver(SUB, play("song two"), SimpleNamespace(), nonce="n")  # type: ignore[arg-type]
    )
    for _ in range(20):
        await asyncio.sleep(0)  # let the next delivery run as far as it can
    link_answered.set()
    assert await nxt == CARD
    await link
    assert applied == ["song one", "song two"]


async def test_announcements_never_wait_behind_link_edits() -> None:
    """An empty bucket: a link edit that waits for a token and an announcement that comes
    after it; the announcement is served first."""
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
