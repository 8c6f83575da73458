"""The ❤ button of announcements and /nowplaying: a like per user and play, toggled.

Its custom id carries the play's history id (``onair:like:<id>``), so a click works after a
restart and in whichever process of a fleet receives it.

The button shows no count. One play is shown by every server's announcement and by any number
of ``/nowplaying`` replies, in whichever process of a fleet; keeping a count current on all of
them would take an edit of each message per click (5 edits per 5 s per channel), so a count
would be true only on the message just clicked. The click is answered privately instead
("Liked *Title*: click again to undo. 3 listeners like it now."), within the 3 s Discord
allows and without a REST call; ``/top`` and the weekly recap show the counts.
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

import discord

from ..errors import OnAirError
from ..render.community import like_answer
from ..render.embeds import BUTTONS_PER_ROW, COMPONENTS
from ..util.i18n import ENGLISH, N_, Lang
from .dynamic import Persistent
from .stations import reader_lang

if TYPE_CHECKING:
    from ..history.likes import LikeService
    from ..station import StationInfo

LIKE_PREFIX = "onair:like:"
ROWS = COMPONENTS // BUTTONS_PER_ROW
LIKE_EMOJI = "❤️"
LIKE_LABEL = N_("Like")


class LikeButton(
    Persistent,
    discord.ui.DynamicItem[discord.ui.Button[Any]],
    template=re.compile(re.escape(LIKE_PREFIX) + r"(?P<play>[0-9]{1,19})"),
):
    """Likes the play (or takes the like back) for whoever clicks it."""

    def __init__(self, play_id: int, label: str = LIKE_LABEL) -> None:
        super().__init__(
            discord.ui.Button(
                label=label,
                emoji=LIKE_EMOJI,
                style=discord.ButtonStyle.secondary,
                custom_id=f"{LIKE_PREFIX}{play_id}",
            )
        )
        self.play_id = play_id

    @classmethod
    def rebuild(cls, match: re.Match[str], item: Any) -> LikeButton:
        return cls(int(match["play"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        from ..runtime.core import report_error  # the command layer's one error reply

        likes: LikeService | None = getattr(interaction.client, "likes", None)
        try:
            if likes is None:
                raise RuntimeError("likes are not set up")
            liked, count = await likes.toggle(self.play_id, interaction.user.id)
            title = await likes.title(self.play_id)
        except OnAirError as error:  # too fast: said privately, the like stays as it is
            await report_error(interaction, error)
            return
        except Exception as error:
            await report_error(interaction, error)
            return
        answer = like_answer(liked, title, count, reader_lang(interaction))
        await interaction.response.send_message(answer, ephemeral=True)


def with_like_button(
    view: discord.ui.View | None, play_id: int | None, lang: Lang = ENGLISH
) -> discord.ui.View | None:
    """``view`` with the ❤ button in its first row that has room (none when the play is not in
    the history, or the view is full)."""
    if play_id is None:
        return view
    # A fresh view: renderings are cached and shared (one /nowplaying embed and view per
    # snapshot), and the button is added to this reply's alone.
    fresh = discord.ui.View(timeout=None)
    for item in view.children if view is not None else ():
        fresh.add_item(copy.copy(item))
    view = fresh
    rows = Counter(item.row or 0 for item in view.children)
    free = next((row for row in range(ROWS) if rows[row] < BUTTONS_PER_ROW), None)
    if free is None:
        return view
    button = LikeButton(play_id, lang.t(LIKE_LABEL))
    button.row = free
    view.add_item(button)
    return view


async def like_view(
    likes: LikeService | None,
    station: str,
    info: StationInfo,
    view: discord.ui.View | None,
    lang: Lang = ENGLISH,
) -> discord.ui.View | None:
    """``view`` with the ❤ button of the play on air (/nowplaying); as it was when nothing is
    on air or storage fails (the answer does not wait on storage)."""
    play = info.current_play()
    if likes is None or play is None:
        return view
    try:
        play_id = await likes.play_id(station, play, listeners=info.listener_count, record=True)
    except Exception as error:
        if not likes.storage.is_storage_error(error):
            raise
        return view
    return with_like_button(view, play_id, lang)
