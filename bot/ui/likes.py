"""The ❤ button of announcements and /nowplaying: a like per user and play, toggled.

Its custom id carries the play's history id (``onair:like:<id>``), so a click works after a
restart and in whichever process of a fleet receives it. The click is answered by editing the
message in the interaction response (UPDATE_MESSAGE): the new count shows within the 3 s
Discord allows, without a REST call that could meet a rate limit.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

import discord

from ..errors import OnAirError
from ..render.embeds import BUTTONS_PER_ROW, COMPONENTS

if TYPE_CHECKING:
    from ..history.likes import LikeService
    from ..station import StationInfo

LIKE_PREFIX = "onair:like:"
ROWS = COMPONENTS // BUTTONS_PER_ROW


def like_label(count: int) -> str:
    return f"❤ {count:,}" if count else "❤"


class LikeButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=re.compile(re.escape(LIKE_PREFIX) + r"(?P<play>[0-9]{1,19})"),
):
    """Likes the play (or takes the like back) for whoever clicks it."""

    def __init__(self, play_id: int, count: int = 0) -> None:
        super().__init__(
            discord.ui.Button(
                label=like_label(count),
                style=discord.ButtonStyle.secondary,
                custom_id=f"{LIKE_PREFIX}{play_id}",
            )
        )
        self.play_id = play_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
    ) -> LikeButton:
        return cls(int(match["play"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        from ..runtime.core import report_error  # the command layer's one error reply

        likes: LikeService | None = getattr(interaction.client, "likes", None)
        try:
            if likes is None:
                raise RuntimeError("likes are not set up")
            _, count = await likes.toggle(self.play_id, interaction.user.id)
        except OnAirError as error:  # too fast: said privately, the count stays as it is
            await report_error(interaction, error)
            return
        except Exception as error:
            await report_error(interaction, error)
            return
        self.item.label = like_label(count)
        await interaction.response.edit_message(view=self.view)


def with_like_button(
    view: discord.ui.View | None, play_id: int | None, count: int
) -> discord.ui.View | None:
    """``view`` with the ❤ button in its first row that has room (none when the play is not in
    the history, or the view is full)."""
    if play_id is None:
        return view
    # A fresh view: renderings are cached and shared (one /nowplaying embed and view per
    # snapshot), and this button's count belongs to this reply alone.
    fresh = discord.ui.View(timeout=None)
    for item in view.children if view is not None else ():
        fresh.add_item(copy.copy(item))
    view = fresh
    rows = Counter(item.row or 0 for item in view.children)
    free = next((row for row in range(ROWS) if rows[row] < BUTTONS_PER_ROW), None)
    if free is None:
        return view
    button = LikeButton(play_id, count)
    button.row = free
    view.add_item(button)
    return view


async def like_view(
    likes: LikeService | None,
    station: str,
    info: StationInfo,
    view: discord.ui.View | None,
) -> discord.ui.View | None:
    """``view`` with the ❤ button of the play on air (/nowplaying); as it was when nothing is
    on air or storage fails (the answer does not wait on a like count)."""
    play = info.current_play()
    if likes is None or play is None:
        return view
    try:
        play_id = await likes.play_id(station, play, listeners=info.listener_count, record=True)
        count = await likes.count(play_id) if play_id is not None else 0
    except Exception as error:
        if not likes.storage.is_storage_error(error):
            raise
        return view
    return with_like_button(view, play_id, count)
