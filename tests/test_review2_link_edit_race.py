"""Review 2: the link edit of a card checks that the card still shows its play, then awaits
(the render's storage reads, the shared rate gate) before it edits: a newer play's card edit
made meanwhile is overwritten by the older play with its link."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any
from unittest.mock import MagicMock

import discord

from bot.delivery.announcements import DiscordDeliverer
from bot.songlinks import SongLink


class SlowGate:
    """The shared RateGate under load: the link edit's turn comes after the next play's."""

    def __init__(self) -> None:
        self.hold = asyncio.Event()
        self.waiting = asyncio.Event()

    async def acquire(self) -> None:
        self.waiting.set()
        await self.hold.wait()


async def test_review2_a_link_edit_never_overwrites_a_newer_card() -> None:
    edits: list[str] = []

    class Partial:
        async def edit(self, *, embed: Any, view: Any, **_: Any) -> None:
            edits.append(embed.title)

    channel = MagicMock(spec=discord.TextChannel)
    channel.get_partial_message.return_value = Partial()
    client = MagicMock()
    client.get_channel.return_value = channel
    links = MagicMock()
    links.enabled = True

    async def find(_play: Any) -> SongLink:
        return SongLink("https://song.link/i/1")

    links.find = find
    gate = SlowGate()
    deliverer = DiscordDeliverer(client, gate=gate, links=links)  # type: ignore[arg-type]

    async def render(_sub: Any, announcement: Any, _station: Any, _link: Any = None) -> Any:
        return discord.Embed(title=announcement.play.claim_key), None, None, ()

    deliverer._render = render  # type: ignore[method-assign]
    sub = SimpleNamespace(mode="card", channel_id=5, guild_id=1)
    first = SimpleNamespace(play=SimpleNamespace(claim_key="song one"))
    deliverer._cards[5] = "song one"  # deliver() of the first song (announcements.py:141)
    task = asyncio.create_task(deliverer._add_link(sub, first, None, 99))  # type: ignore[arg-type]
    await gate.waiting.wait()  # checked "still shows song one", now waits its turn
    deliverer._cards[5] = "song two"  # deliver() of the next song edits the card
    edits.append("song two")
    gate.hold.set()
    await task
    assert edits[-1] == "song two", f"the card went back to the older song: {edits}"
