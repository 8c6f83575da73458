"""Track announcements: starts and stops the announcer service ``create_bot`` built."""

from __future__ import annotations

import discord
from discord.ext import commands

from bot.runtime.core import OnAirBot


class AnnouncerCog(commands.Cog):
    def __init__(self, bot: OnAirBot) -> None:
        self.bot = bot
        self.service = bot.announcer

    async def cog_load(self) -> None:
        await self.service.start()
        self.bot.scheduler.add_job(
            self._prune, "interval", hours=6, id="history:prune", replace_existing=True
        )

    async def cog_unload(self) -> None:
        await self.service.stop(grace=self.bot.grace())
        if self.bot.scheduler.get_job("history:prune"):
            self.bot.scheduler.remove_job("history:prune")

    async def _prune(self) -> None:
        await self.bot.storage.prune(self.bot.settings.history_days)

    @commands.Cog.listener()
    async def on_guild_remove(self, guild: discord.Guild) -> None:
        """The bot left (or was removed from) a guild: purge everything of it."""
        await self.service.forget_guild(guild.id)


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(AnnouncerCog(bot))
