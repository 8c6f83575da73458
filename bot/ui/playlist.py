"""/playlist's pages: jingles hidden by default, a button shows them (and hides them again)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any

import discord

from ..programme.jingles import NO_RULES, SkipRules, is_jingle
from ..programme.timeline import Slot
from ..util.i18n import ENGLISH, Lang
from .paginator import Paginator

# (rows shown, page, hidden jingles) -> the page's embed
PageOf = Callable[[Sequence[Slot], int, int], discord.Embed]


def slot_is_jingle(slot: Slot, skip: SkipRules = NO_RULES) -> bool:
    """A jingle by :func:`bot.programme.jingles.is_jingle`; the item on air is always shown."""
    item = slot.item
    texts = (item.display, item.filename)
    return slot.state != "playing" and is_jingle(item.duration, texts, item.item_type, skip)


class PlaylistPages(Paginator):
    """The paginator plus a "Show jingles" toggle. It opens on the item on air; the toggle
    keeps the reader on the rows they were reading."""

    def __init__(
        self,
        rows: Sequence[Slot],
        page_of: PageOf,
        per_page: int,
        *,
        owner_id: int,
        skip: SkipRules = NO_RULES,
        timeout: float = 180.0,
        lang: Lang = ENGLISH,
    ) -> None:
        self.rows = list(rows)
        self.lang = lang  # the owner's: only they can press the toggle
        self.jingles = [slot_is_jingle(row, skip) for row in self.rows]
        self.page_of = page_of
        self.per_page = per_page
        self.show_jingles = False
        self._reading: int | None = None  # the row the last toggle kept in view
        super().__init__(self._render, self._page_count(), owner_id=owner_id, timeout=timeout)
        if not any(self.jingles):
            self.remove_item(self.toggle)
        self._label()

    @property
    def hidden(self) -> int:
        return 0 if self.show_jingles else sum(self.jingles)

    def shown(self) -> list[Slot]:
        return [self.rows[index] for index in self._shown_indices()]

    def _shown_indices(self) -> list[int]:
        return [i for i, jingle in enumerate(self.jingles) if self.show_jingles or not jingle]

    def _anchor(self) -> int:
        """The row the reader is looking at (the first track of the page shown, else its first
        row): the page that holds it stays open when jingles are shown or hidden."""
        indices = self._shown_indices()
        page = indices[self.page * self.per_page : (self.page + 1) * self.per_page]
        if self._reading in page:  # toggled back and forth: the same row, not the page's first
            return self._reading
        return next((i for i in page if not self.jingles[i]), page[0] if page else 0)

    def _page_of_row(self, anchor: int) -> int:
        indices = self._shown_indices()
        position = bisect.bisect_left(indices, anchor)
        return min(position, max(0, len(indices) - 1)) // self.per_page

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
        if self.show_jingles:
            self.toggle.label = self.lang.t("Hide jingles")
        else:
            shown = self.lang.count(count)
            self.toggle.label = self.lang.tn(
                "Show jingles ({count})", "Show jingles ({count})", count, count=shown
            )

    @discord.ui.button(
        label="Show jingles", style=discord.ButtonStyle.secondary, custom_id="pg:jingles", row=1
    )
    async def toggle(
        self, interaction: discord.Interaction[Any], _: discord.ui.Button[Any]
    ) -> None:
        anchor = self._reading = self._anchor()
        self.show_jingles = not self.show_jingles
        self.page_count = self._page_count()
        self._label()
        await self._show(interaction, self._page_of_row(anchor))
