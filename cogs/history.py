"""/history: what played at a time, or when a song last played."""

from __future__ import annotations

from datetime import datetime

from discord import app_commands

from bot.errors import BadInput
from bot.inputs.moments import parse_moment
from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.ui import Reply, answer
from bot.ui.stations import reader_lang, resolve_station
from bot.util.i18n import N_
from bot.util.text import safe

from .shapes import BotCog, Interaction, station_option


class HistoryCog(BotCog):
    @app_commands.command(
        name="history", description=N_("What played at a time, or search the history")
    )
    @app_commands.describe(
        at=N_('A time like "14:32", "yesterday 22:10" or "2026-11-20 14:32" (station time)'),
        search=N_("Words from a title, artist or album"),
    )
    @station_option(N_("Which station"))
    async def history(
        self,
        interaction: Interaction,
        at: str | None = None,
        search: app_commands.Range[str, 1, 100] | None = None,
        station: str | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        lang = reader_lang(interaction)
        now = datetime.now(chosen.timezone)
        moment = parse_moment(at, now, day_first=lang.reads_day_first) if at else None
        if moment is None and not search:
            moment = now
        if moment is not None and search:
            raise BadInput(N_("Use either `at` or `search`, not both."))
        storage = self.bot.storage

        async def work() -> Reply:
            since = await storage.history_since(chosen.slug)
            name = safe(chosen.name, limit=80)
            lead: tuple[str, ...] = ()
            if moment is not None:
                entries = await storage.play_at(chosen.slug, moment)
                # A title shows no Discord timestamp: the moment is the first line instead.
                heading = lang.t("What played on {name}", name=name)
                lead = (station_embeds.moment_line(moment, lang),)
            else:
                entries = await storage.search_plays(chosen.slug, search or "")
                heading = lang.t(
                    'Plays matching "{words}" ({name})', words=safe(search, limit=80), name=name
                )
            rows = [(e.started, e.title, e.artist) for e in entries]
            embed = station_embeds.history_embed(
                rows,
                heading,
                moment or now,
                since=since,
                mark_first=moment is not None,
                lead=lead,
                lang=lang,
            )
            return Reply(embed=embed)

        await answer(interaction, work())


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(HistoryCog(bot))
