"""/onair settings: this server's time zone and default station."""

from __future__ import annotations

from discord import app_commands

from bot.render import admin_embeds
from bot.ui.stations import reader_lang, resolve_station, station_autocomplete
from bot.util.i18n import LANGUAGE_NAMES, N_

from ..shapes import Interaction
from .base import AdminCommands


class SettingsCommands(AdminCommands):
    @app_commands.command(
        name="settings",
        description=N_("This server's time zone, default station and language"),
    )
    @app_commands.autocomplete(default_station=station_autocomplete)
    @app_commands.describe(
        language=N_("The language of OnAir's posts here (default: the server's own)"),
        # /onair is near Discord's 4000 characters a command: the shortest clear words.
        links=N_('"Find this song"'),
    )
    @app_commands.choices(
        language=[app_commands.Choice(name=n, value=c) for c, n in LANGUAGE_NAMES.items()]
    )
    async def settings(
        self,
        interaction: Interaction,
        timezone: str | None = None,
        default_station: str | None = None,
        language: str | None = None,
        links: bool | None = None,
    ) -> None:
        slug = resolve_station(interaction, default_station).slug if default_station else None
        saved = await self.bot.onboarding.save_settings(
            interaction.guild_id or 0, timezone, slug, language, links
        )
        text = admin_embeds.settings_saved(saved, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)
