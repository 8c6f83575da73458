"""Answer an interaction exactly once: at once when the work is quick, after a defer when not."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

import discord

# Discord allows 3 s for the first response; a station call slower than this gets a defer.
DEFER_AFTER = 1.5


@dataclass(slots=True)
class Reply:
    embed: discord.Embed | None = None
    content: str | None = None
    view: discord.ui.View | None = None
    file: discord.File | None = None
    ephemeral: bool = False
    on_sent: list[Any] = field(default_factory=list)


async def send_reply(interaction: discord.Interaction[Any], reply: Reply) -> None:
    kwargs: dict[str, Any] = {"ephemeral": reply.ephemeral}
    if reply.embed is not None:
        kwargs["embed"] = reply.embed
    if reply.content is not None:
        kwargs["content"] = reply.content
    if reply.view is not None:
        kwargs["view"] = reply.view
    if reply.file is not None:
        kwargs["file"] = reply.file
    if interaction.response.is_done():
        await interaction.followup.send(**kwargs, wait=True)
    else:
        await interaction.response.send_message(**kwargs)
    for callback in reply.on_sent:
        callback(interaction)


async def answer(
    interaction: discord.Interaction[Any],
    work: Awaitable[Reply],
    *,
    defer_now: bool = False,
    defer_after: float = DEFER_AFTER,
    ephemeral: bool = False,
) -> None:
    """Run ``work``; defer if it is slow (or ``defer_now``), then send its reply once.
    ``ephemeral``: the defer is private too (so is whatever follows it, errors included)."""
    task = asyncio.ensure_future(work)
    if defer_now:
        await interaction.response.defer(thinking=True, ephemeral=ephemeral)
    else:
        done, _ = await asyncio.wait({task}, timeout=defer_after)
        if not done:
            await interaction.response.defer(thinking=True, ephemeral=ephemeral)
    try:
        reply = await task
    finally:
        if not task.done():
            task.cancel()
    await send_reply(interaction, reply)
