"""In a fleet, each process stores the preferred locale of the guilds its shards serve, as the
gateway shows it: every guild once all shards are ready, then a guild joined, back from an
outage or whose locale changed. The other processes render the guild's public posts (an alert
the station's poller decides, a recap) in it (``OnAirBot.guild_lang``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING

import discord

if TYPE_CHECKING:
    from .core import OnAirBot

_LOGGER = logging.getLogger("onair.bot")


def follow_guild_locales(bot: OnAirBot) -> None:
    """Register the listeners (before the client connects)."""

    async def note(guilds: Iterable[discord.Guild]) -> None:
        pairs = [(guild.id, str(guild.preferred_locale)) for guild in guilds]
        try:
            stored = await bot.languages.seen(pairs)
        except Exception as error:  # storage down: the next ready or guild event tries again
            bot.storage.log_fault_or_raise(
                error, _LOGGER, "the guilds' preferred locales not stored (%s)", error
            )
            return
        if stored:
            _LOGGER.info("stored the preferred locale of %d guild(s)", stored)

    async def on_ready() -> None:
        await note(list(bot.guilds))

    async def on_guild(guild: discord.Guild) -> None:
        if bot.is_ready():  # before: on_ready stores every guild at once
            await note([guild])

    async def on_guild_update(before: discord.Guild, after: discord.Guild) -> None:
        if before.preferred_locale != after.preferred_locale:
            await note([after])

    bot.add_listener(on_ready, "on_ready")
    bot.add_listener(on_guild, "on_guild_join")
    bot.add_listener(on_guild, "on_guild_available")
    bot.add_listener(on_guild_update, "on_guild_update")
