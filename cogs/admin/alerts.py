"""/onair alerts and /onair recap: posts OnAir makes on its own in a channel."""

from __future__ import annotations

from typing import Literal

import discord
from discord import app_commands

from bot.ui.scheduled import configure_alerts, configure_recap
from bot.util.i18n import N_

from ..shapes import Channel, Interaction, station_option
from .base import AdminCommands

Weekday = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class AlertCommands(AdminCommands):
    @app_commands.command(
        name="alerts",
        description=N_("Post when a live show starts or ends, and when the station is down"),
    )
    @app_commands.describe(
        channel=N_("Text channel or thread for the alerts"),
        role=N_("Role to ping when a live show starts (optional)"),
        off=N_("Stop the alerts of this station"),
    )
    @station_option(N_("Which station"))
    async def alerts(
        self,
        interaction: Interaction,
        channel: Channel | None = None,
        role: discord.Role | None = None,
        station: str | None = None,
        off: bool = False,
    ) -> None:
        await configure_alerts(interaction, channel, role, station, off)

    @app_commands.command(
        name="recap", description=N_("A weekly recap of the station in a channel")
    )
    @app_commands.describe(
        channel=N_("Text channel or thread for the recap"),
        day=N_("Day of the week (this server's time zone)"),
        hour=N_("Hour of that day, 0-23"),
        off=N_("Stop the weekly recap"),
    )
    @station_option(N_("Which station"))
    async def recap(
        self,
        interaction: Interaction,
        channel: Channel | None = None,
        day: Weekday = "Monday",
        hour: app_commands.Range[int, 0, 23] = 9,
        station: str | None = None,
        off: bool = False,
    ) -> None:
        await configure_recap(interaction, channel, day, hour, station, off)
