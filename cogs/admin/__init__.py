"""/onair: server admins set up stations and announcements without touching the config file.

One module per /onair group; ``AdminCog`` below is the one place that assembles them into the
single ``/onair`` command Discord sees. Discord lists the subcommands of the LAST base first
(discord.py collects them along the reversed MRO): a new group goes at the front of the bases to
be listed last, so the command tree of the groups already there stays as it was.
"""

from __future__ import annotations

from discord import app_commands
from discord.ext import commands

from bot.runtime.core import OnAirBot
from bot.util.i18n import N_

from .alerts import AlertCommands
from .announcements import AnnouncementCommands
from .requests import RequestCommands
from .settings import SettingsCommands
from .stations import StationCommands
from .templates import TemplateCommands
from .voice import VoiceCommands
from .votes import VoteCommands


@app_commands.guild_only()
@app_commands.default_permissions(manage_guild=True)
class AdminCog(
    VoteCommands,
    RequestCommands,
    VoiceCommands,
    AlertCommands,
    AnnouncementCommands,
    SettingsCommands,
    TemplateCommands,
    StationCommands,
    commands.GroupCog,
    group_name="onair",
    group_description=N_("Set up OnAir for this server"),
):
    """``/onair``: the groups above, one command tree."""


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(AdminCog(bot))
