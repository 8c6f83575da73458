"""/onair announce, unannounce, resume, preview and status: where plays are announced."""

from __future__ import annotations

from typing import Literal

import discord
from discord import app_commands

from bot.guard.patterns import compile_pattern
from bot.render import admin_embeds, station_embeds
from bot.shows import may_make_events
from bot.storage import Subscription
from bot.ui import Reply, answer
from bot.ui.checks import check_announce_target
from bot.ui.stations import reader_lang, resolve_station, station_autocomplete
from bot.util.i18n import N_

from ..shapes import Channel, Interaction, station_option
from .base import AdminCommands


class AnnouncementCommands(AdminCommands):
    @app_commands.command(name="announce", description=N_("Announce every new track in a channel"))
    @app_commands.describe(
        channel=N_("Text channel or thread"),
        mode=N_("post: a message per track; card: one message kept up to date"),
        style=N_(
            "compact: small artwork (a smaller card); full: big artwork "
            "(default: compact posts, full cards)"
        ),
        role=N_("Role to ping with each announcement (optional)"),
        min_seconds=N_("Skip plays shorter than this (jingles); 0 = off"),
        skip_pattern=N_("Skip titles or files matching this regular expression"),
        announce_live=N_("Announce live shows"),
    )
    @station_option(N_("Which station"))
    async def announce(
        self,
        interaction: Interaction,
        channel: Channel,
        station: str | None = None,
        mode: Literal["post", "card"] = "post",
        role: discord.Role | None = None,
        min_seconds: app_commands.Range[float, 0, 3600] = 0.0,
        skip_pattern: app_commands.Range[str, 1, 200] | None = None,
        announce_live: bool = True,
        style: Literal["compact", "full"] | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        if skip_pattern:
            compile_pattern(skip_pattern)  # RE2: refuses what it cannot run in linear time
        check_announce_target(channel, role)
        await self.bot.announcer.subscribe(
            Subscription(
                0,
                guild_id=interaction.guild_id or 0,
                channel_id=channel.id,
                station=chosen.slug,
                mode=mode,
                mention_role=role.id if role else 0,
                min_seconds=float(min_seconds),
                skip_pattern=skip_pattern or "",
                announce_live=announce_live,
                style=style or "",
            )
        )
        text = admin_embeds.announcing(
            chosen, channel.mention, mode, style, reader_lang(interaction)
        )
        await interaction.response.send_message(text, ephemeral=True)

    @app_commands.command(name="unannounce", description=N_("Stop announcements in a channel"))
    @app_commands.autocomplete(station=station_autocomplete)
    async def unannounce(
        self, interaction: Interaction, channel: Channel, station: str | None = None
    ) -> None:
        slug = resolve_station(interaction, station).slug if station else None
        removed = await self.bot.announcer.unsubscribe(interaction.guild_id or 0, channel.id, slug)
        text = admin_embeds.unannounced(channel.mention, removed, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)

    @app_commands.command(name="resume", description=N_("Resume paused announcements in a channel"))
    async def resume(self, interaction: Interaction, channel: Channel) -> None:
        count = await self.bot.announcer.resume_channel(interaction.guild_id or 0, channel.id)
        text = admin_embeds.resumed(channel.mention, count, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)

    @app_commands.command(
        name="preview", description=N_("The announcement for the track on air now")
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def preview(self, interaction: Interaction, station: str | None = None) -> None:
        chosen = resolve_station(interaction, station)
        lang = reader_lang(interaction)

        async def work() -> Reply:
            snapshot = await self.bot.registry.snapshot(chosen)
            play = snapshot.info.current_play()
            if play is None:
                return Reply(content=lang.t(admin_embeds.NOTHING_ON_AIR), ephemeral=True)
            # The post as the guild will see it: in the guild's language, not the admin's.
            post_lang = await self.bot.guild_lang(interaction.guild_id or 0)
            embed, view = station_embeds.announcement(
                snapshot.info, play, chosen.name, lang=post_lang
            )
            return Reply(embed=embed, view=view, ephemeral=True)

        await answer(interaction, work())

    @app_commands.command(name="status", description=N_("Polling and announcement status"))
    async def status(self, interaction: Interaction) -> None:
        guild_id = interaction.guild_id
        guild = interaction.guild
        votes = await self.bot.votes.status(guild_id or 0)
        embed = admin_embeds.status(
            self.bot.registry.visible(guild_id),
            self.bot.announcer.status_for,
            await self.bot.storage.subscriptions(guild_id=guild_id),
            await self.bot.announcer.recent_deliveries(guild_id or 0),
            await self.bot.storage.alert_subscriptions(guild_id=guild_id or 0),
            next(iter(await self.bot.storage.recaps(guild_id or 0)), None),
            self.bot.voice.status(guild_id or 0),
            reader_lang(interaction),
            event_stations=await self.bot.shows.event_stations(guild_id or 0),
            may_make_events=guild is None or may_make_events(guild),
            host_of=self.bot.registry.host_state,
            song_vote=votes.vote,
            next_vote=votes.next_at,
        )
        await interaction.response.send_message(embed=embed, ephemeral=True)
