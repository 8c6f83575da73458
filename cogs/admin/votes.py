"""/onair vote: song votes with Discord's own polls, set up by the server's admins."""

from __future__ import annotations

from discord import app_commands

from bot.ui.votes import configure_vote
from bot.util.i18n import N_
from bot.votes.service import EVERY_MINUTES, LENGTH_MINUTES

from ..shapes import Channel, Interaction, station_option
from .base import AdminCommands


class VoteCommands(AdminCommands):
    @app_commands.command(
        name="vote", description=N_("Let listeners vote on the next song with a poll")
    )
    @app_commands.describe(
        channel=N_("Text channel or thread for the polls"),
        every=N_("Minutes between two votes"),
        length=N_("Minutes a vote runs (2 to 720)"),
        off=N_("Stop the song votes"),
    )
    @station_option(N_("Which station"))
    async def vote(
        self,
        interaction: Interaction,
        channel: Channel | None = None,
        every: app_commands.Range[int, EVERY_MINUTES[0], EVERY_MINUTES[1]] = 30,
        length: app_commands.Range[int, LENGTH_MINUTES[0], LENGTH_MINUTES[1]] = 10,
        station: str | None = None,
        off: bool = False,
    ) -> None:
        await configure_vote(interaction, channel, station, every, length, off)
