"""What the commands' signatures share, written once: the interaction, a text channel option,
the ``station`` option (described and autocompleted from the server's stations alike) and where
a command may be used."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeAlias, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from bot.runtime.core import OnAirBot
from bot.station.source import Feature
from bot.ui.stations import station_autocomplete, stations_offering
from bot.util.i18n import N_

Interaction: TypeAlias = discord.Interaction[OnAirBot]
Channel: TypeAlias = discord.TextChannel | discord.Thread
THIS_SERVERS = N_("Which station (default: this server's)")

T = TypeVar("T")


class BotCog(commands.Cog):
    """A cog that keeps the bot whose services its commands call."""

    def __init__(self, bot: OnAirBot) -> None:
        self.bot = bot


def anywhere(callback: T) -> T:
    """Offered wherever a listener is, not only in the servers OnAir is in: installed to a
    server or to the user's own account, in a server, a DM with OnAir, or any other DM or group
    DM. Every other command keeps the tree's guild-only default (``bot.runtime.core``)."""
    installed = app_commands.allowed_installs(guilds=True, users=True)(callback)
    return app_commands.allowed_contexts(guilds=True, dms=True, private_channels=True)(installed)


def station_option(
    description: str = THIS_SERVERS, *, needs: Feature | None = None
) -> Callable[[T], T]:
    """The ``station`` option of a command: its description, and the server's stations offered
    as the admin or listener types (only those whose host has ``needs``)."""
    complete = station_autocomplete if needs is None else stations_offering(needs)

    def decorate(callback: T) -> T:
        described = app_commands.describe(station=description)(callback)
        return app_commands.autocomplete(station=complete)(described)

    return decorate
