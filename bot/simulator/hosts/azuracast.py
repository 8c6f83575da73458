"""AzuraCast simulated: its public now-playing, push, request and schedule endpoints in the real
server's shapes, driven by the simulator's programme.

Shapes from AzuraCast's source: ``Entity/Api/NowPlaying/*.php`` (now playing, in the API and in
the static file nginx serves), Centrifugo's unidirectional SSE behind ``/api/live/nowplaying/sse``
(``{"connect": {..., "subs": {"station:<sc>": {"publications": [...]}}}}`` first, then
``{"channel": "station:<sc>", "pub": {"data": {"np": ..., "triggers": [...], "current_time": ...},
"offset": n}}`` per change and ``{}`` pings), ``Controller/Api/Stations/Requests/*``,
``ScheduleAction`` and ``Entity/Api/Error.php`` for every refusal (an unknown station is 404
``NotFoundException`` "Station not found."; a refused request is 500
``CannotCompleteActionException``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from ..library import LibraryItem
from ..programme import Airing
from ..server import StationSimulator
from ..station import SimStation

PING_SECONDS = 25.0  # Centrifugo's unidirectional ping interval (``ping: 25`` in connect)
WATCH_SECONDS = 0.01  # how often the publisher looks at the programme (real seconds)
SCHEDULE_MAX_ENTRIES = 500  # entries the simulator lists at most (a compressed week is long)
PLAYBACK_DELAY = 0  # AzuraCast adds SongHistory::PLAYBACK_DELAY_SECONDS; 0 keeps tests exact


def _hex(*parts: object, size: int = 12) -> str:
    return hashlib.blake2b("|".join(map(str, parts)).encode(), digest_size=size).hexdigest()


def error_body(code: int, kind: str, message: str, where: str) -> dict[str, Any]:
    """``Api_Error::fromException``: ``extra_data`` names the exception's class, file and line."""
    return {
        "code": code,
        "type": kind,
        "message": message,
        "formatted_message": message,
        "extra_data": {
            "class": kind,
            "file": f"/var/azuracast/www/backend/src/{where}",
            "line": 34,
        },
        "success": False,
    }


