"""/station: about the station."""

from __future__ import annotations

from discord import app_commands

from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.ui import Reply
from bot.ui.stations import answer_with_snapshot, reader_lang
from bot.util.i18n import N_

from .shapes import BotCog, Interaction, station_option


class StationCog(BotCog):
    @app_commands.command(name="station", description=N_("About the station"))
    @station_option()
    async def station(self, interaction: Interaction, station: str | None = None) -> None:
        await answer_with_snapshot(
            interaction,
            station,
            lambda snapshot, chosen: Reply(
                embed=station_embeds.station_embed(
                    snapshot.info, chosen.name, reader_lang(interaction)
                )
            ),
        )


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(StationCog(bot))
