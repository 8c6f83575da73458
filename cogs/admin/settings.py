"""/onair settings: this server's time zone and default station."""

from __future__ import annotations

from discord import app_commands

from bot.render import admin_embeds
from bot.ui.stations import resolve_station, station_autocomplete

from ..shapes import Interaction
from .base import AdminCommands


class SettingsCommands(AdminCommands):
    @app_commands.command(
        name="settings", description="This server's time zone and default station"
    )
    @app_commands.autocomplete(default_station=station_autocomplete)
    async def settings(
        self,
        interaction: Interaction,
        timezone: str | None = None,
        default_station: str | None = None,
    ) -> None:
        slug = resolve_station(interaction, default_station).slug if default_station else None
        saved = await self.bot.onboarding.save_settings(interaction.guild_id or 0, timezone, slug)
        await interaction.response.send_message(admin_embeds.settings_saved(saved), ephemeral=True)
