"""/onair requests set: a guild's song-request rules."""

from __future__ import annotations

import discord
from discord import app_commands

from bot.render import request_embeds
from bot.ui.stations import reader_lang, resolve_station
from bot.util.i18n import N_

from ..shapes import Channel, Interaction, station_option
from .base import AdminCommands


class RequestCommands(AdminCommands):
    requests = app_commands.Group(name="requests", description=N_("Song requests from this server"))

    @requests.command(name="set", description=N_("Turn song requests on or off and set limits"))
    @app_commands.describe(
        enabled=N_("Take requests for this station here"),
        role=N_("Only members with this role may request (optional)"),
        anyone=N_("Let everyone request again (clears the role)"),
        cooldown_minutes=N_("One request per person every this many minutes (default 10)"),
        hourly_cap=N_("At most this many requests an hour in this server (0 = no cap)"),
        channel=N_("List accepted requests in this channel (optional)"),
        no_channel=N_("Stop listing accepted requests"),
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
        text = request_embeds.settings_saved(chosen.name, state, rules, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)
