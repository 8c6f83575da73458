"""/listen: every link to tune in."""

from __future__ import annotations

from discord import app_commands

from bot.catalog.registry import Snapshot
from bot.config import StationConfig
from bot.render import station_embeds, stream_choices
from bot.runtime.core import OnAirBot
from bot.ui import Reply
from bot.ui.stations import answer_with_snapshot, reader_lang
from bot.ui.streams import MoreStreams, with_more_streams
from bot.ui.voice import with_play_button
from bot.util.i18n import N_

from .shapes import BotCog, Interaction, anywhere, station_option


class ListenCog(BotCog):
    @app_commands.command(name="listen", description=N_("Every link to tune in"))
    @station_option()
    @anywhere
    async def listen(self, interaction: Interaction, station: str | None = None) -> None:
        def render(snapshot: Snapshot, chosen: StationConfig) -> Reply:
            lang = reader_lang(interaction)
            content, embed, view = station_embeds.listen_embed(snapshot.info, chosen.name, lang)
            choices = stream_choices.more_streams(snapshot.info.links, lang)
            view = with_more_streams(view, chosen.slug, choices, lang)
            view = with_play_button(interaction, chosen, view)
            return Reply(content=content, embed=embed, view=view)

        await answer_with_snapshot(interaction, station, render)


async def setup(bot: OnAirBot) -> None:
    bot.add_dynamic_items(MoreStreams)
    await bot.add_cog(ListenCog(bot))
