"""/onair template set, clear and preview: a channel's announcement wording."""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from discord import app_commands

from bot.announcer import templating as template_admin
from bot.config import StationConfig
from bot.render import admin_embeds, community
from bot.render.templated import for_subscription
from bot.storage import Subscription
from bot.templates.model import PartName
from bot.ui import Reply, answer
from bot.ui.stations import reader_lang, resolve_station
from bot.util.i18n import N_
from bot.util.text import clip, safe

from ..shapes import Channel, Interaction, station_option
from .base import AdminCommands


class TemplateCommands(AdminCommands):
    template = app_commands.Group(
        name="template", description=N_("Word a channel's announcements with your own templates")
    )

    @template.command(name="set", description=N_("Word a channel's announcements (see the README)"))
    @app_commands.describe(
        channel=N_("The channel whose announcements to word"),
        variant=N_("all plays, or only live shows / only AutoDJ plays (default: all)"),
        content=N_("Message text above the embed, like: Now on {station}: {title}"),
        title=N_("Embed title, like: {title}"),
        description=N_("Embed text, like: by {artist} · {album|—} ({year|?})"),
        footer=N_("Footer, like: {station} · {listeners} listening"),
        color=N_("Embed colour, like #1DB954"),
    )
    @station_option()
    async def template_set(
        self,
        interaction: Interaction,
        channel: Channel,
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
        text = community.template_saved(sub.templates, channel.mention, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)

    @template.command(name="clear", description=N_("Back to the built-in announcement layout"))
    @app_commands.describe(
        channel=N_("The channel whose announcement wording to clear"),
        variant=N_("Only this variant (default: every variant)"),
        part=N_("Only this part (default: every part)"),
    )
    @station_option()
    async def template_clear(
        self,
        interaction: Interaction,
        channel: Channel,
        station: str | None = None,
        variant: Literal["all", "live", "autodj"] | None = None,
        part: Literal["content", "title", "description", "footer", "color"] | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        sub = await self._template_target(interaction, channel, chosen)
        sub = await template_admin.clear(self.bot.storage, sub, variant, part)
        text = community.template_saved(sub.templates, channel.mention, reader_lang(interaction))
        await interaction.response.send_message(text, ephemeral=True)

    @template.command(
        name="preview", description=N_("A channel's announcement with the station's last play")
    )
    @app_commands.describe(
        channel=N_("The channel whose announcement to preview"),
        variant=N_("Preview with a live show's or an AutoDJ play (default: the last play)"),
    )
    @station_option()
    async def template_preview(
        self,
        interaction: Interaction,
        channel: Channel,
        station: str | None = None,
        variant: Literal["live", "autodj"] | None = None,
    ) -> None:
        chosen = resolve_station(interaction, station)
        sub = await self._template_target(interaction, channel, chosen)
        lang = reader_lang(interaction)

        async def work() -> Reply:
            live = None if variant is None else variant == "live"
            recorded = await template_admin.last_play(self.bot.storage, chosen.slug, live=live)
            if recorded is not None:
                info, play = recorded.info, recorded.play
            else:
                info = (await self.bot.registry.snapshot(chosen)).info
                current = info.current_play()
                if current is None:
                    return Reply(content=lang.t(admin_embeds.NOTHING_ON_AIR), ephemeral=True)
                play = current
            if live is not None and play.live != live:
                # None of that kind recorded (a track asked for during a show): this play,
                # worded as the kind asked for, so every variant can be previewed any time.
                play = replace(play, live=live)
            # The post as the channel will get it: in the guild's language, not the admin's.
            post_lang = await self.bot.guild_lang(interaction.guild_id or 0)
            shown = for_subscription(sub, info, play, chosen.name, post_lang)
            heading = community.template_preview(
                shown.budget,
                safe(play.display, limit=80),
                recorded=recorded is not None,
                live=play.live,
                lang=lang,
            )
            body = clip("\n".join(p for p in (heading, shown.content) if p), 2000)
            return Reply(content=body, embed=shown.embed, view=shown.view, ephemeral=True)

        await answer(interaction, work(), ephemeral=True)

    async def _template_target(
        self,
        interaction: Interaction,
        channel: Channel,
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
