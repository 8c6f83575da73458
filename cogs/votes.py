"""/songvote: song votes with Discord's own polls, set up by the server's admins.

A command of its own: ``/onair`` is at Discord's 4,000-character limit for one command (its
names and descriptions with every subcommand's), so one more subcommand would not sync."""

from __future__ import annotations

from discord import app_commands

from bot.runtime.core import OnAirBot
from bot.ui.votes import configure_vote
from bot.util.i18n import N_

from .shapes import BotCog, Channel, Interaction, station_option


class VotesCog(BotCog):
    @app_commands.command(
        name="songvote", description=N_("Let listeners vote on the next song with a poll")
    )
    @app_commands.guild_only()
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.describe(
        channel=N_("Text channel or thread for the polls"),
        every=N_("Minutes between two votes"),
        length=N_("Minutes a vote runs"),
        off=N_("Stop the song votes"),
    )
    @station_option(N_("Which station"))
    async def songvote(
        self,
        interaction: Interaction,
        channel: Channel | None = None,
        every: app_commands.Range[int, 10, 1440] = 30,
        length: app_commands.Range[int, 1, 720] = 10,
        station: str | None = None,
        off: bool = False,
    ) -> None:
        await configure_vote(interaction, channel, station, every, length, off)


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(VotesCog(bot))
