"""The community: the ❤ button's clicks (any message, after any restart) and /top."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.render import community
from bot.runtime.core import OnAirBot
from bot.ui import Reply, answer
from bot.ui.likes import LikeButton
from bot.ui.stations import resolve_station, station_autocomplete


class CommunityCog(commands.Cog):
    def __init__(self, bot: OnAirBot) -> None:
        self.bot = bot

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(LikeButton)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(LikeButton)

    @app_commands.command(name="top", description="The station's most liked and most played tracks")
    @app_commands.describe(
        period="day, week or month (default: week)",
        station="Which station (default: this server's)",
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def top(
        self,
        interaction: discord.Interaction[OnAirBot],
        period: Literal["day", "week", "month"] = "week",
        station: str | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        since = time.time() - community.PERIODS[period][1]

        async def work() -> Reply:
            top = await self.bot.likes.top(chosen.slug, since)
            embed = community.top_embed(
                chosen.name, period, datetime.fromtimestamp(since, UTC), top.liked, top.played
            )
            return Reply(embed=embed)

        await answer(interaction, work())


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(CommunityCog(bot))
