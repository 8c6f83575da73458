"""One button paginator: first/prev/next/last and a page counter; only the invoker can page."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import discord

from ..util.i18n import N_
from .stations import reader_lang

NOT_YOURS = N_(
    "Only the person who ran the command can turn these pages; run it yourself to browse."
)
PageRenderer = Callable[[int], discord.Embed]


class Paginator(discord.ui.View):
    """Renders pages lazily (a 1,000-item playlist is 100 pages, built only when shown)."""

    def __init__(
        self, render: PageRenderer, page_count: int, *, owner_id: int, timeout: float = 180.0
    ) -> None:
        super().__init__(timeout=timeout)
        self.render = render
        self.page_count = max(1, page_count)
        self.owner_id = owner_id
        self.page = 0
        self.interaction: discord.Interaction[Any] | None = None
        self._sync()

    def start_at(self, page: int) -> discord.Embed:
        """Open on ``page`` (clamped) and return its embed."""
        self.page = max(0, min(page, self.page_count - 1))
        self._sync()
        return self.render(self.page)

    def attach(self, interaction: discord.Interaction[Any]) -> None:
        """Remember the command's interaction so the view can disable itself on timeout."""
        self.interaction = interaction

    def _sync(self) -> None:
        last = self.page_count - 1
        self.first.disabled = self.previous.disabled = self.page == 0
        self.next.disabled = self.last.disabled = self.page >= last
        self.counter.label = f"{self.page + 1}/{self.page_count}"

    async def interaction_check(self, interaction: discord.Interaction[Any]) -> bool:
        if interaction.user.id == self.owner_id:
            return True
        # In the language of the one who clicked (not the owner's).
        await interaction.response.send_message(
            reader_lang(interaction).t(NOT_YOURS), ephemeral=True
        )
        return False

    async def _show(self, interaction: discord.Interaction[Any], page: int) -> None:
        self.page = max(0, min(page, self.page_count - 1))
        self._sync()
        await interaction.response.edit_message(embed=self.render(self.page), view=self)

    @discord.ui.button(label="⏮", style=discord.ButtonStyle.secondary, custom_id="pg:first")
    async def first(self, interaction: discord.Interaction[Any], _: discord.ui.Button[Any]) -> None:
        await self._show(interaction, 0)

    @discord.ui.button(label="◀", style=discord.ButtonStyle.primary, custom_id="pg:prev")
    async def previous(
        self, interaction: discord.Interaction[Any], _: discord.ui.Button[Any]
    ) -> None:
        await self._show(interaction, self.page - 1)

    @discord.ui.button(
        label="1/1", style=discord.ButtonStyle.secondary, disabled=True, custom_id="pg:count"
    )
    async def counter(
        self, interaction: discord.Interaction[Any], _: discord.ui.Button[Any]
    ) -> None:
        await interaction.response.defer()

    @discord.ui.button(label="▶", style=discord.ButtonStyle.primary, custom_id="pg:next")
    async def next(self, interaction: discord.Interaction[Any], _: discord.ui.Button[Any]) -> None:
        await self._show(interaction, self.page + 1)

    @discord.ui.button(label="⏭", style=discord.ButtonStyle.secondary, custom_id="pg:last")
    async def last(self, interaction: discord.Interaction[Any], _: discord.ui.Button[Any]) -> None:
        await self._show(interaction, self.page_count - 1)

    async def on_timeout(self) -> None:
        for item in self.children:
            if isinstance(item, discord.ui.Button):
                item.disabled = True
        if self.interaction is not None:
            # The message may be gone or the token expired: then nothing is left to disable.
            with contextlib.suppress(discord.HTTPException):
                await self.interaction.edit_original_response(view=self)
