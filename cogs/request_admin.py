"""/onair requests: a guild's song-request rules. A group of its own added to /onair (the
setup commands' group), so each /onair group lives in its own module."""

from __future__ import annotations

from typing import Any

import discord
from discord import app_commands

from bot.render import request_embeds
from bot.runtime.core import OnAirBot
from bot.ui.checks import require_manage
from bot.ui.stations import resolve_station

from .shapes import Channel, Interaction, station_option


class RequestRules(app_commands.Group):
    """/onair requests ..."""

    def __init__(self, bot: OnAirBot) -> None:
        super().__init__(name="requests", description="Song requests from this server")
        self.bot = bot

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        return require_manage(interaction)

    @app_commands.command(name="set", description="Turn song requests on or off and set limits")
    @app_commands.describe(
        enabled="Take requests for this station here",
        role="Only members with this role may request (optional)",
        anyone="Let everyone request again (clears the role)",
        cooldown_minutes="One request per person every this many minutes (default 10)",
        hourly_cap="At most this many requests an hour in this server (0 = no cap)",
        channel="List accepted requests in this channel (optional)",
        no_channel="Stop listing accepted requests",
    )
    @station_option()
    async def set_rules(
        self,
        interaction: Interaction,
        station: str | None = None,
        enabled: bool | None = None,
        role: discord.Role | None = None,
        anyone: bool = False,
        cooldown_minutes: app_commands.Range[int, 0, 1440] | None = None,
        hourly_cap: app_commands.Range[int, 0, 1000] | None = None,
        channel: Channel | None = None,
        no_channel: bool = False,
    ) -> None:
        chosen = resolve_station(interaction, station)
        state, rules = await self.bot.requests.configure(
            interaction.guild_id or 0,
            chosen,
            enabled=enabled,
            role_id=0 if anyone else (role.id if role else None),
            cooldown=None if cooldown_minutes is None else cooldown_minutes * 60.0,
            hourly_cap=hourly_cap,
            channel_id=0 if no_channel else (channel.id if channel else None),
        )
        text = request_embeds.settings_saved(chosen.name, state, rules)
        await interaction.response.send_message(text, ephemeral=True)


async def setup(bot: OnAirBot) -> None:
    onair = bot.tree.get_command("onair")
    if not isinstance(onair, app_commands.Group):
        raise RuntimeError("cogs.request_admin adds to /onair: load cogs.admin first")
    onair.add_command(RequestRules(bot))
