"""/onair voice and /onair events: playing in voice, and live shows as server events."""

from __future__ import annotations

from discord import app_commands

from bot.errors import EVENTS_NO_PERMISSION, NOT_HERE, BadInput
from bot.render import admin_embeds
from bot.shows import may_make_events
from bot.ui.stations import reader_lang, resolve_station, station_autocomplete
from bot.ui.voice import configure_voice, voice_channel_autocomplete
from bot.util.i18n import N_

from ..shapes import Interaction, station_option
from .base import AdminCommands


class VoiceCommands(AdminCommands):
    @app_commands.command(
        name="voice", description=N_("Voice: 24/7 home channel, empty leave, station, stream")
    )
    @app_commands.describe(
        channel=N_("Voice or stage channel to stay in 24/7, or none"),
        leave_when_empty=N_("Seconds to stay in a channel nobody listens in (0 = stay)"),
        station=N_("Station to play (turns voice on for a station this server added)"),
        stream_url=N_("Stream address of that station (one this server added), or default"),
        status=N_("Show what plays as the voice channel's status (on by default)"),
    )
    @app_commands.autocomplete(channel=voice_channel_autocomplete, station=station_autocomplete)
    async def voice(
        self,
        interaction: Interaction,
        channel: app_commands.Range[str, 1, 120] | None = None,
        leave_when_empty: app_commands.Range[int, 0, 86400] | None = None,
        station: str | None = None,
        stream_url: app_commands.Range[str, 1, 2048] | None = None,
        status: bool | None = None,
    ) -> None:
        await configure_voice(interaction, channel, leave_when_empty, station, stream_url, status)

    # Live shows --------------------------------------------------------------------------

    @app_commands.command(name="events", description=N_("A server event for each live show"))
    @app_commands.describe(enabled=N_("Make an event for each live show of the station (or stop)"))
    @station_option(N_("Which station"))
    async def events(
        self, interaction: Interaction, enabled: bool, station: str | None = None
    ) -> None:
        chosen = resolve_station(interaction, station)
        guild = interaction.guild
        if guild is None:
            raise BadInput(NOT_HERE)
        if enabled and not may_make_events(guild):
            raise BadInput(EVENTS_NO_PERMISSION)
        changed = await self.bot.shows.set_events(guild.id, chosen.slug, on=enabled)
        text = admin_embeds.show_events(chosen, enabled, changed, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)
