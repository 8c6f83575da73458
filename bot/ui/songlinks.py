"""The "Find this song" button of announcements and /nowplaying: a link to the page listing
the song's streaming services (``bot.songlinks``)."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import discord

from ..render.embeds import BUTTONS_PER_ROW, COMPONENTS
from ..util.i18n import ENGLISH, N_, Lang
from ..util.links import BUTTON_URL, safe_url

if TYPE_CHECKING:
    from ..songlinks import SongLink, SongLinks
    from ..station import StationInfo

FIND_SONG = N_("Find this song")
FIND_SONG_EMOJI = "🔎"
ROWS = COMPONENTS // BUTTONS_PER_ROW


def with_song_link(
    view: discord.ui.View | None, link: SongLink | None, lang: Lang = ENGLISH
) -> discord.ui.View | None:
    """``view`` with the link button in its first row that has room (as it was when there is
    no link, its URL is not one Discord takes, or the view is full). A fresh view: renderings
    are shared."""
    url = safe_url(link.url, BUTTON_URL) if link is not None else None
    if url is None:
        return view
    fresh = discord.ui.View(timeout=None)
    for item in view.children if view is not None else ():
        fresh.add_item(copy.copy(item))
    rows = Counter(item.row or 0 for item in fresh.children)
    free = next((row for row in range(ROWS) if rows[row] < BUTTONS_PER_ROW), None)
    if free is None:
        return fresh
    button: discord.ui.Button[Any] = discord.ui.Button(
        label=lang.t(FIND_SONG), emoji=FIND_SONG_EMOJI, url=url, row=free
    )
    fresh.add_item(button)
    return fresh


# Seconds /nowplaying waits for a song's link not known yet (the reply is deferred if slower).
NOWPLAYING_WAIT = 2.0


async def nowplaying_link(
    links: SongLinks | None,
    shown: Callable[[int], Awaitable[bool]] | None,
    guild_id: int | None,
    info: StationInfo,
    *,
    stale: bool,
) -> SongLink | None:
    """The link /nowplaying shows for what is on air: none for a station not answering, a
    guild that hides it, or a song not found within :data:`NOWPLAYING_WAIT`."""
    play = info.current_play()
    if links is None or play is None or stale:
        return None
    if guild_id is not None and shown is not None and not await shown(guild_id):
        return None
    return await links.find_within(play, NOWPLAYING_WAIT)
