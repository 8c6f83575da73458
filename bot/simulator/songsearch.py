"""A song search that answers like Apple's iTunes Search API, for the simulator, the demo, the
tests and the bench: ``GET /search?term=...&entity=song&media=music&limit=N``.

Strict like Apple: ``term`` is required, ``limit`` is a whole number from 1 to 200 (50 when
absent), ``media`` and ``entity`` must be ones Apple knows; anything else is a 400 with Apple's
``errorMessage``. Each track of the library is found as its studio recording and as a
"(Live)" one (another id), so a careless matcher is caught. Knobs for tests: ``delay`` (an
event the answer waits for), ``latency`` (seconds), ``fault`` (``status``, ``huge``,
``garbage``, ``hostile``), a counter of searches and ``arrived`` (set by each search).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import unicodedata
from collections.abc import Iterable
from typing import Any

from aiohttp import web

from .library import TRACKS, LibraryItem

MEDIA = frozenset(
    {"movie", "podcast", "music", "musicVideo", "audiobook", "shortFilm", "tvShow", "software"}
)
SONG_ENTITIES = frozenset({"song", "musicTrack", "album", "musicArtist", "mix", "musicVideo"})
MAX_LIMIT = 200
DEFAULT_LIMIT = 50
FAULTS = frozenset({"status", "huge", "garbage", "hostile"})


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    kept = "".join(c for c in decomposed if not unicodedata.category(c).startswith("M"))
    return " ".join("".join(c if c.isalnum() else " " for c in kept).casefold().split())


def _track_id(*parts: str) -> int:
    digest = hashlib.blake2b("|".join(parts).encode(), digest_size=6).digest()
    return 100_000_000 + int.from_bytes(digest, "big") % 1_000_000_000


def _error(message: str) -> web.Response:
    body = {"errorMessage": message, "queryParameters": {}}
    return web.Response(body=json.dumps(body).encode(), status=400, content_type="text/javascript")


class SongSearchSim:
    """The fake search over ``items`` (the simulator's library by default)."""

    def __init__(self, items: Iterable[LibraryItem] = TRACKS, *, artwork_base: str = "") -> None:
        self.items = tuple(i for i in items if i.kind == "track" and i.artist)
        self.artwork_base = artwork_base  # "" = Apple's artwork host (https, never fetched)
        self.searches = 0
        self.terms: list[str] = []
        self.arrived = asyncio.Event()  # a search came in
        self.delay: asyncio.Event | None = None  # answers wait for it when set
        self.latency = 0.0  # seconds every answer takes (the bench's slow server)
        self.fault: str | None = None
        self.fault_status = 503

    def add_routes(self, app: web.Application, path: str = "/search") -> None:
        app.router.add_get(path, self.search)

    def make_app(self) -> web.Application:
        app = web.Application()
        self.add_routes(app)
        return app

    def result(self, item: LibraryItem, *, live: bool = False) -> dict[str, Any]:
        track_id = _track_id(item.artist, item.title, "live" if live else "studio")
        art = self.artwork_base or "https://is1-ssl.mzstatic.com/image/thumb/Music/sim"
        return {
            "wrapperType": "track",
            "kind": "song",
            "trackId": track_id,
            "artistName": item.artist,
            "trackName": f"{item.title} (Live)" if live else item.title,
            "collectionName": f"{item.album} (Live)" if live else item.album,
            "artworkUrl100": f"{art}/{track_id}/100x100bb.jpg",
            "trackViewUrl": f"https://music.apple.com/us/song/{track_id}",
            "primaryGenreName": item.genre,
        }

    async def search(self, request: web.Request) -> web.StreamResponse:
        query = request.query
        term = query.get("term", "")
        if not term.strip():
            return _error("Invalid value(s) for key(s): [term]")
        limit_text = query.get("limit", str(DEFAULT_LIMIT))
        if not limit_text.isdigit() or not 1 <= int(limit_text) <= MAX_LIMIT:
            return _error("Invalid value(s) for key(s): [limit]")
        if query.get("media", "all") not in (MEDIA | {"all"}):
            return _error("Invalid value(s) for key(s): [mediaType]")
        if "entity" in query and query["entity"] not in SONG_ENTITIES:
            return _error("Invalid value(s) for key(s): [entity]")
        self.searches += 1
        self.terms.append(term)
        self.arrived.set()
        if self.delay is not None:
            await self.delay.wait()
        if self.latency:
            await asyncio.sleep(self.latency)
        if self.fault is not None:
            return self._faulty(self.fault)
        words = _fold(term).split()
        results: list[dict[str, Any]] = []
        for item in self.items:
            for live in (True, False):  # the live recording listed first, as a trap
                haystack = _fold(f"{item.artist} {item.title}{' live' if live else ''}").split()
                if all(word in haystack for word in words):
                    results.append(self.result(item, live=live))
        results = results[: int(limit_text)]
        body = {"resultCount": len(results), "results": results}
        return web.Response(
            body=json.dumps(body).encode(), content_type="text/javascript", charset="utf-8"
        )

    def _faulty(self, fault: str) -> web.Response:
        if fault == "status":
            return web.Response(status=self.fault_status, text="unavailable")
        if fault == "huge":
            return web.Response(body=b"[" + b"0," * (5 * 1024 * 1024) + b"0]")
        if fault == "garbage":
            return web.Response(body=b"<html>not json</html>", content_type="text/html")
        # hostile: the right shape with every field wrong
        results = [
            {"trackId": "1; DROP", "artistName": 5, "trackName": None, "kind": "song"},
            {"trackId": True, "artistName": "x", "trackName": "y"},
            {"trackId": -4, "artistName": "x", "trackName": "y"},
            {"trackId": 10**30, "artistName": "x", "trackName": "y"},
            "not an object",
        ]
        return web.Response(body=json.dumps({"resultCount": "many", "results": results}).encode())
