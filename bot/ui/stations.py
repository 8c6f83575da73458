"""The ``station`` option shared by every command: autocomplete and resolution."""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

import discord
from discord import app_commands

from ..catalog.registry import Snapshot
from ..errors import UnknownStation
from ..programme.jingles import NO_RULES, SkipRules
from ..station.source import Feature
from ..util.i18n import N_, Lang
from .reply import Reply, answer

if TYPE_CHECKING:
    from ..config import StationConfig
    from ..runtime.core import OnAirBot

_LOGGER = logging.getLogger("onair.stations")

NO_OPEN_STATION = N_("OnAir has no station to offer outside its servers.")
CHOOSE_ONCE = N_("Choose a station with `station`: I will remember it for next time.")


def registry_of(interaction: discord.Interaction[Any]) -> Any:
    bot: OnAirBot = interaction.client
    return bot.registry


def reader_lang(interaction: discord.Interaction[Any]) -> Lang:
    """The language of a private reply: the user's own Discord client language."""
    bot: OnAirBot = interaction.client
    return bot.translator.lang(interaction.locale)


def personal(interaction: discord.Interaction[Any]) -> bool:
    """OnAir answers the user, not a server it is installed in: a user install (in a DM, a group
    DM or a server OnAir is not in) or a DM with the bot. No server's own stations or settings
    apply there, only the owner's stations open to every server."""
    return not interaction.is_guild_integration()


def station_scope(interaction: discord.Interaction[Any]) -> int | None:
    """The guild whose stations an interaction sees; None where OnAir answers personally."""
    return None if personal(interaction) else interaction.guild_id


async def station_autocomplete(
    interaction: discord.Interaction[Any], current: str
) -> list[app_commands.Choice[str]]:
    stations = registry_of(interaction).visible(station_scope(interaction))
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
        stations = registry_of(interaction).offering(station_scope(interaction), feature)
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


def choice_name(station: StationConfig) -> str:
    """1-100 characters: Discord refuses the whole list for one empty or blank name."""
    return " ".join(station.name.split())[:100] or station.slug[:100]


def resolve_station(interaction: discord.Interaction[Any], name: str | None) -> StationConfig:
    station: StationConfig = registry_of(interaction).resolve(station_scope(interaction), name)
    return station


async def choose_station(interaction: discord.Interaction[Any], name: str | None) -> StationConfig:
    """The station a listener command is about. In a server: as ``resolve_station``. Where OnAir
    answers personally: the one named (remembered for this user), else the one this user chose
    last, else the owner's default or only open station."""
    if not personal(interaction):
        return resolve_station(interaction, name)
    bot: OnAirBot = interaction.client
    user_id = interaction.user.id
    if name:
        chosen = resolve_station(interaction, name)
        try:
            await bot.storage.set_user_station(user_id, chosen.slug, now=time.time())
        except Exception as error:  # the answer matters more than remembering it
            _LOGGER.warning("could not remember a user's station (%s)", type(error).__name__)
        return chosen
    stations: list[StationConfig] = registry_of(interaction).visible(None)
    if not stations:
        raise UnknownStation(NO_OPEN_STATION)
    try:
        remembered = await bot.storage.user_station(user_id)
    except Exception as error:
        _LOGGER.warning("could not read a user's station (%s)", type(error).__name__)
        remembered = None
    known = next((s for s in stations if s.slug == remembered), None)
    if known is not None:
        return known
    try:
        return resolve_station(interaction, None)
    except UnknownStation:
        raise UnknownStation(CHOOSE_ONCE) from None


async def answer_with_snapshot(
    interaction: discord.Interaction[Any],
    station: str | None,
    render: Callable[[Snapshot, StationConfig], Reply | Awaitable[Reply]],
) -> None:
    """Choose the station, fetch its (possibly last known) info, render and answer once."""

    async def work() -> Reply:
        chosen = await choose_station(interaction, station)
        snapshot = await registry_of(interaction).snapshot(chosen)
        reply = render(snapshot, chosen)
        return await reply if inspect.isawaitable(reply) else reply

    await answer(interaction, work())


async def skip_rules(interaction: discord.Interaction[Any], station: StationConfig) -> SkipRules:
    """The skip settings of this server's announcements of ``station``: what it counts as a
    jingle besides short items (left out of "Next" and the playlist)."""
    if station_scope(interaction) is None:
        return NO_RULES
    bot: OnAirBot = interaction.client
    subs = await bot.storage.subscriptions(station.slug, guild_id=interaction.guild_id)
    return SkipRules.of(subs)
