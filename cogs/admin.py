"""/onair: server admins set up stations and announcements without touching the config file."""

from __future__ import annotations

import asyncio
import re
from collections import defaultdict
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import discord
from discord import app_commands
from discord.ext import commands

from bot.core import OnAirBot, report_error
from bot.errors import BadInput
from bot.netguard import check_url
from bot.patterns import compile_pattern
from bot.render import station_embeds
from bot.render.embeds import EmbedBuilder
from bot.render.text import safe, timestamp
from bot.station import StationError
from bot.stations import short_slug
from bot.storage import GuildSettings, GuildStation, Subscription
from bot.ui import Reply, answer
from bot.ui.stations import resolve_station, station_autocomplete

NEED_MANAGE = "You need the **Manage Server** permission to change OnAir's settings here."
NOT_YOUR_FORM = (
    "This form was opened by someone else (or in another server); "
    "run `/onair station add` yourself to add a station."
)
NOT_A_MEMBER = (
    "OnAir is not a member of this server (only its commands were installed), so it cannot "
    "announce here or keep a station for it. Please invite the bot to the server first."
)


def can_manage(interaction: discord.Interaction[Any]) -> bool:
    """Manage Server (or Administrator) in the guild the interaction came from."""
    permissions = interaction.permissions
    return interaction.guild_id is not None and bool(
        permissions.manage_guild or permissions.administrator
    )


def make_slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")[:32].strip("-")
    return slug or "station"


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise BadInput(
            f"`{name[:60]}` is not a time zone I know; use a name like Europe/Berlin."
        ) from None


class StationKeyModal(discord.ui.Modal, title="Station API key"):
    """The key is typed here, never in a visible command option, and never shown again.

    The custom id is discord.py's random default (a fixed one would let two guilds' pending
    forms for the same name replace each other), and only the user who opened the form, in the
    guild they opened it in, can submit it; Manage Server is checked again on submit.
    """

    # Discord allows 45 characters in a label and 100 in a placeholder.
    key: discord.ui.TextInput[Any] = discord.ui.TextInput(
        label="API key",
        placeholder="Leave empty if the station needs no key",
        required=False,
        max_length=200,
        style=discord.TextStyle.short,
    )

    def __init__(
        self,
        cog: Admin,
        *,
        name: str,
        base_url: str,
        station_id: int,
        zone: str,
        user_id: int,
        guild_id: int,
    ) -> None:
        super().__init__(timeout=600)
        self.cog = cog
        self.name = name
        self.base_url = base_url
        self.station_id = station_id
        self.zone = zone
        self.user_id = user_id
        self.guild_id = guild_id

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        """Refuse (privately) a submit by anyone else, from elsewhere, or without Manage Server."""
        refusal = None
        if interaction.user.id != self.user_id or interaction.guild_id != self.guild_id:
            refusal = NOT_YOUR_FORM
        elif not can_manage(interaction):
            refusal = NEED_MANAGE
        if refusal is None:
            return True
        await interaction.response.send_message(refusal, ephemeral=True)
        return False

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        message = await self.cog.add_station(
            interaction,
            self.name,
            self.base_url,
            self.station_id,
            self.zone,
            self.key.value.strip(),
        )
        await interaction.followup.send(message, ephemeral=True)

    async def on_error(self, interaction: discord.Interaction[Any], error: Exception) -> None:  # type: ignore[override]
        await report_error(interaction, error)


