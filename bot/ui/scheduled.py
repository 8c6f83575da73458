"""What ``/onair alerts`` and ``/onair recap`` check and answer (the cog only forwards)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from ..config.schema import WEEKDAYS
from ..errors import ALERTS_NEED_CHANNEL, CANNOT_MENTION, RECAP_NEED_CHANNEL, BadInput
from ..render import admin_embeds
from ..storage import AlertSubscription
from .checks import check_announce_target
from .stations import reader_lang, resolve_station

if TYPE_CHECKING:
    from ..runtime.core import OnAirBot


def check_mentionable(channel: discord.TextChannel | discord.Thread, role: discord.Role) -> None:
    """BadInput when a ping of ``role`` would not notify anyone: the role is not mentionable
    and OnAir may not mention every role in that channel."""
    if role.mentionable:
        return
    me = channel.guild.me
    if me is not None and channel.permissions_for(me).mention_everyone:
        return
    raise BadInput(CANNOT_MENTION, role=role.mention, channel=channel.mention)


async def configure_alerts(
    interaction: discord.Interaction[OnAirBot],
    channel: discord.TextChannel | discord.Thread | None,
    role: discord.Role | None,
    station: str | None,
    off: bool,
) -> None:
    bot = interaction.client
    guild_id = interaction.guild_id or 0
    chosen = resolve_station(interaction, station)
    if off:
        removed = await bot.alerts.unsubscribe(guild_id, chosen.slug)
        await bot.announcer.refresh()
        text = admin_embeds.alerts_off(chosen, removed, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)
        return
    if channel is None:
        raise BadInput(ALERTS_NEED_CHANNEL)
    check_announce_target(channel, role)
    if role is not None:
        check_mentionable(channel, role)
    sub = AlertSubscription(guild_id, chosen.slug, channel.id, role.id if role else 0)
    await bot.alerts.subscribe(sub)
    await bot.announcer.refresh()
    text = admin_embeds.alerts_on(
        chosen,
        channel.mention,
        role.mention if role else None,
        bot.settings.offline_after,
        reader_lang(interaction),
    )
    await interaction.response.send_message(text, ephemeral=True)


async def configure_recap(
    interaction: discord.Interaction[OnAirBot],
    channel: discord.TextChannel | discord.Thread | None,
    day: str,
    hour: int,
    station: str | None,
    off: bool,
) -> None:
    bot = interaction.client
    guild_id = interaction.guild_id or 0
    if off:
        removed = await bot.storage.remove_recap(guild_id)
        await bot.announcer.refresh()
        text = admin_embeds.recap_off(removed, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)
        return
    if channel is None:
        raise BadInput(RECAP_NEED_CHANNEL)
    chosen = resolve_station(interaction, station)
    check_announce_target(channel, None)
    weekday = WEEKDAYS.index(day)
    await bot.recaps.configure(guild_id, channel.id, chosen.slug, weekday, hour)
    await bot.announcer.refresh()
    zone = (await bot.storage.guild_settings(guild_id)).timezone
    text = admin_embeds.recap_on(
        chosen, channel.mention, weekday, hour, zone, reader_lang(interaction)
    )
    await interaction.response.send_message(text, ephemeral=True)
