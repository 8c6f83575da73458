"""/onair station add, remove and list: the stations this server uses."""

from __future__ import annotations

from discord import app_commands

from bot.render import admin_embeds
from bot.station.source import DEFAULT_KIND, KIND_NAMES
from bot.ui.station_key import StationKeyModal
from bot.ui.stations import reader_lang, resolve_station, station_autocomplete
from bot.util.i18n import N_

from ..shapes import Interaction
from .base import AdminCommands


class StationCommands(AdminCommands):
    station = app_commands.Group(name="station", description=N_("Stations this server uses"))

    @station.command(
        name="add", description=N_("Add this server's station (the key is asked for privately)")
    )
    @app_commands.describe(
        name=N_("Display name"),
        base_url=N_("Server, like https://c5.radioboss.fm"),
        station_id=N_("Number, shortcode or mount"),
        kind=N_("Host (default RadioBOSS)"),
        timezone=N_("Time zone, like Europe/Berlin (default UTC)"),
    )
    @app_commands.choices(
        kind=[app_commands.Choice(name=name, value=kind) for kind, name in KIND_NAMES.items()]
    )
    async def station_add(
        self,
        interaction: Interaction,
        name: app_commands.Range[str, 1, 80],
        base_url: app_commands.Range[str, 8, 200],
        station_id: app_commands.Range[str, 1, 200],
        kind: str = DEFAULT_KIND,
        timezone: str = "UTC",
    ) -> None:
        # UrlRefused or BadInput: a clear ephemeral reply, before the key is asked for.
        request = self.bot.onboarding.check_request(
            interaction.guild_id or 0, name, base_url, station_id, timezone, kind
        )
        modal = StationKeyModal(
            self.bot.onboarding, request, user_id=interaction.user.id, lang=reader_lang(interaction)
        )
        await interaction.response.send_modal(modal)

    @station.command(name="remove", description=N_("Remove a station this server added"))
    @app_commands.autocomplete(station=station_autocomplete)
    async def station_remove(self, interaction: Interaction, station: str) -> None:
        chosen = resolve_station(interaction, station)
        await self.bot.onboarding.remove(interaction.guild_id or 0, chosen)
        await self.bot.announcer.refresh()
        await interaction.response.send_message(
            admin_embeds.removed(chosen, reader_lang(interaction)), ephemeral=True
        )

    @station.command(name="list", description=N_("Stations this server can use"))
    async def station_list(self, interaction: Interaction) -> None:
        stations = self.bot.registry.visible(interaction.guild_id)
        embed = admin_embeds.station_list(stations, reader_lang(interaction))
        await interaction.response.send_message(embed=embed, ephemeral=True)
