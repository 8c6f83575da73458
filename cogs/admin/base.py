"""What every /onair group shares: the bot it serves and the one permission check."""

from __future__ import annotations

from typing import Any

import discord

from bot.ui.checks import require_manage

from ..shapes import BotCog


class AdminCommands(BotCog):
    """The base of each group's commands (``cogs.admin`` assembles them into one ``/onair``)."""

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        return require_manage(interaction)
