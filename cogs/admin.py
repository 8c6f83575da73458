"""/onair: server admins set up stations and announcements without touching the config file."""

from __future__ import annotations

from typing import Any, Literal

import discord
from discord import app_commands
from discord.ext import commands

from bot.announcer import templating as template_admin
from bot.config import StationConfig
from bot.errors import EVENTS_NO_PERMISSION, NEED_MANAGE, NOT_HERE, BadInput
from bot.guard.patterns import compile_pattern
from bot.render import admin_embeds, community, station_embeds
from bot.render.templated import announcement as templated
from bot.runtime.core import OnAirBot
from bot.storage import Subscription
from bot.templates.model import PartName
from bot.ui import Reply, answer
from bot.ui.checks import can_manage, check_announce_target
from bot.ui.scheduled import configure_alerts, configure_recap
from bot.ui.station_key import StationKeyModal
from bot.ui.stations import resolve_station, station_autocomplete
from bot.ui.voice import configure_voice, voice_channel_autocomplete
from bot.util.text import clip, safe

Weekday = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


@app_commands.guild_only()
@app_commands.default_permissions(manage_guild=True)
class AdminCog(
    commands.GroupCog, group_name="onair", group_description="Set up OnAir for this server"
):
    station = app_commands.Group(name="station", description="Stations this server uses")
    template = app_commands.Group(
        name="template", description="Word a channel's announcements with your own templates"
    )

    def __init__(self, bot: OnAirBot) -> None:
        self.bot = bot
        super().__init__()

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        """Checked in code too: a guild may have changed the commands' default permissions."""
        if not can_manage(interaction):
            raise app_commands.CheckFailure(NEED_MANAGE)
        return True

    # Stations ---------------------------------------------------------------------------

    @station.command(
        name="add", description="Add this server's station (the key is asked for privately)"
    )
    @app_commands.describe(
        name="Display name",
        base_url="Station server, like https://c5.radioboss.fm",
        station_id="The station's number",
        timezone="The station's time zone, like Europe/Berlin (default UTC)",
    )
    async def station_add(
        self,
        interaction: discord.Interaction[OnAirBot],
        name: app_commands.Range[str, 1, 80],
        base_url: app_commands.Range[str, 8, 200],
        station_id: app_commands.Range[int, 1, 10**9],
        timezone: str = "UTC",
    ) -> None:
        # UrlRefused or BadInput: a clear ephemeral reply, before the key is asked for.
        request = self.bot.onboarding.check_request(
            interaction.guild_id or 0, name, base_url, station_id, timezone
        )
        modal = StationKeyModal(self.bot.onboarding, request, user_id=interaction.user.id)
        await interaction.response.send_modal(modal)

    @station.command(name="remove", description="Remove a station this server added")
    @app_commands.autocomplete(station=station_autocomplete)
    async def station_remove(
        self, interaction: discord.Interaction[OnAirBot], station: str
    ) -> None:
        chosen = resolve_station(interaction, station)
        await self.bot.onboarding.remove(interaction.guild_id or 0, chosen)
        await self._refresh()
        await interaction.response.send_message(admin_embeds.removed(chosen), ephemeral=True)

    @station.command(name="list", description="Stations this server can use")
    async def station_list(self, interaction: discord.Interaction[OnAirBot]) -> None:
        embed = admin_embeds.station_list(self.bot.registry.visible(interaction.guild_id))
        await interaction.response.send_message(embed=embed, ephemeral=True)

    # Settings ---------------------------------------------------------------------------

    @app_commands.command(
        name="settings", description="This server's time zone and default station"
    )
    @app_commands.autocomplete(default_station=station_autocomplete)
    async def settings(
        self,
        interaction: discord.Interaction[OnAirBot],
        timezone: str | None = None,
        default_station: str | None = None,
    ) -> None:
        slug = resolve_station(interaction, default_station).slug if default_station else None
        saved = await self.bot.onboarding.save_settings(interaction.guild_id or 0, timezone, slug)
        await interaction.response.send_message(admin_embeds.settings_saved(saved), ephemeral=True)

    # Announcements ----------------------------------------------------------------------

    @app_commands.command(name="announce", description="Announce every new track in a channel")
    @app_commands.describe(
        channel="Text channel or thread",
        station="Which station",
        mode="post: a message per track; card: one message kept up to date",
        style=(
            "compact: small artwork (a smaller card); full: big artwork "
            "(default: compact posts, full cards)"
        ),
        role="Role to ping with each announcement (optional)",
        min_seconds="Skip plays shorter than this (jingles); 0 = off",
        skip_pattern="Skip titles or files matching this regular expression",
        announce_live="Announce live shows",
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def announce(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
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
        text = admin_embeds.announcing(chosen, channel.mention, mode, style)
        await interaction.response.send_message(text, ephemeral=True)

    @app_commands.command(name="unannounce", description="Stop announcements in a channel")
    @app_commands.autocomplete(station=station_autocomplete)
    async def unannounce(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
        station: str | None = None,
    ) -> None:
        slug = resolve_station(interaction, station).slug if station else None
        removed = await self.bot.announcer.unsubscribe(interaction.guild_id or 0, channel.id, slug)
        text = admin_embeds.unannounced(channel.mention, removed)
        await interaction.response.send_message(text, ephemeral=True)

    @app_commands.command(name="resume", description="Resume paused announcements in a channel")
    async def resume(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
    ) -> None:
        count = await self.bot.announcer.resume_channel(interaction.guild_id or 0, channel.id)
        await interaction.response.send_message(
            f"Resumed {count} announcement(s) in {channel.mention}.", ephemeral=True
        )

    @app_commands.command(name="preview", description="The announcement for the track on air now")
    @app_commands.autocomplete(station=station_autocomplete)
    async def preview(
        self, interaction: discord.Interaction[OnAirBot], station: str | None = None
    ) -> None:
        chosen = resolve_station(interaction, station)

        async def work() -> Reply:
            snapshot = await self.bot.registry.snapshot(chosen)
            play = snapshot.info.current_play()
            if play is None:
                return Reply(content="Nothing is on air right now.", ephemeral=True)
            embed, view = station_embeds.announcement(snapshot.info, play, chosen.name)
            return Reply(embed=embed, view=view, ephemeral=True)

        await answer(interaction, work())

    @app_commands.command(name="status", description="Polling and announcement status")
    async def status(self, interaction: discord.Interaction[OnAirBot]) -> None:
        guild_id = interaction.guild_id
        embed = admin_embeds.status(
            self.bot.registry.visible(guild_id),
            self.bot.announcer.status_for,
            await self.bot.storage.subscriptions(guild_id=guild_id),
            await self.bot.announcer.recent_deliveries(guild_id or 0),
            await self.bot.storage.alert_subscriptions(guild_id=guild_id or 0),
            next(iter(await self.bot.storage.recaps(guild_id or 0)), None),
        )
        await interaction.response.send_message(embed=embed, ephemeral=True)

    # Announcement templates --------------------------------------------------------------

    @template.command(name="set", description="Word a channel's announcements (see the README)")
    @app_commands.describe(
        channel="The channel whose announcements to word",
        station="Which station (default: this server's)",
        variant="all plays, or only live shows / only AutoDJ plays (default: all)",
        content="Message text above the embed, like: Now on {station}: {title}",
        title="Embed title, like: {title}",
        description="Embed text, like: by {artist} · {album|—} ({year|?})",
        footer="Footer, like: {station} · {listeners} listening",
        color="Embed colour, like #1DB954",
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def template_set(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
        station: str | None = None,
        variant: Literal["all", "live", "autodj"] = "all",
        content: app_commands.Range[str, 1, 6000] | None = None,
        title: app_commands.Range[str, 1, 6000] | None = None,
        description: app_commands.Range[str, 1, 6000] | None = None,
        footer: app_commands.Range[str, 1, 6000] | None = None,
        color: app_commands.Range[str, 1, 100] | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        sub = await self._template_target(interaction, channel, chosen)
        given = {"content": content, "title": title, "description": description}
        given |= {"footer": footer, "color": color}
        parts: dict[PartName, str] = {k: v for k, v in given.items() if v is not None}  # type: ignore[misc]
        sub = await template_admin.set_parts(self.bot.storage, sub, variant, parts)
        text = community.template_saved(sub.templates, channel.mention)
        await interaction.response.send_message(text, ephemeral=True)

    @template.command(name="clear", description="Back to the built-in announcement layout")
    @app_commands.describe(
        channel="The channel whose announcement wording to clear",
        station="Which station (default: this server's)",
        variant="Only this variant (default: every variant)",
        part="Only this part (default: every part)",
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def template_clear(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
        station: str | None = None,
        variant: Literal["all", "live", "autodj"] | None = None,
        part: Literal["content", "title", "description", "footer", "color"] | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        sub = await self._template_target(interaction, channel, chosen)
        sub = await template_admin.clear(self.bot.storage, sub, variant, part)
        text = community.template_saved(sub.templates, channel.mention)
        await interaction.response.send_message(text, ephemeral=True)

    @template.command(
        name="preview", description="A channel's announcement with the station's last play"
    )
    @app_commands.describe(
        channel="The channel whose announcement to preview",
        station="Which station (default: this server's)",
        variant="Preview with a live show's or an AutoDJ play (default: the last play)",
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def template_preview(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
        station: str | None = None,
        variant: Literal["live", "autodj"] | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        sub = await self._template_target(interaction, channel, chosen)

        async def work() -> Reply:
            live = None if variant is None else variant == "live"
            recorded = await template_admin.last_play(self.bot.storage, chosen.slug, live=live)
            if recorded is not None:
                info, play = recorded.info, recorded.play
            else:
                info = (await self.bot.registry.snapshot(chosen)).info
                current = info.current_play()
                if current is None:
                    return Reply(content="Nothing is on air right now.", ephemeral=True)
                play = current
            shown = templated(
                sub.templates,
                info,
                play,
                chosen.name,
                style=station_embeds.effective_style(sub.style, sub.mode),
                mention_role=sub.mention_role,
            )
            heading = community.template_preview(
                shown.budget, safe(play.display, limit=80), recorded=recorded is not None
            )
            body = clip("\n".join(p for p in (heading, shown.content) if p), 2000)
            return Reply(content=body, embed=shown.embed, view=shown.view, ephemeral=True)

        await answer(interaction, work(), ephemeral=True)

    async def _template_target(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
        chosen: StationConfig,
    ) -> Subscription:
        return await template_admin.subscription_for(
            self.bot.storage,
            interaction.guild_id or 0,
            channel.id,
            chosen.slug,
            channel=channel.mention,
            name=safe(chosen.name, limit=80),
        )

    # Alerts and the weekly recap ----------------------------------------------------------

    @app_commands.command(
        name="alerts",
        description="Post when a live show starts or ends, and when the station is down",
    )
    @app_commands.describe(
        channel="Text channel or thread for the alerts",
        role="Role to ping when a live show starts (optional)",
        station="Which station",
        off="Stop the alerts of this station",
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def alerts(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread | None = None,
        role: discord.Role | None = None,
        station: str | None = None,
        off: bool = False,
    ) -> None:
        await configure_alerts(interaction, channel, role, station, off)

    @app_commands.command(name="recap", description="A weekly recap of the station in a channel")
    @app_commands.describe(
        channel="Text channel or thread for the recap",
        day="Day of the week (this server's time zone)",
        hour="Hour of that day, 0-23",
        station="Which station",
        off="Stop the weekly recap",
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def recap(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread | None = None,
        day: Weekday = "Monday",
        hour: app_commands.Range[int, 0, 23] = 9,
        station: str | None = None,
        off: bool = False,
    ) -> None:
        await configure_recap(interaction, channel, day, hour, station, off)

    # Voice -------------------------------------------------------------------------------

    @app_commands.command(
        name="voice", description="Voice: 24/7 home channel, empty leave, station, stream"
    )
    @app_commands.describe(
        channel="Voice or stage channel to stay in 24/7, or none",
        leave_when_empty="Seconds to stay in a channel nobody listens in (0 = stay)",
        station="Station to play (turns voice on for a station this server added)",
        stream_url="Stream address of that station (one this server added), or default",
        status="Show what plays as the voice channel's status (on by default)",
    )
    @app_commands.autocomplete(channel=voice_channel_autocomplete, station=station_autocomplete)
    async def voice(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: app_commands.Range[str, 1, 120] | None = None,
        leave_when_empty: app_commands.Range[int, 0, 86400] | None = None,
        station: str | None = None,
        stream_url: app_commands.Range[str, 1, 2048] | None = None,
        status: bool | None = None,
    ) -> None:
        await configure_voice(interaction, channel, leave_when_empty, station, stream_url, status)

    # Live shows --------------------------------------------------------------------------

    @app_commands.command(name="events", description="A server event for each live show")
    @app_commands.describe(
        enabled="Make an event for each live show of the station (or stop)",
        station="Which station",
    )
    @app_commands.autocomplete(station=station_autocomplete)
    async def events(
        self, interaction: discord.Interaction[OnAirBot], enabled: bool, station: str | None = None
    ) -> None:
        chosen = resolve_station(interaction, station)
        guild = interaction.guild
        if guild is None:
            raise BadInput(NOT_HERE)
        if enabled and not guild.me.guild_permissions.manage_events:
            raise BadInput(EVENTS_NO_PERMISSION)
        changed = await self.bot.shows.set_events(guild.id, chosen.slug, on=enabled)
        text = admin_embeds.show_events(chosen, enabled, changed)
        await interaction.response.send_message(text, ephemeral=True)

    async def _refresh(self) -> None:
        await self.bot.announcer.refresh()


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(AdminCog(bot))
