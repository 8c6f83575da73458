"""Autocomplete answers sent through a few lanes, so a burst reuses kept-alive connections.

discord.py sends each autocomplete's callback as soon as its choices are ready: 200 listeners
typing at once are 200 requests at once, and every one past the connections already open opens
its own TLS connection to Discord, which costs most of the bot's CPU per keystroke
(``bench.requests`` in docs/benchmarks.md). Sending at most ``lanes`` at once keeps that many
connections warm and reuses them; a callback waits a round trip or two for a lane instead of a
TCP and TLS handshake.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import discord
from discord import app_commands

LANES = 48  # callbacks in flight at once (bench.requests in docs/benchmarks.md measures it)


class ChoiceLanes:
    """One per cog that answers busy autocompletes."""

    def __init__(self, lanes: int = LANES) -> None:
        self._lanes = asyncio.Semaphore(lanes)

    async def send(
        self, interaction: discord.Interaction[Any], choices: Sequence[app_commands.Choice[str]]
    ) -> None:
        """Answer now (discord.py then sends nothing more: the response is done)."""
        async with self._lanes:
            if not interaction.response.is_done():
                await interaction.response.autocomplete(list(choices))