@app_commands.guild_only()
@app_commands.default_permissions(manage_guild=True)
class Admin(
    commands.GroupCog, group_name="onair", group_description="Set up OnAir for this server"
):
    station = app_commands.Group(name="station", description="Stations this server uses")

    def __init__(self, bot: OnAirBot) -> None:
        self.bot = bot
        # One add at a time per guild, so concurrent submits cannot pass the station limit.
        self._adding: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)
        super().__init__()

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        """Checked in code too: a guild may have changed the commands' default permissions."""
        if not can_manage(interaction):
            raise app_commands.CheckFailure(NEED_MANAGE)
        return True

    def _refusal(self, guild_id: int, slug: str, owned: list[str]) -> str | None:
        """Why this guild cannot add a station (not a member, or at its limit), else None."""
        if self.bot.get_guild(guild_id) is None:
            return NOT_A_MEMBER
        limit = self.bot.settings.max_guild_stations
        if slug not in owned and len(owned) >= limit:
            return (
                f"This server already has {len(owned)} stations, the most OnAir keeps for one "
                "server; remove one with `/onair station remove` first."
            )
        return None

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
        guild_id = interaction.guild_id or 0
        owned = [
            short_slug(s) for s in self.bot.registry.visible(guild_id) if s.owner_guild == guild_id
        ]
        refusal = self._refusal(guild_id, make_slug(name), owned)
        if refusal is not None:
            raise BadInput(refusal)
        url = check_url(base_url, self.bot.registry.policy)  # UrlRefused: a clear ephemeral reply
        _zone(timezone)
        modal = StationKeyModal(
            self,
            name=name,
            base_url=url,
            station_id=station_id,
            zone=timezone,
            user_id=interaction.user.id,
            guild_id=guild_id,
        )
        await interaction.response.send_modal(modal)

    async def add_station(
        self,
        interaction: discord.Interaction[Any],
        name: str,
        base_url: str,
        station_id: int,
        zone: str,
        key: str,
    ) -> str:
        """Validate with a live `info` call, then store (key encrypted). Returns the reply."""
        guild_id = interaction.guild_id or 0
        async with self._adding[guild_id]:
            return await self._add_station(guild_id, name, base_url, station_id, zone, key)

    async def _add_station(
        self, guild_id: int, name: str, base_url: str, station_id: int, zone: str, key: str
    ) -> str:
        if key and not self.bot.keybox.available:
            return (
                "This OnAir host has no encryption secret set, so it cannot store station keys "
                "safely. Please ask the bot's owner to set ONAIR_SECRET_KEY."
            )
        slug = make_slug(name)
        owned = [s.slug for s in await self.bot.storage.guild_stations(guild_id)]
        refusal = self._refusal(guild_id, slug, owned)
        if refusal is not None:
            return refusal
        client = self.bot.registry.guest_client(base_url, station_id, key or None)
        try:
            info = await client.info(max_age=0)
        except StationError as error:
            return f"I could not add the station: {error.message}"
        stored = GuildStation(
            guild_id,
            slug,
            name,
            base_url,
            station_id,
            self.bot.keybox.encrypt(key) if key else None,
            zone,
        )
        await self.bot.storage.save_guild_station(stored)
        self.bot.registry.add_guild_station(stored, key or None)
        play = info.current_play()
        on_air = f" On air now: {safe(play.display, limit=200)}." if play else ""
        return f"Added **{safe(name, limit=80)}** (`{slug}`); the key works.{on_air}"

    @station.command(name="remove", description="Remove a station this server added")
    @app_commands.autocomplete(station=station_autocomplete)
    async def station_remove(
        self, interaction: discord.Interaction[OnAirBot], station: str
    ) -> None:
        config = resolve_station(interaction, station)
        if config.owner_guild != interaction.guild_id:
            raise BadInput(
                "That station comes from the bot's own configuration; only its owner can remove it."
            )
        await self.bot.storage.remove_guild_station(
            config.owner_guild, short_slug(config), config.slug
        )
        self.bot.registry.remove_guild_station(config.slug)
        await self._refresh()
        await interaction.response.send_message(
            f"Removed **{safe(config.name, limit=80)}** and its announcements.", ephemeral=True
        )

    @station.command(name="list", description="Stations this server can use")
    async def station_list(self, interaction: discord.Interaction[OnAirBot]) -> None:
        stations = self.bot.registry.visible(interaction.guild_id)
        lines = [
            f"`{short_slug(s)}` **{safe(s.name, limit=80)}**: {s.base_url} #{s.station_id}, "
            f"{'key set' if s.key else 'no key'}, {getattr(s.timezone, 'key', 'UTC')}"
            f"{'' if s.owner_guild else ' (from the bot config)'}"
            for s in stations
        ]
        embed = EmbedBuilder(
            "Stations", "\n".join(lines) or "No stations yet: add one with `/onair station add`."
        )
        await interaction.response.send_message(embed=embed.build(), ephemeral=True)

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
        guild_id = interaction.guild_id or 0
        current = await self.bot.storage.guild_settings(guild_id)
        zone = _zone(timezone).key if timezone else current.timezone
        slug = (
            resolve_station(interaction, default_station).slug
            if default_station
            else current.default_station
        )
        await self.bot.storage.save_guild_settings(GuildSettings(guild_id, zone, slug))
        self.bot.registry.set_default(guild_id, slug)
        await interaction.response.send_message(
            f"Time zone: **{zone}**; default station: **{slug or 'none'}**.", ephemeral=True
        )

    # Announcements ----------------------------------------------------------------------

    @app_commands.command(name="announce", description="Announce every new track in a channel")
    @app_commands.describe(
        channel="Text channel or thread",
        station="Which station",
        mode="post: a message per track; card: one message kept up to date",
        style="compact: small artwork, three lines; full: big artwork (default: by mode)",
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
        config = resolve_station(interaction, station)
        if skip_pattern:
            compile_pattern(skip_pattern)  # RE2: refuses what it cannot run in linear time
        if role is not None and role.is_default():
            raise BadInput("OnAir never pings @everyone; pick a role of its own.")
        me = channel.guild.me
        if me is not None:
            allowed = channel.permissions_for(me)
            if (
                not (allowed.send_messages or allowed.send_messages_in_threads)
                or not allowed.embed_links
            ):
                raise BadInput(
                    f"I can't post embeds in {channel.mention}; "
                    "let me Send Messages and Embed Links there."
                )
        await self.bot.storage.upsert_subscription(
            Subscription(
                0,
                guild_id=interaction.guild_id or 0,
                channel_id=channel.id,
                station=config.slug,
                mode=mode,
                mention_role=role.id if role else 0,
                min_seconds=float(min_seconds),
                skip_pattern=skip_pattern or "",
                announce_live=announce_live,
                style=style or "",
            )
        )
        await self._refresh()
        await interaction.response.send_message(
            f"New tracks of **{safe(config.name, limit=80)}** will be announced in "
            f"{channel.mention} ({mode}, {station_embeds.effective_style(style, mode)}).",
            ephemeral=True,
        )

    @app_commands.command(name="unannounce", description="Stop announcements in a channel")
    @app_commands.autocomplete(station=station_autocomplete)
    async def unannounce(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
        station: str | None = None,
    ) -> None:
        slug = resolve_station(interaction, station).slug if station else None
        removed = await self.bot.storage.remove_subscription(
            interaction.guild_id or 0, channel.id, slug
        )
        await self._refresh()
        text = (
            f"Stopped announcements in {channel.mention}."
            if removed
            else f"{channel.mention} had no announcements."
        )
        await interaction.response.send_message(text, ephemeral=True)

    @app_commands.command(name="resume", description="Resume paused announcements in a channel")
    async def resume(
        self,
        interaction: discord.Interaction[OnAirBot],
        channel: discord.TextChannel | discord.Thread,
    ) -> None:
        subs = [
            s
            for s in await self.bot.storage.subscriptions(guild_id=interaction.guild_id)
            if s.channel_id == channel.id
        ]
        for sub in subs:
            await self.bot.storage.pause(sub.id, None)
        await self._refresh()
        await interaction.response.send_message(
            f"Resumed {len(subs)} announcement(s) in {channel.mention}.", ephemeral=True
        )

    @app_commands.command(name="preview", description="The announcement for the track on air now")
    @app_commands.autocomplete(station=station_autocomplete)
    async def preview(
        self, interaction: discord.Interaction[OnAirBot], station: str | None = None
    ) -> None:
        config = resolve_station(interaction, station)

        async def work() -> Reply:
            snapshot = await self.bot.registry.snapshot(config)
            play = snapshot.info.current_play()
            if play is None:
                return Reply(content="Nothing is on air right now.", ephemeral=True)
            embed, view = station_embeds.announcement(snapshot.info, play, config.name)
            return Reply(embed=embed, view=view, ephemeral=True)

        await answer(interaction, work())

    @app_commands.command(name="status", description="Polling and announcement status")
    async def status(self, interaction: discord.Interaction[OnAirBot]) -> None:
        guild_id = interaction.guild_id
        builder = EmbedBuilder("OnAir status")
        for config in self.bot.registry.visible(guild_id):
            st = self.bot.announcer.status_for(config)
            if st is None:
                builder.field(
                    config.name[:200], "not watched (no announcements set up)", inline=False
                )
                continue
            lines = [
                f"state: **{st.state}**",
                f"last poll: {timestamp(st.last_poll)}, next: {timestamp(st.next_poll)}",
            ]
            if st.unreachable_since:
                lines.append(f"unreachable since {timestamp(st.unreachable_since)}")
            if st.last_error:
                lines.append(f"last error: {safe(st.last_error, limit=200)}")
            builder.field(safe(config.name, limit=200), "\n".join(lines), inline=False)
        subs = await self.bot.storage.subscriptions(guild_id=guild_id)
        paused = [
            f"<#{s.channel_id}>: {safe(s.paused_reason, limit=150)}"
            for s in subs
            if s.paused_reason
        ]
        active = [f"<#{s.channel_id}> ({s.mode})" for s in subs if not s.paused_reason]
        builder.field("Announcing in", "\n".join(active) or "nowhere yet", inline=False)
        if paused:
            builder.field(
                "Paused (fix the cause, then /onair resume)", "\n".join(paused), inline=False
            )
        await interaction.response.send_message(embed=builder.build(), ephemeral=True)

    async def _refresh(self) -> None:
        await self.bot.announcer.refresh()


async def setup(bot: OnAirBot) -> None:
    await bot.add_cog(Admin(bot))
