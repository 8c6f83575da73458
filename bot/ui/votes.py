"""What ``/onair vote`` checks and answers (the cog only forwards)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord

from ..errors import VOTE_NEED_CHANNEL, VOTE_NO_POLLS, BadInput
from ..util.text import safe
from .checks import check_announce_target
from .stations import reader_lang, resolve_station

if TYPE_CHECKING:
    from ..runtime.core import OnAirBot


def check_polls_allowed(channel: discord.TextChannel | discord.Thread) -> None:
    """BadInput when OnAir may not create polls there (Discord refuses them: 403)."""
    me = channel.guild.me
    if me is not None and not channel.permissions_for(me).send_polls:
        raise BadInput(VOTE_NO_POLLS, channel=channel.mention)


async def configure_vote(
    interaction: discord.Interaction[OnAirBot],
    channel: discord.TextChannel | discord.Thread | None,
    station: str | None,
    every: int,
    length: int,
    off: bool,
) -> None:
    bot = interaction.client
    guild_id = interaction.guild_id or 0
    lang = reader_lang(interaction)
    if off:
        removed = await bot.votes.turn_off(guild_id)
        text = (
            lang.t("🗳️ Song votes are off.")
            if removed
            else lang.t("Song votes were not on in this server.")
        )
        await interaction.response.send_message(text, ephemeral=True)
        return
    if channel is None:
        raise BadInput(VOTE_NEED_CHANNEL)
    chosen = resolve_station(interaction, station)
    check_announce_target(channel, None)
    check_polls_allowed(channel)
    vote = await bot.votes.configure(guild_id, channel.id, chosen, every, length)
    await bot.announcer.refresh()  # the station is watched: its plays give the songs to offer
    text = lang.t(
        "🗳️ Song votes are on: every {every} min in {channel}, a poll of songs **{station}** "
        "can play; each vote runs {length} min and its winner is requested.",
        every=lang.number(int(vote.every // 60)),
        channel=channel.mention,
        station=safe(chosen.name, limit=80),
        length=lang.number(int(vote.length // 60)),
    )
    await interaction.response.send_message(text, ephemeral=True)
