"""/stats: listener statistics with a chart."""

from __future__ import annotations

import contextlib
import io
from datetime import datetime

import discord
from discord import app_commands

from bot.config import StationConfig
from bot.inputs.ranges import stats_range
from bot.render import stats_embeds
from bot.render.chart import ChartRenderer, ChartText
from bot.runtime.core import OnAirBot
from bot.station import StationError
from bot.station.source import Feature
from bot.ui import Reply, answer
from bot.ui.stations import reader_lang, resolve_station
from bot.util.i18n import N_

from .shapes import BotCog, Interaction, station_option

CHART = "stats.png"
# The names Discord shows (translated per client language); the values stay OnAir's words.
PERIOD_CHOICES = [
    app_commands.Choice(name=N_("today"), value="today"),
    app_commands.Choice(name=N_("7d"), value="7d"),
    app_commands.Choice(name=N_("30d"), value="30d"),
    app_commands.Choice(name=N_("90d"), value="90d"),
]


class StatsCog(BotCog):
    def __init__(self, bot: OnAirBot) -> None:
        super().__init__(bot)
        self.charts = ChartRenderer()  # its worker process starts on the first /stats

    async def cog_unload(self) -> None:
        self.charts.close()

    @app_commands.command(name="stats", description=N_("Listener statistics for a period or dates"))
    @app_commands.describe(
        period=N_("today, 7d, 30d or 90d (default 7d)"),
        date_from=N_("First day, YYYY-MM-DD"),
        date_to=N_("Last day, YYYY-MM-DD (default today)"),
    )
    @app_commands.rename(date_from="from", date_to="to")
    @app_commands.choices(period=PERIOD_CHOICES)
    @station_option(N_("Which station"), needs=Feature.STATS)
    async def stats(
        self,
        interaction: Interaction,
        period: str | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
        station: str | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        self.bot.registry.require(chosen, Feature.STATS)  # NotOffered: one private line
        today = datetime.now(chosen.timezone).date()
        first, last = stats_range(period, date_from, date_to, today=today)  # BadInput: ephemeral
        client = self.bot.registry.client(chosen)
        lang = reader_lang(interaction)  # a private answer: the viewer's language

        async def work() -> Reply:
            stats = await client.stats(first, last)
            days = stats.days_between(first, last)
            png = await self.charts.render(days, first <= today <= last, ChartText.of(lang))
            embed = stats_embeds.stats_embed(
                stats,
                first,
                last,
                chosen.name,
                chart_name=CHART,
                listening_now=await self._listening_now(chosen),
                today=today,
                lang=lang,
            )
            return Reply(embed=embed, file=discord.File(io.BytesIO(png), filename=CHART))

        await answer(interaction, work(), defer_now=True)

    async def _listening_now(self, station: StationConfig) -> tuple[int | None, int] | None:
        """The station's own count beside its Discord voice listeners, when it plays in voice."""
        if not self.bot.voice.playing(station.slug):
            return None
        count = None
        with contextlib.suppress(StationError):
            count = (await self.bot.registry.snapshot(station)).info.listener_count
        return count, self.bot.voice.listeners_by_station().get(station.slug, 0)


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(StatsCog(bot))
