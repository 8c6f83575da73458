"""/recent: recently played tracks."""

from __future__ import annotations

from datetime import UTC, datetime

from discord import app_commands

from bot.catalog.registry import Snapshot
from bot.config import StationConfig
from bot.render import station_embeds
from bot.runtime.core import OnAirBot
from bot.station.errors import NotOffered
from bot.station.source import KIND_NAMES, Feature
from bot.ui import Reply, answer
from bot.ui.stations import (
    answer_with_snapshot,
    reader_lang,
    resolve_station,
    skip_rules,
)
from bot.util.i18n import N_
from bot.util.text import safe

from .shapes import BotCog, Interaction, anywhere, station_option

# Above the plays OnAir recorded itself, for a host that keeps no list of its own.
RECORDED_BY_ONAIR = N_("As OnAir heard them: {host} servers keep no list of recent plays.")


class RecentCog(BotCog):
    @app_commands.command(name="recent", description=N_("Recently played tracks"))
    @app_commands.describe(count=N_("How many (1-20, default 10)"))
    @station_option()
    @anywhere
    async def recent(
        self,
        interaction: Interaction,
        count: app_commands.Range[int, 1, 20] = 10,
        station: str | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        if not self.bot.registry.offers(chosen, Feature.RECENT):
            await answer(interaction, self._recorded(interaction, chosen, count))
            return

        async def render(snapshot: Snapshot, chosen: StationConfig) -> Reply:
            skip = await skip_rules(interaction, chosen)  # jingles left out, as in "Next"
            info = snapshot.info
            lang = reader_lang(interaction)
            embed = station_embeds.recent(info, chosen.name, count, skip=skip, lang=lang)
            return Reply(embed=embed)

        await answer_with_snapshot(interaction, station, render)

    async def _recorded(self, interaction: Interaction, chosen: StationConfig, count: int) -> Reply:
        """The plays OnAir recorded of a station whose host keeps no list (NotOffered, one
        private line, while it has recorded none)."""
        kind = self.bot.registry.client(chosen).kind
        entries = await self.bot.storage.play_at(chosen.slug, datetime.now(UTC), count)
        if not entries:
            raise NotOffered(what=Feature.RECENT.value, kind=kind)
        lang = reader_lang(interaction)
        embed = station_embeds.history_embed(
            [(e.started, e.title, e.artist) for e in entries],
            lang.t("Recently played on {name}", name=safe(chosen.name, limit=80)),
            datetime.now(UTC),
            since=await self.bot.storage.history_since(chosen.slug),
            lead=("-# " + lang.t(RECORDED_BY_ONAIR, host=KIND_NAMES.get(kind, kind)),),
            lang=lang,
        )
        return Reply(embed=embed)


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(RecentCog(bot))
