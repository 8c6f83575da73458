"""/join and /leave: play a station in the voice or stage channel you are in."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.errors import NOT_IN_VOICE, VoiceRefused
from bot.render.voice_text import left_text
from bot.runtime.core import OnAirBot
from bot.ui import Reply, answer
from bot.ui.stations import reader_lang
from bot.ui.voice import PlayHereButton, join_here
from bot.util.i18n import N_
from bot.voice.service import GOODBYE

from .shapes import BotCog, Interaction, station_option


class VoiceCog(BotCog):
    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(PlayHereButton)
        await self.bot.voice.close(within=self.bot.goodbye_grace(GOODBYE))

    @app_commands.command(name="join", description=N_("Play the station in your voice channel"))
    @station_option()
    @app_commands.guild_only()
    async def join(self, interaction: Interaction, station: str | None = None) -> None:
        await join_here(interaction, station)

    @app_commands.command(name="leave", description=N_("Stop playing and leave the voice channel"))
    @app_commands.guild_only()
    async def leave(self, interaction: Interaction) -> None:
        guild_id = interaction.guild_id or 0
        if not self.bot.voice.present(guild_id):
            raise VoiceRefused(NOT_IN_VOICE)

        async def work() -> Reply:
            await self.bot.voice.leave(guild_id)
            home = self.bot.voice.guild_voice(guild_id).home_channel
            admin = interaction.permissions.manage_guild  # who can change the home channel
            text = left_text(home, admin=admin, lang=reader_lang(interaction))
            return Reply(content=text, ephemeral=True)

        await answer(interaction, work(), ephemeral=True)

    @commands.Cog.listener()
    async def on_ready(self) -> None:
        self.bot.voice.start()
        await self.bot.voice.rejoin_stored()

    @commands.Cog.listener()
    async def on_shard_ready(self, shard_id: int) -> None:
        # A shard that identified again (a new gateway session) rejoins its guilds' channels.
        if self.bot.is_ready():
            await self.bot.voice.rejoin_stored()

    @commands.Cog.listener()
    async def on_voice_state_update(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        self.bot.voice.voice_state_changed(member, before, after)


async def setup(bot: OnAirBot) -> None:
    bot.add_dynamic_items(PlayHereButton)
    await bot.add_cog(VoiceCog(bot))
