"""/recent: recently played tracks."""

from __future__ import annotations

from discord import app_commands

from bot.catalog.registry import Snapshot
from bot.config import StationConfig
from bot.history.recorded import with_plays_heard
from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.station.source import Feature
from bot.ui import Reply
from bot.ui.stations import answer_with_snapshot, reader_lang, skip_rules
from bot.util.i18n import N_

from .shapes import BotCog, Interaction, anywhere, station_option


class RecentCog(BotCog):
    @app_commands.command(name="recent", description=N_("Recently played tracks"))
    @app_commands.describe(count=N_("How many (1-20, default 10)"))
    @station_option()
    @anywhere
    async def recent(
        self,
        interaction: Interaction,
        count: app_commands.Range[int, 1, 20] = 10,
        station: str | None = None,
    ) -> None:
        async def render(snapshot: Snapshot, chosen: StationConfig) -> Reply:
            skip = await skip_rules(interaction, chosen)  # jingles left out, as in "Next"
            info = snapshot.info
            if not self.bot.registry.offers(chosen, Feature.RECENT):
                info = await with_plays_heard(self.bot.storage, chosen.slug, info)
            lang = reader_lang(interaction)
            embed = station_embeds.recent(info, chosen.name, count, skip=skip, lang=lang)
            return Reply(embed=embed)

        await answer_with_snapshot(interaction, station, render)


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(RecentCog(bot))
