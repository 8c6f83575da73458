"""What the setup commands check of the invoker and of Discord objects before acting."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from ..errors import CANNOT_POST, NEED_MANAGE, NO_EVERYONE, BadInput


def can_manage(interaction: discord.Interaction[Any]) -> bool:
    """Manage Server (or Administrator) in the guild the interaction came from."""
    permissions = interaction.permissions
    return interaction.guild_id is not None and bool(
        permissions.manage_guild or permissions.administrator
    )


def require_manage(interaction: discord.Interaction[Any]) -> bool:
    """The setup commands' check: True, or the polite refusal (a CheckFailure) without Manage
    Server. Checked in code too: a guild may have changed the commands' default permissions."""
    if not can_manage(interaction):
        raise app_commands.CheckFailure(NEED_MANAGE)
    return True


def check_announce_target(
    channel: discord.TextChannel | discord.Thread, role: discord.Role | None
) -> None:
    """BadInput when OnAir could not post embeds there, or the role to ping is @everyone."""
    if role is not None and role.is_default():
        raise BadInput(NO_EVERYONE)
    me = channel.guild.me
    if me is None:
        return
    allowed = channel.permissions_for(me)
    if not (allowed.send_messages or allowed.send_messages_in_threads) or not allowed.embed_links:
        raise BadInput(CANNOT_POST, channel=channel.mention)