def _iso(stamp: int) -> str:
    """ISO 8601 in the station's zone (UTC here), as ``CarbonImmutable::toIso8601String``."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(stamp))


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(body, ensure_ascii=False).encode(),
        status=status,
        content_type="application/json",
    )


NOT_FOUND = error_body(404, "NotFoundException", "Station not found.", "Exception/NotFound.php")


@dataclass
class AzuraStation:
    """An AzuraCast station over a simulated one: its shortcode and what AzuraCast adds."""

    sim: SimStation
    shortcode: str
    requests_enabled: bool = True
    static_file: bool = True
    push: bool = True  # its channel is served by the SSE endpoint (else: 404, as without it)
    request_delay_minutes: int = 5
    # Quirks: "live_no_metadata" (a DJ sending no title), "offline" (the station down).
    quirks: set[str] = field(default_factory=set)
    # (request_id, airing number) of every accepted request.
    pending: list[tuple[str, int]] = field(default_factory=list)
    last_request_at: float | None = None
    # The schedule as an admin edits it: airing number → seconds its slot moved, and the
    # airings whose slot was removed (what airs stays the programme's).
    schedule_moves: dict[int, float] = field(default_factory=dict)
    schedule_removed: set[int] = field(default_factory=set)

    def request_id(self, index: int) -> str:
        return _hex(self.shortcode, index)

    def item_of(self, request_id: str) -> LibraryItem | None:
        desk = self.sim.song_requests
        for index, item in enumerate(desk.library):
            if self.request_id(index) == request_id:
                return item
        return None


class AzuraCastSimulator(StationSimulator):
    """AzuraCast's endpoints for any number of stations, named by number or shortcode."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__(clock=clock)
        self.azura: dict[str, AzuraStation] = {}
        self.sse_enabled = True
        self.publications: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        self._subscribers: dict[str, set[asyncio.Queue[bytes | None]]] = {}
        self._publisher: asyncio.Task[None] | None = None
        self.epoch = _hex("epoch", size=4)
        self.schedule_queries: list[dict[str, str]] = []

    def add_azura(
        self, station_id: int = 1, shortcode: str = "onair_radio", **options: Any
    ) -> AzuraStation:
        sim = self.add_station(station_id, key=None, **options)
        station = AzuraStation(sim, shortcode)
        self.azura[str(station_id)] = station
        self.azura[shortcode] = station
        return station

    def find(self, ref: str) -> AzuraStation | None:
        return self.azura.get(ref)

    # Bodies ------------------------------------------------------------------------------

    def _art(self, station: AzuraStation, airing: Airing) -> str:
        base = station.sim.public_url.rstrip("/")
        sid = station.sim.station_id
        if airing.item.kind == "jingle":  # no art of its own: the station's default art
            return f"{base}/static/uploads/{station.shortcode}/album_art.1700000000.png"
        return f"{base}/api/station/{sid}/art/{_hex(airing.item.cast_title)}-1700000000.jpg"

    def _song(self, station: AzuraStation, airing: Airing) -> dict[str, Any]:
        item = airing.item
        if item.kind == "live" and "live_no_metadata" in station.quirks:
            artist = title = album = genre = ""
            text = ""
        else:
            artist, title, album, genre = item.artist, item.title, item.album, item.genre
            text = f"{artist} - {title}" if artist else title
        return {
            "id": _hex(text, size=16),
            "art": self._art(station, airing),
            "custom_fields": [],
            "text": text,
            "artist": artist,
            "title": title,
            "album": album,
            "genre": genre,
            "isrc": "",
            "lyrics": "",
        }

    @staticmethod
    def _duration(station: AzuraStation, airing: Airing) -> int:
        """Seconds; 0 for a live show (unknown). On a compressed clock a song still reports its
        library length (a 3-minute song aired in 6 s is a song, not a jingle)."""
        if airing.item.kind == "live":
            return 0
        return round(airing.item.seconds if station.sim.library_durations else airing.reported)

    def _history_entry(self, station: AzuraStation, airing: Airing) -> dict[str, Any]:
        return {
            "sh_id": 1000 + airing.number,
            "played_at": int(airing.started),
            "duration": self._duration(station, airing),
            "playlist": "Live" if airing.item.kind == "live" else "Default",
            "streamer": airing.item.artist if airing.item.kind == "live" else "",
            "is_request": any(n == airing.number for _, n in station.pending),
            "song": self._song(station, airing),
        }

    def _station(self, station: AzuraStation) -> dict[str, Any]:
        base = station.sim.public_url.rstrip("/")
        sc, sid = station.shortcode, station.sim.station_id
        host = base.split("://", 1)[-1].split(":")[0]
        listeners = station.sim.listeners_at(self.clock())
        mounts = [
            {
                "id": 1,
                "name": "/radio.mp3 (128kbps MP3)",
                "url": f"https://{host}/listen/{sc}/radio.mp3",
                "bitrate": 128,
                "format": "mp3",
                "listeners": {"total": listeners, "unique": listeners, "current": listeners},
                "path": "/radio.mp3",
                "is_default": True,
            },
            {
                "id": 2,
                "name": "/lofi.aac (64kbps AAC)",
                "url": f"http://{host}:8000/lofi.aac",
                "bitrate": 64,
                "format": "aac",
                "listeners": {"total": 0, "unique": 0, "current": 0},
                "path": "/lofi.aac",
                "is_default": False,
            },
        ]
        return {
            "id": sid,
            "name": station.sim.name,
            "shortcode": sc,
            "description": "Invented music, real code paths: OnAir's AzuraCast simulator.",
            "frontend": "icecast",
            "backend": "liquidsoap",
            "timezone": "UTC",
            "listen_url": f"https://{host}/listen/{sc}/radio.mp3",
            "url": f"{base}/",
            "public_player_url": f"{base}/public/{sc}",
            "playlist_pls_url": f"{base}/public/{sc}/playlist.pls",
            "playlist_m3u_url": f"{base}/public/{sc}/playlist.m3u",
            "is_public": True,
            "requests_enabled": station.requests_enabled,
            "mounts": mounts,
            "remotes": [],
            "hls_enabled": False,
            "hls_is_default": False,
            "hls_url": None,
            "hls_listeners": 0,
        }

    def now_playing(self, station: AzuraStation, moment: float | None = None) -> dict[str, Any]:
        """``Api_NowPlaying`` at ``moment`` (``elapsed`` as ``CurrentSong::recalculate``)."""
        at = self.clock() if moment is None else moment
        programme = station.sim.programme
        now = programme.at(at)
        following = programme.airing(now.number + 1)
        listeners = station.sim.listeners_at(at)
        live = now.item.kind == "live"
        current = self._history_entry(station, now)
        played_at = current["played_at"]
        elapsed = max(0, int(at) + PLAYBACK_DELAY - played_at)
        duration = current["duration"]
        remaining = 0
        if duration:
            if elapsed >= duration:
                elapsed = duration
            else:
                remaining = duration - elapsed
        current |= {"elapsed": elapsed, "remaining": remaining}
        body: dict[str, Any] = {
            "station": self._station(station),
            "listeners": {
                "total": listeners,
                "unique": listeners - listeners // 5,
                "current": listeners,
            },
            "live": {
                "is_live": live,
                "streamer_name": now.item.artist if live else "",
                "broadcast_start": int(now.started) if live else None,
                "art": None,
            },
            "now_playing": current,
            "playing_next": {
                "cued_at": int(following.started) - 10,
                "played_at": int(following.started),
                "duration": float(self._duration(station, following)),
                "playlist": "Default",
                "is_request": any(n == following.number for _, n in station.pending),
                "song": self._song(station, following),
            },
            "song_history": [
                self._history_entry(station, programme.airing(now.number - back))
                for back in range(1, 6)
            ],
            "is_online": True,
            "cache": "hit",
        }
        if "offline" in station.quirks:
            body["is_online"] = False
            body["listeners"] = {"total": 0, "unique": 0, "current": 0}
            body["live"] = {
                "is_live": False,
                "streamer_name": "",
                "broadcast_start": None,
                "art": None,
            }
            body["now_playing"] = {
                "sh_id": 0,
                "played_at": 0,
                "duration": 0,
                "playlist": "",
                "streamer": "",
                "is_request": False,
                "song": {
                    "id": "5a6a865199cf5df73b1417326d2ff24f",
                    "art": self._art(station, following),
                    "custom_fields": [],
                    "text": "Station Offline",
                    "artist": "",
                    "title": "Station Offline",
                    "album": "",
                    "genre": "",
                    "isrc": "",
                    "lyrics": "",
                },
                "elapsed": 0,
                "remaining": 0,
            }
            body["playing_next"] = None
        return body

    def schedule(
        self, station: AzuraStation, start: float | None = None, end: float | None = None
    ) -> list[dict[str, Any]]:
        """``Api_StationSchedule`` of the programme's live shows (the streamers' slots) that
        overlap ``start``-``end`` (the calendar form), else those not ended from now to a day
        and an hour ahead (``getUpcomingSchedule``), soonest first. The compressed programme
        airs a show many times a day and AzuraCast runs a schedule entry once a day, so each
        airing is its own entry (``id``); ``schedule_moves`` and ``schedule_removed`` edit it
        as an admin would, without changing what airs."""
        at = self.clock()
        upcoming = start is None
        low = at - 86400 if start is None else start
        high = at + 86400 + 3600 if end is None else end
        programme = station.sim.programme
        number = programme.at(low).number
        shows: list[dict[str, Any]] = []
        while len(shows) < SCHEDULE_MAX_ENTRIES:
            airing = programme.airing(number)
            number += 1
            if airing.started > high:
                break
            if airing.item.kind != "live" or airing.number in station.schedule_removed:
                continue
            shift = station.schedule_moves.get(airing.number, 0.0)
            begins, ends = int(airing.started + shift), int(airing.ends + shift)
            if ends < low or begins > high or (upcoming and ends < at):
                continue
            shows.append(
                {
                    "id": 100 + airing.number,
                    "type": "streamer",
                    "name": airing.item.artist,
                    "title": airing.item.artist,
                    "description": f"Streamer: {airing.item.artist}",
                    "start_timestamp": begins,
                    "start": _iso(begins),
                    "end_timestamp": ends,
                    "end": _iso(ends),
                    "is_now": begins <= at <= ends,
                }
            )
        if upcoming:
            shows.sort(key=lambda show: show["start_timestamp"])
        return shows

    # Server ------------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/nowplaying/{sid}", self._np)
        app.router.add_get("/api/nowplaying_static/{file}", self._np_static)
        app.router.add_get("/api/live/nowplaying/sse", self._sse)
        app.router.add_get("/api/station/{sid}/requests", self._requests)
        app.router.add_route("*", "/api/station/{sid}/request/{media_id}", self._request)
        app.router.add_get("/api/station/{sid}/schedule", self._schedule)
        app.router.add_get("/_admin/counters", self._admin_counters)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        base = await super().start(host, port)
        self._publisher = asyncio.get_running_loop().create_task(self._publish_changes())
        return base

    async def stop(self) -> None:
        if self._publisher is not None:
            self._publisher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._publisher
            self._publisher = None
        for queues in self._subscribers.values():
            for queue in queues:
                queue.put_nowait(None)
        await super().stop()

    async def _station_or_404(
        self, request: web.Request, endpoint: str
    ) -> AzuraStation | web.StreamResponse:
        sid = request.match_info.get("sid", "")
        faulted = await self._arrive(request, endpoint, sid)
        if faulted is not None:
            return faulted
        station = self.find(sid)
        if station is None:
            return _json(NOT_FOUND, 404)
        return station

    async def _np(self, request: web.Request) -> web.StreamResponse:
        station = await self._station_or_404(request, "nowplaying")
        if not isinstance(station, AzuraStation):
            return station
        return _json(self.now_playing(station))

    async def _np_static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["file"]
        faulted = await self._arrive(request, "nowplaying_static", name)
        if faulted is not None:
            return faulted
        station = self.find(name.removesuffix(".json")) if name.endswith(".json") else None
        if station is None or not station.static_file or station.shortcode + ".json" != name:
            # nginx's try_files: its own 404 page, not AzuraCast's JSON
            return web.Response(
                status=404, text="<html><body>404 Not Found</body></html>", content_type="text/html"
            )
        return _json(self.now_playing(station))

    # Pushes ------------------------------------------------------------------------------

    def _publication(
        self, station: AzuraStation, triggers: list[str]
    ) -> tuple[int, dict[str, Any]]:
        log = self.publications.setdefault(station.shortcode, [])
        offset = (log[-1][0] + 1) if log else 1
        data = {
            "np": self.now_playing(station),
            "triggers": triggers,
            "current_time": int(self.clock()),
        }
        log.append((offset, data))
        del log[:-1]  # the namespace keeps one publication (history_size = 1)
        return offset, data

    def publish(self, station: AzuraStation, triggers: list[str] | None = None) -> None:
        """Publish the station's now playing to its channel, as AzuraCast does on a change."""
        offset, data = self._publication(station, triggers or ["song_changed"])
        channel = f"station:{station.shortcode}"
        line = json.dumps({"channel": channel, "pub": {"data": data, "offset": offset}})
        for queue in self._subscribers.get(station.shortcode, set()):
            queue.put_nowait(f"data: {line}\n\n".encode())

    async def _publish_changes(self) -> None:
        """Publish each station's change the moment its programme moves on."""
        seen: dict[str, int] = {}
        while True:
            for key, station in list(self.azura.items()):
                if key != station.shortcode:
                    continue
                number = station.sim.programme.at(self.clock()).number
                if seen.get(key) != number:
                    first = key not in seen
                    seen[key] = number
                    if first:
                        self._publication(station, ["song_changed"])
                    else:
                        self.publish(station)
            await asyncio.sleep(WATCH_SECONDS)

    async def _sse(self, request: web.Request) -> web.StreamResponse:
        faulted = await self._arrive(request, "sse", "")
        if faulted is not None:
            return faulted
        if not self.sse_enabled or not self._pushing(request.query.get("cf_connect", "")):
            return web.Response(
                status=404, text="<html><body>404 Not Found</body></html>", content_type="text/html"
            )
        try:
            connect = json.loads(request.query.get("cf_connect", "{}"))
            subs = dict(connect.get("subs", {}))
        except (ValueError, AttributeError, TypeError):
            return web.Response(status=400, text="bad request")
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        replies: dict[str, Any] = {}
        joined: list[str] = []
        for channel in subs:
            shortcode = str(channel).removeprefix("station:")
            station = self.find(shortcode)
            if (
                not str(channel).startswith("station:")
                or station is None
                or station.shortcode != shortcode
            ):
                replies[channel] = {}
                continue
            log = self.publications.get(shortcode) or [self._publication(station, ["song_changed"])]
            offset, data = log[-1]
            replies[channel] = {
                "recoverable": True,
                "epoch": self.epoch,
                "publications": [{"data": data, "offset": offset}],
                "offset": offset,
                "positioned": True,
                "was_recovering": True,
                "recovered": True,
            }
            self._subscribers.setdefault(shortcode, set()).add(queue)
            joined.append(shortcode)
        hello = {
            "connect": {
                "client": _hex("client", time.monotonic(), size=16),
                "version": "6.1.0 OSS",
                "subs": replies,
                "ping": int(PING_SECONDS),
                "session": _hex("session", time.monotonic(), size=16),
                "time": int(self.clock() * 1000),
            }
        }
        try:
            await response.write(f"data: {json.dumps(hello)}\n\n".encode())
            while True:
                try:
                    chunk = await asyncio.wait_for(queue.get(), PING_SECONDS)
                except TimeoutError:
                    chunk = b"data: {}\n\n"
                if chunk is None:
                    break
                if chunk == b"drop":
                    half = b'data: {"channel": "station:x", "pub": {"data": {"np": {"stat'
                    await response.write(half)
                    if request.transport is not None:
                        request.transport.close()
                    break
                await response.write(chunk)
        except (ConnectionResetError, RuntimeError):
            pass
        finally:
            for shortcode in joined:
                self._subscribers.get(shortcode, set()).discard(queue)
        return response

    def _pushing(self, cf_connect: str) -> bool:
        """False when a station asked for has pushes off (it is served as a server without
        the endpoint)."""
        for station in self.azura.values():
            if not station.push and f'"station:{station.shortcode}"' in cf_connect:
                return False
        return True

    def drop_streams(self, shortcode: str) -> int:
        """Cut every push stream of ``shortcode`` in the middle of an event; how many."""
        queues = self._subscribers.get(shortcode, set())
        for queue in queues:
            queue.put_nowait(b"drop")
        return len(queues)

    def streams(self, shortcode: str) -> int:
        return len(self._subscribers.get(shortcode, set()))

    # Requests and the schedule -----------------------------------------------------------

    async def _requests(self, request: web.Request) -> web.StreamResponse:
        station = await self._station_or_404(request, "requests")
        if not isinstance(station, AzuraStation):
            return station
        if not station.requests_enabled:
            return _requests_off()
        self.request_queries.append(dict(request.query))
        phrase = request.query.get("searchPhrase", "").strip().casefold()
        desk = station.sim.song_requests
        submit = f"/api/station/{station.sim.station_id}/request/"
        rows: list[dict[str, Any]] = [
            {
                "request_id": station.request_id(index),
                "request_url": submit + station.request_id(index),
                "song": self._song_of(station, item),
            }
            for index, item in enumerate(desk.library)
            if not phrase
            or any(phrase in field.casefold() for field in (item.title, item.artist, item.album))
        ]
        rows.sort(key=lambda row: (row["song"]["artist"], row["song"]["title"]))
        per_page = request.query.get("rowCount", request.query.get("per_page"))
        page = request.query.get("current", request.query.get("page"))
        if per_page is None and page is None:
            return _json(rows)  # the Paginator off: every row
        try:
            size = min(25, int(per_page)) if per_page is not None else 25
            size = 25 if size <= 0 else size
            number = max(1, int(page)) if page is not None else 1
        except ValueError:
            size, number = 25, 1
        pages = max(1, -(-len(rows) // size))
        here = f"/api/station/{station.sim.station_id}/requests"
        return _json(
            {
                "page": number,
                "per_page": size,
                "total": len(rows),
                "total_pages": pages,
                "links": {
                    "first": f"{here}?page=1",
                    "previous": f"{here}?page={max(1, number - 1)}",
                    "next": f"{here}?page={min(pages, number + 1)}",
                    "last": f"{here}?page={pages}",
                },
                "rows": rows[(number - 1) * size : number * size],
            }
        )

    def _song_of(self, station: AzuraStation, item: LibraryItem) -> dict[str, Any]:
        base = station.sim.public_url.rstrip("/")
        return {
            "id": _hex(item.cast_title, size=16),
            "art": f"{base}/api/station/{station.sim.station_id}/art/{_hex(item.cast_title)}.jpg",
            "custom_fields": [],
            "text": item.cast_title,
            "artist": item.artist,
            "title": item.title,
            "album": item.album,
            "genre": item.genre,
            "isrc": "",
            "lyrics": "",
        }

    async def _request(self, request: web.Request) -> web.StreamResponse:
        station = await self._station_or_404(request, "request")
        if not isinstance(station, AzuraStation):
            return station
        if request.method not in ("GET", "POST"):
            return web.Response(status=405, text="Method not allowed")
        if not station.requests_enabled:
            return _requests_off()
        self.request_queries.append(
            {
                "media_id": request.match_info["media_id"],
                "user_agent": request.headers.get("User-Agent", ""),
            }
        )
        media_id = request.match_info["media_id"]
        item = station.item_of(media_id)
        if item is None:
            return _json(
                error_body(
                    404, "NotFoundException", "Record not found.", "Exception/NotFoundException.php"
                ),
                404,
            )

        def refused(reason: str) -> web.Response:
            return _json(
                error_body(
                    500,
                    "CannotCompleteActionException",
                    f"Cannot submit request: {reason}",
                    "Exception/Http/CannotCompleteActionException.php",
                ),
                500,
            )

        if "bot" in request.headers.get("User-Agent", "").casefold():
            return refused("Search engine crawlers are not permitted to use this feature.")
        programme = station.sim.programme
        now = programme.at(self.clock()).number
        if any(n > now and programme.airing(n).item == item for _, n in station.pending):
            return refused("This song was already requested and will play soon.")
        if item in (programme.airing(now - back).item for back in range(3)):
            return refused(
                "This song or artist has been played too recently. "
                "Wait a while before requesting it again."
            )
        keyed = bool(request.headers.get("X-API-Key"))
        threshold = station.request_delay_minutes * 60
        if not keyed and station.last_request_at is not None and threshold:
            wait = station.last_request_at + threshold - self.clock()
            if wait > 0:
                return refused(
                    "You have submitted a request too recently! Please wait "
                    f"{int(-(-wait // 60))} minutes before submitting another one."
                )
        after = max([now, *(n for _, n in station.pending if n > now)])
        number = programme.insert(item, after)
        station.pending.append((media_id, number))
        station.sim.song_requests.accepted.append((number, item))
        station.last_request_at = self.clock()
        return _json(
            {
                "success": True,
                "message": "Your request has been submitted and will be played soon.",
                "formatted_message": "Your request has been submitted and will be played soon.",
            }
        )

    async def _schedule(self, request: web.Request) -> web.StreamResponse:
        station = await self._station_or_404(request, "schedule")
        if not isinstance(station, AzuraStation):
            return station
        self.schedule_queries.append(dict(request.query))
        if "start" in request.query:  # the calendar form: every slot in the range, no rows
            start = _parse_moment(request.query.get("start", ""))
            end = _parse_moment(request.query.get("end", "")) if "end" in request.query else None
            if start is None or ("end" in request.query and end is None):
                return _json(
                    error_body(500, "InvalidFormatException", "Could not parse the date.", "X"),
                    500,
                )
            low, high = (start, end if end is not None else start + 86400)
            return _json(self.schedule(station, min(low, high), max(low, high)))
        try:
            rows = int(request.query.get("rows", "5"))
        except ValueError:
            rows = 5
        return _json(self.schedule(station)[: max(0, rows)])


def _parse_moment(value: str) -> float | None:
    """An ISO 8601 date-time (``Z`` or an offset) as unix seconds; None if unreadable."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _requests_off() -> web.Response:
    """AzuraCast's answer to any request call while the station takes no requests."""
    return _json(
        error_body(
            500,
            "StationUnsupportedException",
            "This station does not currently accept requests.",
            "Exception/StationUnsupportedException.php",
        ),
        500,
    )
