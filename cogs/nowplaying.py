"""/nowplaying: what is on air right now."""

from __future__ import annotations

from discord import app_commands

from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.songlinks import with_artwork
from bot.ui import Reply, answer
from bot.ui.likes import like_view
from bot.ui.songlinks import nowplaying_link, with_song_link
from bot.ui.stations import choose_station, personal, reader_lang, skip_rules
from bot.ui.voice import with_play_button
from bot.util.i18n import N_

from .shapes import BotCog, Interaction, anywhere, station_option


class NowPlayingCog(BotCog):
    @app_commands.command(name="nowplaying", description=N_("What is on air right now"))
    @station_option()
    @anywhere
    async def nowplaying(self, interaction: Interaction, station: str | None = None) -> None:
        async def work() -> Reply:
            chosen = await choose_station(interaction, station)
            skip = await skip_rules(interaction, chosen)
            snapshot = await self.bot.registry.snapshot(chosen)
            lang = reader_lang(interaction)
            link = await nowplaying_link(
                self.bot.links,
                self.bot.languages.song_links_shown,
                None if personal(interaction) else interaction.guild_id,
                snapshot.info,
                stale=snapshot.stale,
            )
            embed, view = station_embeds.nowplaying(
                with_artwork(snapshot.info, link),
                chosen.name,
                stale=snapshot.stale,
                skip=skip,
                lang=lang,
            )
            # A station that does not answer has nothing on air to like; likes count in the
            # servers OnAir is in (/top), so a personal answer has no ❤.
            if not snapshot.stale and not personal(interaction):
                view = await like_view(self.bot.likes, chosen.slug, snapshot.info, view, lang)
            view = with_song_link(view, link, lang)
            return Reply(embed=embed, view=with_play_button(interaction, chosen, view))

        await answer(interaction, work())


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(NowPlayingCog(bot))
