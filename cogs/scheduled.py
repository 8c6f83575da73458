"""Scheduled posts (live and offline alerts, weekly recaps): starts and stops the outbox and the
recap clock ``create_bot`` built, and the reads of stations' schedules (their live shows as
server events); the alerts run on the announcer's watches."""

from __future__ import annotations

from bot.runtime.core import OnAirBot

from .shapes import BotCog

PRUNE_AFTER = 14 * 86400.0  # settled posts kept this long (a repeat of their key is long past)


class ScheduledCog(BotCog):
    async def cog_load(self) -> None:
        await self.bot.posts.start()
        await self.bot.recaps.start()
        await self.bot.votes.start(ready=self.bot.wait_until_ready)  # in the background
        await self.bot.shows.start_schedules()
        self.bot.scheduler.add_job(
            self._prune, "interval", hours=6, id="posts:prune", replace_existing=True
        )

    async def cog_unload(self) -> None:
        self.bot.announcer.stop_observing_polls()
        if self.bot.scheduler.get_job("posts:prune"):
            self.bot.scheduler.remove_job("posts:prune")
        await self.bot.recaps.stop()
        await self.bot.votes.stop()
        await self.bot.shows.stop_schedules()
        await self.bot.posts.stop(grace=self.bot.grace())

    async def _prune(self) -> None:
        await self.bot.storage.prune_posts(self.bot.posts.clock() - PRUNE_AFTER)


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(ScheduledCog(bot))
