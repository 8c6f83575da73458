"""/station: about the station."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.ui import Reply
from bot.ui.stations import answer_with_snapshot, station_autocomplete


class StationCog(commands.Cog):
    def __init__(self, bot: OnAirBot) -> None:
        self.bot = bot

    @app_commands.command(name="station", description="About the station")
    @app_commands.describe(station="Which station (default: this server's)")
    @app_commands.autocomplete(station=station_autocomplete)
    async def station(
        self,
        interaction: discord.Interaction[OnAirBot],
        station: str | None = None,
    ) -> None:
        await answer_with_snapshot(
            interaction,
            station,
            lambda snapshot, chosen: Reply(
                embed=station_embeds.station_embed(snapshot.info, chosen.name)
            ),
        )


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(StationCog(bot))
