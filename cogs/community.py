"""The community: the ❤ button's clicks (any message, after any restart) and /top."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from discord import app_commands

from bot.render import community
from bot.runtime.core import OnAirBot
from bot.ui import Reply, answer
from bot.ui.likes import LikeButton
from bot.ui.stations import reader_lang, resolve_station
from bot.util.i18n import N_

from .shapes import BotCog, Interaction, station_option

# The names Discord shows (translated per client language); the values stay the English words.
PERIOD_CHOICES = [
    app_commands.Choice(name=N_("day"), value="day"),
    app_commands.Choice(name=N_("week"), value="week"),
    app_commands.Choice(name=N_("month"), value="month"),
]


class CommunityCog(BotCog):
    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(LikeButton)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(LikeButton)

    @app_commands.command(
        name="top", description=N_("The station's most liked and most played tracks")
    )
    @app_commands.describe(period=N_("day, week or month (default: week)"))
    @app_commands.choices(period=PERIOD_CHOICES)
    @station_option()
    async def top(
        self,
        interaction: Interaction,
        period: str = "week",
        station: str | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        since = time.time() - community.PERIODS[period][1]

        async def work() -> Reply:
            top = await self.bot.likes.top(chosen.slug, since)
            embed = community.top_embed(
                chosen.name,
                period,
                datetime.fromtimestamp(since, UTC),
                top.liked,
                top.played,
                reader_lang(interaction),
            )
            return Reply(embed=embed)

        await answer(interaction, work())


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(CommunityCog(bot))
