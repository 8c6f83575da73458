"""What every /onair group shares: the bot it serves and the one permission check."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from bot.errors import NEED_MANAGE
from bot.ui.checks import can_manage

from ..shapes import BotCog


class AdminCommands(BotCog):
    """The base of each group's commands (``cogs.admin`` assembles them into one ``/onair``)."""

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        """Checked in code too: a guild may have changed the commands' default permissions."""
        if not can_manage(interaction):
            raise app_commands.CheckFailure(NEED_MANAGE)
        return True
