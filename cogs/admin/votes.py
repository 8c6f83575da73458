"""/onair vote: song votes with Discord's own polls, set up by the server's admins."""

from __future__ import annotations

from discord import app_commands

from bot.ui.votes import configure_vote
from bot.util.i18n import N_

from ..shapes import Channel, Interaction, station_option
from .base import AdminCommands


class VoteCommands(AdminCommands):
    @app_commands.command(
        name="vote", description=N_("Let listeners vote on the next song with a poll")
    )
    @app_commands.describe(
        channel=N_("Text channel or thread for the polls"),
        every=N_("Minutes between two votes"),
        length=N_("Minutes a vote runs"),
        off=N_("Stop the song votes"),
    )
    @station_option(N_("Which station"))
    async def vote(
        self,
        interaction: Interaction,
        channel: Channel | None = None,
        every: app_commands.Range[int, 10, 1440] = 30,
        length: app_commands.Range[int, 1, 720] = 10,
        station: str | None = None,
        off: bool = False,
    ) -> None:
        await configure_vote(interaction, channel, station, every, length, off)
