"""Track announcements: the announcer service runs while this cog is loaded."""

from __future__ import annotations

import discord
from discord.ext import commands

from bot.announcer import WatchScheduler
from bot.announcer.discord_delivery import DiscordDeliverer
from bot.announcer.service import AnnouncerService
from bot.core import OnAirBot


class Announcer(commands.Cog):
    def __init__(self, bot: OnAirBot) -> None:
        self.bot = bot
        self.service = AnnouncerService(
            bot.settings,
            bot.registry,
            bot.storage,
            WatchScheduler(bot.scheduler),
            DiscordDeliverer(bot),
        )
        self.service.metrics = bot.metrics
        bot.announcer = self.service

    async def cog_load(self) -> None:
        await self.service.start()
        self.bot.scheduler.add_job(
            self._prune, "interval", hours=6, id="history:prune", replace_existing=True
        )

    async def cog_unload(self) -> None:
        await self.service.stop()
        if self.bot.scheduler.get_job("history:prune"):
            self.bot.scheduler.remove_job("history:prune")

    async def _prune(self) -> None:
        await self.bot.storage.prune(self.bot.settings.history_days)

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """The bot left (or was removed from) a guild: purge everything of it."""
        await self.bot.storage.purge_guild(guild.id)
        for station in self.bot.registry.visible(guild.id):
            if station.owner_guild == guild.id:
                self.bot.registry.remove_guild_station(station.slug)
        await self.service.refresh()


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(Announcer(bot))
