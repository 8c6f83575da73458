"""/playlist's pages: jingles hidden by default, a button shows them (and hides them again)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import discord

from ..programme.jingles import NO_RULES, SkipRules, is_jingle
from ..programme.timeline import Slot
from .paginator import Paginator

# (rows shown, page, hidden jingles) -> the page's embed
PageOf = Callable[[Sequence[Slot], int, int], discord.Embed]


def slot_is_jingle(slot: Slot, skip: SkipRules = NO_RULES) -> bool:
    """A jingle by :func:`bot.programme.jingles.is_jingle`; the item on air is always shown."""
    item = slot.item
    texts = (item.display, item.filename)
    return slot.state != "playing" and is_jingle(item.duration, texts, item.item_type, skip)


class PlaylistPages(Paginator):
    """The paginator plus a "Show jingles" toggle; either way it opens on the item on air."""

    def __init__(
        self,
        rows: Sequence[Slot],
        page_of: PageOf,
        per_page: int,
        *,
        owner_id: int,
        skip: SkipRules = NO_RULES,
        timeout: float = 180.0,
    ) -> None:
        self.rows = list(rows)
        self.jingles = [slot_is_jingle(row, skip) for row in self.rows]
        self.page_of = page_of
        self.per_page = per_page
        self.show_jingles = False
        super().__init__(self._render, self._page_count(), owner_id=owner_id, timeout=timeout)
        if not any(self.jingles):
            self.remove_item(self.toggle)
        self._label()

    @property
    def hidden(self) -> int:
        return 0 if self.show_jingles else sum(self.jingles)

    def shown(self) -> list[Slot]:
        if self.show_jingles:
            return self.rows
        return [row for row, jingle in zip(self.rows, self.jingles, strict=True) if not jingle]

    def _page_count(self) -> int:
        return max(1, -(-len(self.shown()) // self.per_page))

    def _render(self, page: int) -> discord.Embed:
        return self.page_of(self.shown(), page, self.hidden)

    def playing_page(self) -> int:
        shown = self.shown()
        index = next((i for i, r in enumerate(shown) if r.state == "playing"), 0)
        return index // self.per_page

    @property
    def needed(self) -> bool:
        """Whether the message needs this view at all (more than a page, or jingles to show)."""
        return self.page_count > 1 or any(self.jingles)

    def _label(self) -> None:
        count = sum(self.jingles)
        self.toggle.label = "Hide jingles" if self.show_jingles else f"Show jingles ({count})"

    @discord.ui.button(
        label="Show jingles", style=discord.ButtonStyle.secondary, custom_id="pg:jingles", row=1
    )
    async def toggle(
        self, interaction: discord.Interaction[Any], _: discord.ui.Button[Any]
    ) -> None:
        self.show_jingles = not self.show_jingles
        self.page_count = self._page_count()
        self._label()
        await self._show(interaction, self.playing_page())
