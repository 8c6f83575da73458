"""Song links: the page that lists where a song on air can be heard (Spotify, Apple Music,
YouTube Music, Deezer, Tidal, ...), looked up once per song for a whole fleet.

The song's id comes from a search (``bot.songsearch``, Apple's by default) and the page is
``https://song.link/i/<id>``. Each answer, found or not, is kept in storage for days
(``song_links``) and in this process's memory; a claim in storage lets one process search a
song while the others wait for its answer; searches take tokens of one fleet-wide rate (the
storage's ``take_search_token``, under Apple's ~20 a minute). Nobody waits on a search: the
announcer asks :meth:`SongLinks.known` (memory only) while it renders, and :meth:`find` runs
the search beside it. A search that fails, is slow past its timeout, or is over the rate gives
no link this time (and is not stored): never a wrong one, never a delayed post.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from ..programme.jingles import is_jingle
from ..songsearch import SongSearch, SongSearchError
from ..station import Play, StationInfo
from ..storage import SongLinkRow, Storage
from ..util.links import BUTTON_URL, EMBED_URL, safe_url
from .matching import best_match, fold, search_words

_LOGGER = logging.getLogger("onair.songlinks")

SONG_PAGE = "https://song.link/i/{track_id}"
FOUND_DAYS = 30.0  # a found song's link is kept this long
MISSING_DAYS = 3.0  # a song not found is searched again after this
FAILED_SECONDS = 300.0  # this process does not search a song again this soon after a failure
PER_MINUTE = 20.0  # searches a minute for the whole fleet (Apple allows about 20)
RATE_KEY = ":song-search"  # the rate's row in search_tokens (no station slug has a colon)
TOKEN_WAIT = 30.0  # seconds a search waits for a token before giving up for this play
OTHER_WAIT = 45.0  # seconds a process waits for another process's search of the same song
POLL = 1.0  # seconds between looks at storage while another process searches
MEMORY_SONGS = 5_000  # answers remembered in memory
MAX_NAME = 200  # characters of an artist or title searched
DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class SongLink:
    """The page listing the song's services, and its artwork (https, or None)."""

    url: str
    artwork: str | None = None


def song_key(artist: str, title: str) -> str:
    """One key per song whatever the case, accents and punctuation of its names."""
    return f"{fold(artist[:MAX_NAME])}\n{fold(title[:MAX_NAME])}"


def wanted(play: Play) -> bool:
    """Whether a play can have a link: a song with an artist, not a live show or a jingle."""
    if play.live or not play.artist or not play.title:
        return False
    if not fold(play.artist) or not fold(play.title):
        return False
    return not is_jingle(play.duration, (play.title,), play.item_type)


def link_of(row: SongLinkRow) -> SongLink | None:
    if not row.found or row.track_id <= 0:
        return None
    url = safe_url(SONG_PAGE.format(track_id=row.track_id), BUTTON_URL)
    if url is None:
        return None
    return SongLink(url, safe_url(row.artwork, EMBED_URL, https_only=True) if row.artwork else None)


