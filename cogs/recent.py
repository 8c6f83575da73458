"""/recent: recently played tracks."""

from __future__ import annotations

from discord import app_commands

from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.ui import Reply
from bot.ui.stations import answer_with_snapshot

from .shapes import BotCog, Interaction, station_option


class RecentCog(BotCog):
    @app_commands.command(name="recent", description="Recently played tracks")
    @app_commands.describe(count="How many (1-20, default 10)")
    @station_option()
    async def recent(
        self,
        interaction: Interaction,
        count: app_commands.Range[int, 1, 20] = 10,
        station: str | None = None,
    ) -> None:
        await answer_with_snapshot(
            interaction,
            station,
            lambda snapshot, chosen: Reply(
                embed=station_embeds.recent(snapshot.info, chosen.name, count, chosen.timezone)
            ),
        )


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(RecentCog(bot))
