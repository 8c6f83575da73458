"""The ``station`` option shared by every command: autocomplete and resolution."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from ..catalog.registry import Snapshot
from ..programme.jingles import NO_RULES, SkipRules
from ..station.hosts import SOURCES
from ..station.source import KIND_NAMES, Feature
from ..util.i18n import Lang
from .reply import Reply, answer

if TYPE_CHECKING:
    from ..config import StationConfig
    from ..runtime.core import OnAirBot


def registry_of(interaction: discord.Interaction[Any]) -> Any:
    bot: OnAirBot = interaction.client
    return bot.registry


def reader_lang(interaction: discord.Interaction[Any]) -> Lang:
    """The language of a private reply: the user's own Discord client language."""
    bot: OnAirBot = interaction.client
    return bot.translator.lang(interaction.locale)


async def station_autocomplete(
    interaction: discord.Interaction[Any], current: str
) -> list[app_commands.Choice[str]]:
    stations = registry_of(interaction).visible(interaction.guild_id)
    return station_choices(stations, current)


Autocomplete = Callable[
    [discord.Interaction[Any], str], Coroutine[Any, Any, list[app_commands.Choice[str]]]
]


def stations_offering(feature: Feature) -> Autocomplete:
    """The ``station`` autocomplete of a command that needs ``feature``: stations whose host
    lacks it are not offered."""

    async def autocomplete(
        interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        stations = registry_of(interaction).offering(interaction.guild_id, feature)
        return station_choices(stations, current)

    return autocomplete


def station_choices(stations: list[StationConfig], current: str) -> list[app_commands.Choice[str]]:
    """Up to 25 of ``stations`` whose name or slug holds what is typed."""
    needle = current.casefold().strip()
    choices = [
        app_commands.Choice(name=choice_name(s), value=s.slug)
        for s in stations
        if not needle or needle in s.name.casefold() or needle in s.slug
    ]
    return choices[:25]


async def kind_autocomplete(
    interaction: discord.Interaction[Any], current: str
) -> list[app_commands.Choice[str]]:
    """The host kinds this OnAir reads, by their product names, RadioBOSS Cloud first (an
    autocomplete, not choices: the /onair group is near Discord's size limit for a command)."""
    needle = current.casefold().strip()
    return [
        app_commands.Choice(name=name, value=kind)
        for kind, name in KIND_NAMES.items()
        if kind in SOURCES and (needle in name.casefold() or needle in kind)
    ]


def choice_name(station: StationConfig) -> str:
    """1-100 characters: Discord refuses the whole list for one empty or blank name."""
    return " ".join(station.name.split())[:100] or station.slug[:100]


def resolve_station(interaction: discord.Interaction[Any], name: str | None) -> StationConfig:
    station: StationConfig = registry_of(interaction).resolve(interaction.guild_id, name)
    return station


async def answer_with_snapshot(
    interaction: discord.Interaction[Any],
    station: str | None,
    render: Callable[[Snapshot, StationConfig], Reply | Awaitable[Reply]],
) -> None:
    """Resolve the station, fetch its (possibly last known) info, render and answer once."""
    chosen = resolve_station(interaction, station)

    async def work() -> Reply:
        snapshot = await registry_of(interaction).snapshot(chosen)
        reply = render(snapshot, chosen)
        return await reply if inspect.isawaitable(reply) else reply

    await answer(interaction, work())


async def skip_rules(interaction: discord.Interaction[Any], station: StationConfig) -> SkipRules:
    """The skip settings of this server's announcements of ``station``: what it counts as a
    jingle besides short items (left out of "Next" and the playlist)."""
    if interaction.guild_id is None:
        return NO_RULES
    bot: OnAirBot = interaction.client
    subs = await bot.storage.subscriptions(station.slug, guild_id=interaction.guild_id)
    return SkipRules.of(subs)
