"""Client of a song search that answers like Apple's iTunes Search API.

``GET <lookup_url>?term=...&entity=song&media=music&limit=N`` answers ``{"resultCount": N,
"results": [{"trackId", "artistName", "trackName", "collectionName", "artworkUrl100", "kind":
"song", ...}]}``. The server is untrusted like a station: one private request function carries
every call on the injected (shared) session with its own total timeout, no redirects and a size
cap while streaming; every field is type-checked and bounded, URLs go through ``safe_url``, and
anything else raises one of the small exception hierarchy. Nothing is retried here: the caller
owns the rate.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from typing import Any

import aiohttp
from yarl import URL

from ..util.bodies import read_at_most
from ..util.links import EMBED_URL, safe_url
from ..util.text import one_line
from .errors import SongSearchAnswerError, SongSearchError, SongSearchUnavailable
from .models import SongHit

ITUNES_SEARCH_URL = "https://itunes.apple.com/search"
TIMEOUT = 5.0  # seconds for a whole search, answer read
MAX_BODY = 512 * 1024  # bytes of an answer (a 25-result answer is ~25 KiB)
MAX_RESULTS = 25  # results asked for and read
MAX_TERM = 200  # characters of the search term sent
MAX_TEXT = 200  # characters of a name kept
MAX_TRACK_ID = 10**15
ARTWORK_SIZE = "600x600"
# Apple's artwork URLs end in the size asked for: ".../100x100bb.jpg" serves 600x600 as
# ".../600x600bb.jpg".
_ARTWORK_SIZE = re.compile(r"/\d{2,4}x\d{2,4}(bb|cc|sr)?\.(jpg|jpeg|png|webp)$")


class SongSearch:
    """Searches songs by artist and title on ``url`` through ``session`` (the bot's one
    session: its resolver's guard applies)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        url: str = ITUNES_SEARCH_URL,
        *,
        timeout: float = TIMEOUT,
    ) -> None:
        self.session = session
        self.url = url
        self.timeout = timeout

    @property
    def server(self) -> str:
        return URL(self.url).host or "?"

    async def search(
        self, artist: str, title: str, *, limit: int = MAX_RESULTS
    ) -> tuple[SongHit, ...]:
        """The songs found for ``artist`` and ``title`` (at most ``limit``), in the server's
        order; () when none."""
        term = " ".join(f"{artist} {title}".split())[:MAX_TERM]
        payload = await self._get(
            {
                "term": term,
                "entity": "song",
                "media": "music",
                "limit": str(min(limit, MAX_RESULTS)),
            }
        )
        return parse_results(payload)[:limit]

    async def _get(self, params: Mapping[str, str]) -> Any:
        """The one request: a total timeout, no redirects, the body capped as it streams."""
        try:
            async with asyncio.timeout(self.timeout):
                async with self.session.get(
                    self.url, params=dict(params), allow_redirects=False
                ) as response:
                    if response.status == 429 or response.status >= 500:
                        raise SongSearchUnavailable(f"{self.server}: HTTP {response.status}")
                    if response.status != 200:
                        raise SongSearchAnswerError(f"{self.server}: HTTP {response.status}")
                    body = await read_at_most(response, MAX_BODY)
        except SongSearchError:
            raise
        except TimeoutError:
            raise SongSearchUnavailable(f"{self.server}: timed out") from None
        except aiohttp.ClientError as error:
            raise SongSearchUnavailable(f"{self.server}: {type(error).__name__}") from None
        except OSError as error:
            raise SongSearchUnavailable(f"{self.server}: {type(error).__name__}") from None
        if body is None:
            raise SongSearchAnswerError(f"{self.server}: answer over {MAX_BODY} bytes")
        try:
            return json.loads(body)
        except (ValueError, RecursionError):
            raise SongSearchAnswerError(f"{self.server}: not JSON") from None


def parse_results(payload: Any) -> tuple[SongHit, ...]:
    """The usable songs of an answer; a payload that is not an answer raises. A result with a
    field of the wrong type, or not a song, is skipped alone; an answer with results of which
    none is usable raises too (it says nothing: not "not found")."""
    if not isinstance(payload, Mapping) or not isinstance(payload.get("results"), list):
        raise SongSearchAnswerError("not a search answer")
    count = payload.get("resultCount")
    if isinstance(count, bool) or not isinstance(count, int):
        raise SongSearchAnswerError("not a search answer (resultCount)")
    results = payload["results"]
    hits: list[SongHit] = []
    for item in results[: MAX_RESULTS * 4]:
        hit = parse_hit(item)
        if hit is not None:
            hits.append(hit)
            if len(hits) >= MAX_RESULTS:
                break
    if results and not hits:
        raise SongSearchAnswerError("no usable result in the answer")
    return tuple(hits)


def parse_hit(item: Any) -> SongHit | None:
    if not isinstance(item, Mapping):
        return None
    kind = item.get("kind")
    if kind is not None and kind != "song":
        return None
    track_id = item.get("trackId")
    if isinstance(track_id, bool) or not isinstance(track_id, int):
        return None
    if not 0 < track_id < MAX_TRACK_ID:
        return None
    artist = bounded_text(item.get("artistName"))
    title = bounded_text(item.get("trackName"))
    if not artist or not title:
        return None
    return SongHit(
        track_id,
        artist,
        title,
        bounded_text(item.get("collectionName")),
        artwork_url(item.get("artworkUrl100")),
    )


def artwork_url(value: Any) -> str | None:
    """Apple's 100x100 artwork URL asked at 600x600; None unless a safe https URL."""
    if not isinstance(value, str):
        return None
    url = safe_url(value, EMBED_URL, https_only=True)
    if url is None or "?" in url or "#" in url:
        return None
    return _ARTWORK_SIZE.sub(lambda m: f"/{ARTWORK_SIZE}{m[1] or ''}.{m[2]}", url)


def bounded_text(value: Any, limit: int = MAX_TEXT) -> str:
    """A server's text as one plain line of at most ``limit`` characters ("" when not text)."""
    return one_line(value, limit)
