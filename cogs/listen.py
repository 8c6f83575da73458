"""/listen: every link to tune in."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.catalog.registry import Snapshot
from bot.config import StationConfig
from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.ui import Reply
from bot.ui.stations import answer_with_snapshot, station_autocomplete
from bot.ui.streams import MoreStreams, with_more_streams
from bot.ui.voice import with_play_button


class ListenCog(commands.Cog):
    def __init__(self, bot: OnAirBot) -> None:
        self.bot = bot

    @app_commands.command(name="listen", description="Every link to tune in")
    @app_commands.describe(station="Which station (default: this server's)")
    @app_commands.autocomplete(station=station_autocomplete)
    async def listen(
        self,
        interaction: discord.Interaction[OnAirBot],
        station: str | None = None,
    ) -> None:
        def render(snapshot: Snapshot, chosen: StationConfig) -> Reply:
            content, embed, view = station_embeds.listen_embed(snapshot.info, chosen.name)
            choices = station_embeds.more_streams(snapshot.info.links)
            view = with_more_streams(view, chosen.slug, choices)
            view = with_play_button(interaction, chosen, view)
            return Reply(content=content, embed=embed, view=view)

        await answer_with_snapshot(interaction, station, render)


async def setup(bot: OnAirBot) -> None:
    bot.add_dynamic_items(MoreStreams)
    await bot.add_cog(ListenCog(bot))
