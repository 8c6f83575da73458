"""/request and /requests: listeners ask the station for a song and see the queue."""

from __future__ import annotations

import discord
from discord import app_commands

from bot.errors import OnAirError
from bot.render import request_embeds
from bot.runtime.core import OnAirBot
from bot.station.source import Feature
from bot.ui import Reply, answer
from bot.ui.choices import ChoiceLanes
from bot.ui.stations import reader_lang, resolve_station, stations_offering
from bot.util.i18n import N_

from .shapes import THIS_SERVERS, BotCog, station_option


class RequestsCog(BotCog):
    def __init__(self, bot: OnAirBot) -> None:
        super().__init__(bot)
        self.lanes = ChoiceLanes()

    async def song_autocomplete(
        self, interaction: discord.Interaction[OnAirBot], current: str
    ) -> list[app_commands.Choice[str]]:
        """The station's own search, shared by everyone typing the same (never raises: an
        autocomplete that fails shows nothing)."""
        try:
            chosen = resolve_station(interaction, getattr(interaction.namespace, "station", None))
        except OnAirError:
            return []
        user = interaction.user
        found = await self.bot.requests.suggestions(
            interaction.guild_id or 0,
            chosen,
            current,
            user_id=user.id,
            role_ids=[r.id for r in user.roles] if isinstance(user, discord.Member) else [],
        )
        choices = [app_commands.Choice(name=c.name, value=c.value) for c in found]
        await self.lanes.send(interaction, choices)  # a burst reuses warm connections
        return choices

    @app_commands.command(name="request", description=N_("Ask the station to play a song"))
    @app_commands.describe(
        song=N_("Type 3+ characters of a title or artist, then pick a song"),
        station=THIS_SERVERS,
        ping=N_("Ping me when it airs (default: just name me)"),
    )
    @app_commands.autocomplete(song=song_autocomplete, station=stations_offering(Feature.REQUESTS))
    @app_commands.guild_only()
    async def request(
        self,
        interaction: discord.Interaction[OnAirBot],
        song: app_commands.Range[str, 1, 100],
        station: str | None = None,
        ping: bool = False,
    ) -> None:
        chosen = resolve_station(interaction, station)
        user = interaction.user
        roles = [r.id for r in user.roles] if isinstance(user, discord.Member) else []

        async def work() -> Reply:
            accepted = await self.bot.requests.request(
                guild_id=interaction.guild_id or 0,
                station=chosen,
                user_id=user.id,
                display_name=user.display_name,
                role_ids=roles,
                typed=song,
                ping=ping,
            )
            text = request_embeds.accepted(
                accepted.title,
                chosen.name,
                ping=ping,
                listed=accepted.listed,
                lang=reader_lang(interaction),
            )
            return Reply(content=text, ephemeral=True)

        await answer(interaction, work(), ephemeral=True)

    @app_commands.command(name="requests", description=N_("The station's song requests and yours"))
    @station_option(needs=Feature.REQUESTS)
    @app_commands.guild_only()
    async def requests(
        self, interaction: discord.Interaction[OnAirBot], station: str | None = None
    ) -> None:
        chosen = resolve_station(interaction, station)

        async def work() -> Reply:
            overview = await self.bot.requests.overview(
                interaction.guild_id or 0, chosen, interaction.user.id
            )
            embed = request_embeds.overview_embed(chosen.name, overview, reader_lang(interaction))
            return Reply(embed=embed, ephemeral=True)

        await answer(interaction, work(), ephemeral=True)


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(RequestsCog(bot))