class SongLinks:
    """Known links (memory), and one search per song for every process on one storage."""

    def __init__(
        self,
        search: SongSearch | None,
        storage: Storage,
        *,
        enabled: bool = True,
        owner: str | None = None,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        per_minute: float = PER_MINUTE,
        token_wait: float = TOKEN_WAIT,
        other_wait: float = OTHER_WAIT,
        poll: float = POLL,
    ) -> None:
        self.search = search
        self.storage = storage
        self.enabled = enabled and search is not None
        self.owner = owner or uuid.uuid4().hex
        self.clock = clock
        self.sleep = sleep
        self.per_second = per_minute / 60.0
        self.token_wait = token_wait
        self.other_wait = other_wait
        self.poll = poll
        self._memory: OrderedDict[str, tuple[SongLink | None, float]] = OrderedDict()
        self._running: dict[str, asyncio.Task[SongLink | None]] = {}
        self.searches = 0  # searches this process sent (tests, the bench)

    def known(self, play: Play) -> SongLink | None:
        """The play's link when this process knows it already (no I/O)."""
        if not self.enabled or not wanted(play):
            return None
        remembered = self._remembered(song_key(play.artist or "", play.title))
        return remembered[0] if remembered is not None else None

    async def find(self, play: Play) -> SongLink | None:
        """The play's link: remembered, stored, or searched once (None: none, or not now).
        Cancelling the caller does not cancel the search: its answer is kept for the next."""
        if not self.enabled or not wanted(play):
            return None
        artist, title = (play.artist or "")[:MAX_NAME], play.title[:MAX_NAME]
        key = song_key(artist, title)
        remembered = self._remembered(key)
        if remembered is not None:
            return remembered[0]
        task = self._running.get(key)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._look_up(key, artist, title))
            self._running[key] = task
            task.add_done_callback(lambda _: self._running.pop(key, None))
        return await asyncio.shield(task)

    async def find_within(self, play: Play, wait: float) -> SongLink | None:
        """:meth:`find`, waited for at most ``wait`` seconds (the search goes on after)."""
        known = self.known(play)
        if known is not None:
            return known
        try:
            return await asyncio.wait_for(self.find(play), wait)
        except TimeoutError:
            return None

    def _remembered(self, key: str) -> tuple[SongLink | None, float] | None:
        entry = self._memory.get(key)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            del self._memory[key]
            return None
        self._memory.move_to_end(key)
        return entry

    def _remember(self, key: str, link: SongLink | None, until: float) -> None:
        self._memory[key] = (link, until)
        self._memory.move_to_end(key)
        while len(self._memory) > MEMORY_SONGS:
            self._memory.popitem(last=False)

    async def _look_up(self, key: str, artist: str, title: str) -> SongLink | None:
        try:
            return await self._stored_or_searched(key, artist, title)
        except Exception as error:
            self.storage.log_fault_or_raise(error, _LOGGER, "song link not looked up: %s", error)
            return None

    async def _stored_or_searched(self, key: str, artist: str, title: str) -> SongLink | None:
        now = self.clock()
        row = await self.storage.song_link(key, now)
        if row is not None:
            return self._known_row(row)
        claim_until = now + self.token_wait + self._search_timeout() + 5.0
        if not await self.storage.claim_song_lookup(key, self.owner, now, claim_until):
            return await self._wait_for_other(key)
        try:
            return await self._search(key, artist, title)
        finally:
            await self.storage.release_song_claim(key, self.owner)

    def _search_timeout(self) -> float:
        return self.search.timeout if self.search is not None else 0.0

    def _known_row(self, row: SongLinkRow) -> SongLink | None:
        link = link_of(row)
        self._remember(row.song_key, link, row.expires_at)
        return link

    async def _wait_for_other(self, key: str) -> SongLink | None:
        """Another process searches the song: its answer, once stored (None when it gives up)."""
        deadline = self.clock() + self.other_wait
        while self.clock() < deadline:
            await self.sleep(self.poll)
            row = await self.storage.song_link(key, self.clock())
            if row is not None:
                return self._known_row(row)
        return None

    async def _take_token(self) -> bool:
        deadline = self.clock() + self.token_wait
        while True:
            if await self.storage.take_search_token(RATE_KEY, self.per_second):
                return True
            if self.clock() >= deadline:
                return False
            await self.sleep(max(1.0, 1.0 / self.per_second) / 2)

    async def _search(self, key: str, artist: str, title: str) -> SongLink | None:
        if self.search is None or not await self._take_token():
            return None  # over the rate: no link this time, nothing stored
        self.searches += 1
        try:
            hits = await self.search.search(*search_words(artist, title))
        except SongSearchError as error:
            _LOGGER.info("song search failed: %s", error)
            self._remember(key, None, self.clock() + FAILED_SECONDS)
            return None
        hit = best_match(artist, title, hits)
        now = self.clock()
        row = (
            SongLinkRow(key, True, hit.track_id, hit.artwork or "", now + FOUND_DAYS * DAY)
            if hit is not None
            else SongLinkRow(key, False, expires_at=now + MISSING_DAYS * DAY)
        )
        await self.storage.save_song_link(row)
        return self._known_row(row)

    async def stop(self) -> None:
        """Cancel the searches in flight (the bot stops); their claims are given back or
        expire."""
        running = list(self._running.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)


def with_artwork(info: StationInfo, link: SongLink | None) -> StationInfo:
    """``info`` with the link's artwork as the play's when the station gives none (Icecast and
    Shoutcast never do); the station's own artwork always wins."""
    if link is None or link.artwork is None:
        return info
    if info.links.artwork or (info.recent and info.recent[0].artwork):
        return info
    return replace(info, links=replace(info.links, artwork=link.artwork))
