"""`onair check`'s "Song links" line: whether "Find this song" works with this search, tried
on the song on air (one search; artist and title go to it)."""

from __future__ import annotations

import aiohttp

from ..songlinks import wanted
from ..songlinks.matching import best_match, search_words
from ..songlinks.service import SONG_PAGE
from ..songsearch import SongSearch, SongSearchError
from ..station import Play

PROBE = ("Queen", "Bohemian Rhapsody")  # asked when nothing on air can have a link


async def links_state(
    session: aiohttp.ClientSession, lookup_url: str, play: Play | None
) -> tuple[str, str | None]:
    """("off" | "on" | "failing", the song's page when found, or why it failed)."""
    if lookup_url == "off":
        return "off", None
    search = SongSearch(session, lookup_url)
    song = (play.artist or "", play.title) if play is not None and wanted(play) else None
    try:
        hits = await search.search(*(search_words(*song) if song else PROBE), limit=10)
    except SongSearchError as error:
        return "failing", str(error)
    hit = best_match(*song, hits) if song is not None else None
    return "on", SONG_PAGE.format(track_id=hit.track_id) if hit is not None else None


def links_line(state: str, detail: str | None, *, asked: bool) -> str:
    """One line: off, on (with this song's page, or that it was not found), or failing."""
    if state == "off":
        return "Song links:  off"
    if state == "failing":
        return f"Song links:  failing (the song search did not answer usably: {detail})"
    if detail:
        return f"Song links:  on (this song: {detail})"
    if asked:
        return "Song links:  on (the search answers; this song was not found)"
    return "Song links:  on (the search answers)"
