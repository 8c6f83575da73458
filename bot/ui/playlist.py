"""/playlist's pages: jingles hidden by default, a button shows them (and hides them again)."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Sequence
from typing import Any

import discord

from ..programme.jingles import NO_RULES, SkipRules, is_jingle
from ..programme.timeline import Slot
from ..render.station_embeds import page_span
from ..util.i18n import ENGLISH, Lang
from .paginator import Paginator

# (rows shown, page, hidden jingles, where pages break) -> the page's embed
PageOf = Callable[[Sequence[Slot], int, int, int], discord.Embed]


def slot_is_jingle(slot: Slot, skip: SkipRules = NO_RULES) -> bool:
    """A jingle by :func:`bot.programme.jingles.is_jingle`; the item on air is always shown."""
    item = slot.item
    texts = (item.display, item.filename)
    return slot.state != "playing" and is_jingle(item.duration, texts, item.item_type, skip)


class PlaylistPages(Paginator):
    """The paginator plus a "Show jingles" toggle. It opens on the item on air; the toggle
    keeps the reader on the rows they were reading, each in its place on the page: the item on
    air when the page shows it (with "On air" and "Up next" around it), else the page's first
    track. Pages then break where that row keeps its place (``origin``, :func:`page_span`)."""

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
        self.origin = 0  # where pages break (page_span); moved by the toggle
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

    def _span(self, page: int) -> tuple[int, int, int]:
        return page_span(len(self._shown_indices()), page, self.per_page, self.origin)

    def _anchor(self) -> tuple[int, int]:
        """(row, its place on the page) the reader is looking at: the item on air when the
        page shows it, else the page's first track (else its first row)."""
        indices = self._shown_indices()
        first, end, _ = self._span(self.page)
        page = indices[first:end]
        playing = [i for i in page if self.rows[i].state == "playing"]
        tracks = [i for i in page if not self.jingles[i]]
        anchor = (playing or tracks or page or [0])[0]
        return anchor, page.index(anchor) if anchor in page else 0

    def _page_count(self) -> int:
        return self._span(0)[2]

    def _render(self, page: int) -> discord.Embed:
        return self.page_of(self.shown(), page, self.hidden, self.origin)

    def playing_page(self) -> int:
        shown = self.shown()
        index = next((i for i, r in enumerate(shown) if r.state == "playing"), 0)
        return self._page_of_position(index)

    def _page_of_position(self, position: int) -> int:
        return next(page for page in range(self._page_count()) if position < self._span(page)[1])

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
        anchor, place = self._anchor()
        self.show_jingles = not self.show_jingles
        indices = self._shown_indices()
        position = min(bisect.bisect_left(indices, anchor), max(0, len(indices) - 1))
        self.origin = (position - place) % self.per_page
        self.page_count = self._page_count()
        self._label()
        await self._show(interaction, self._page_of_position(position))
