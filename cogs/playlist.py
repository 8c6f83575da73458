"""/playlist: the station's playlist, ten items a page."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import discord
from discord import app_commands

from bot.programme.timeline import Slot
from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.station import StationError, StationInfo
from bot.station.source import Feature
from bot.ui import Reply, answer
from bot.ui.playlist import PlaylistPages
from bot.ui.stations import reader_lang, resolve_station, skip_rules
from bot.util.i18n import N_

from .shapes import BotCog, Interaction, station_option

PER_PAGE = 10


class PlaylistCog(BotCog):
    @app_commands.command(
        name="playlist", description=N_("The station's playlist: played, playing and upcoming")
    )
    @station_option(N_("Which station"), needs=Feature.PLAYLIST)
    async def playlist(self, interaction: Interaction, station: str | None = None) -> None:
        chosen = resolve_station(interaction, station)
        self.bot.registry.require(chosen, Feature.PLAYLIST)  # NotOffered: one private line
        client = self.bot.registry.client(chosen)

        async def work() -> Reply:
            playlist = await client.playlist()
            info: StationInfo | None
            try:
                info = await client.info()
            except StationError:
                info = client.last_info  # marking the playing item is a nicety, not a must
            rows = station_embeds.playlist_rows(playlist, info, datetime.now(UTC), chosen.timezone)
            skip = await skip_rules(interaction, chosen)
            lang = reader_lang(interaction)

            def page_of(
                shown: Sequence[Slot], page: int, hidden: int, origin: int
            ) -> discord.Embed:
                return station_embeds.playlist_page(
                    list(shown),
                    page,
                    PER_PAGE,
                    chosen.name,
                    chosen.timezone,
                    hidden=hidden,
                    origin=origin,
                    lang=lang,
                )

            pages = PlaylistPages(
                rows, page_of, PER_PAGE, owner_id=interaction.user.id, skip=skip, lang=lang
            )
            first = pages.start_at(pages.playing_page())  # open on the page that is playing
            reply = Reply(embed=first, view=pages if pages.needed else None)
            reply.on_sent.append(pages.attach)
            return reply

        await answer(interaction, work())


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(PlaylistCog(bot))
