"""The station simulator as an aiohttp application on loopback.

Serves ``/api/info/<id>``, both playlist paths, ``/api/getstats/<id>``, the song requests under
``/w/`` (``requests.py``), a song search like Apple's at ``/search`` (``songsearch.py``),
artwork and logos, plus
``/_admin/*`` for faults, quirks and request counters. Used by ``onair simulate``, the demo, the
tests and the benchmarks.
"""

from __future__ import annotations

import asyncio
import json
import struct
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import date
from typing import Any

from aiohttp import web

from ..util.tasks import StartStop
from .faults import BLIPS, Fault, FaultPlan
from .programme import Programme
from .requests import REQUEST_SHAPES
from .songsearch import SongSearchSim
from .station import QUIRKS, SimStation, _stable

Clock = Callable[[], float]
BLIP = web.RequestKey("blip", str)  # a blip fault taken for this request: how to shape it


class ManualClock:
    """A clock tests move by hand, so programme changes happen exactly when a test says."""

    def __init__(self, start: float | None = None) -> None:
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def _png(rgb: tuple[int, int, int], size: int = 16) -> bytes:
    """A tiny solid-colour PNG, made without an imaging library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        payload = kind + data
        return struct.pack(">I", len(data)) + payload + struct.pack(">I", zlib.crc32(payload))

    row = b"\x00" + bytes(rgb) * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * size))
        + chunk(b"IEND", b"")
    )


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(
        body=json.dumps(body, ensure_ascii=False).encode(),
        status=status,
        content_type="application/json",
    )


class StationSimulator(StartStop):
    """Any number of simulated stations behind one loopback HTTP server."""

    def __init__(self, *, clock: Clock = time.time) -> None:
        self.clock = clock
        self.stations: dict[str, SimStation] = {}
        self.faults = FaultPlan()
        self.counters: Counter[str] = Counter()
        self.playlist_paths: set[str] = {"api/getplaylist", "api/info/getplaylist"}
        self.playlist_size: int | None = None
        self.latency: float = 0.0
        # (clock time, "endpoint:station") of every request, when a benchmark asks for it
        self.request_log: list[tuple[float, str]] | None = None
        # The query of every song-request call as received, decoded (what a test checks).
        self.request_queries: list[dict[str, str]] = []
        self._runner: web.AppRunner | None = None
        self.base_url = ""
        # A song search like Apple's (``/search``): "Find this song" against the simulator.
        self.song_search = SongSearchSim()

    # Setup ------------------------------------------------------------------------------

    def add_station(
        self,
        station_id: int = 1,
        *,
        key: str | None = "demo-key",
        seed: int = 1,
        speed: float = 1.0,
        track_seconds: tuple[float, float] | None = None,
        programme: Programme | None = None,
        **options: Any,
    ) -> SimStation:
        programme = programme or Programme.generate(
            seed=seed + station_id, now=self.clock(), speed=speed, track_seconds=track_seconds
        )
        station = SimStation(station_id, programme, key=key, seed=seed, **options)
        self.stations[str(station_id)] = station
        return station

    def station(self, station_id: int | str = 1) -> SimStation:
        return self.stations[str(station_id)]

    def set_quirks(self, names: Iterable[str], station_id: int | str | None = None) -> None:
        wanted = set(names)
        unknown = wanted - QUIRKS
        if unknown:
            raise ValueError(f"unknown quirks {sorted(unknown)}; known: {sorted(QUIRKS)}")
        targets = [self.station(station_id)] if station_id is not None else self.stations.values()
        for station in targets:
            station.quirks = set(wanted)

    def inject(self, kind: str, **options: Any) -> Fault:
        fault = Fault(kind, **options)
        self.faults.add(fault)
        return fault

    # Server -----------------------------------------------------------------------------

    def make_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/api/info/getplaylist/{sid}", self._playlist_stated)
        app.router.add_get("/api/info/{sid}", self._info)
        app.router.add_get("/api/getplaylist/{sid}", self._playlist_example)
        app.router.add_get("/api/getstats/{sid}", self._stats)
        app.router.add_get("/artwork/{sid}/{art}.png", self._image)
        app.router.add_get("/logo/{sid}.png", self._image)
        app.router.add_get("/w/songrequestsearch", self._request_search)
        app.router.add_get("/w/songrequestmake", self._request_make)
        app.router.add_get("/w/songrequestlist", self._request_list)
        self.song_search.add_routes(app)
        app.router.add_get("/_admin/counters", self._admin_counters)
        app.router.add_post("/_admin/fault", self._admin_fault)
        app.router.add_delete("/_admin/fault", self._admin_clear)
        app.router.add_post("/_admin/quirks", self._admin_quirks)
        app.router.add_post("/_admin/requests", self._admin_requests)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        # A handler whose client gave up (a timed-out "delay" fault) is cancelled, not awaited:
        # stop() is instant instead of waiting out the fault.
        self._runner = web.AppRunner(self.make_app(), access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        addresses = self._runner.addresses
        bound_port = int(addresses[0][1]) if addresses else port
        self.base_url = f"http://{host}:{bound_port}"
        for station in self.stations.values():
            if station.public_url == "http://127.0.0.1":
                station.public_url = self.base_url
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # Request handling -------------------------------------------------------------------

    async def _prepare(
        self, request: web.Request, endpoint: str
    ) -> SimStation | web.StreamResponse:
        """Count, apply latency and faults, check the station and key."""
        faulted = await self._arrive(request, endpoint, request.match_info.get("sid", ""))
        if faulted is not None:
            return faulted
        station = self.stations.get(request.match_info["sid"])
        if station is None:
            return _json({"error": "Station not found"}, status=404)
        if not station.key_ok(request.query.get("key")):
            return _json({"error": "Invalid API key"}, status=403)
        return station

    async def _arrive(
        self, request: web.Request, endpoint: str, sid: str
    ) -> web.StreamResponse | None:
        """Count and log the call, apply latency and faults: the fault's answer, or None (the
        station answers)."""
        self.counters[endpoint] += 1
        self.counters[f"{endpoint}:{sid}"] += 1
        self.counters["total"] += 1
        if self.request_log is not None:
            self.request_log.append((self.clock(), f"{endpoint}:{sid}"))
        if self.latency:
            await asyncio.sleep(self.latency)
        fault = self.faults.take(endpoint, sid)
        if fault is not None and fault.kind in BLIPS:
            request[BLIP] = fault.kind  # the station answers, this answer shaped by it
        elif fault is not None:
            return await self._fault_response(request, fault)
        return None

    async def _fault_response(self, request: web.Request, fault: Fault) -> web.StreamResponse:
        kind = fault.kind
        if kind == "status":
            headers = {}
            if fault.retry_after is not None:
                headers["Retry-After"] = str(fault.retry_after)
            return web.Response(status=fault.status, text=fault.body or "", headers=headers)
        if kind == "delay":
            await asyncio.sleep(fault.seconds)
            return _json({})
        if kind == "html":
            return web.Response(
                text="<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>",
                content_type="text/html",
            )
        if kind == "truncated":
            return web.Response(
                body=b'{"station_name": "OnAir", "recent": [{"tit', content_type="application/json"
            )
        if kind == "json_array":
            return _json([1, 2, 3])
        if kind == "json_null":
            return _json(None)
        if kind == "empty":
            return web.Response(body=b"", content_type="application/json")
        if kind == "redirect":
            raise web.HTTPFound(location=fault.body or "/")
        if kind == "error_json":
            return _json({"error": "Invalid API key"})
        if kind == "huge":
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            await response.prepare(request)
            block = b" " * (1024 * 1024)
            try:
                await response.write(b'{"pad": "')
                for _ in range(10):
                    await response.write(block)
                await response.write(b'"}')
            except (ConnectionResetError, RuntimeError):
                pass
            return response
        # drop: close the socket without writing a response
        transport = request.transport
        if transport is not None:
            transport.close()
        raise asyncio.CancelledError

    async def _info(self, request: web.Request) -> web.StreamResponse:
        station = await self._prepare(request, "info")
        if not isinstance(station, SimStation):
            return station
        return _json(station.info(self.clock(), request.get(BLIP)))

    async def _playlist(self, request: web.Request, path: str) -> web.StreamResponse:
        if path not in self.playlist_paths:
            self.counters[path] += 1
            return web.Response(status=404, text="404: Not Found")
        station = await self._prepare(request, path)
        if not isinstance(station, SimStation):
            return station
        return _json(station.playlist(self.clock(), self.playlist_size))

    async def _playlist_example(self, request: web.Request) -> web.StreamResponse:
        return await self._playlist(request, "api/getplaylist")

    async def _playlist_stated(self, request: web.Request) -> web.StreamResponse:
        return await self._playlist(request, "api/info/getplaylist")

    async def _stats(self, request: web.Request) -> web.StreamResponse:
        station = await self._prepare(request, "stats")
        if not isinstance(station, SimStation):
            return station
        today = date.fromtimestamp(self.clock())
        try:
            first = date.fromisoformat(request.query.get("from", today.isoformat()))
            last = date.fromisoformat(request.query.get("to", today.isoformat()))
        except ValueError:
            return _json({"error": "Bad date"}, status=400)
        return _json(station.stats(first, last))

    async def _image(self, request: web.Request) -> web.Response:
        self.counters["image"] += 1
        seed = _stable(request.path)
        colour = (seed & 0xFF, (seed >> 8) & 0xFF, (seed >> 16) & 0xFF)
        return web.Response(body=_png(colour), content_type="image/png")

    # Song requests (public: no key; the station named by ``u``) ------------------------

    async def _public(self, request: web.Request, endpoint: str) -> SimStation | web.StreamResponse:
        sid = request.query.get("u", "")
        self.request_queries.append(dict(request.query))
        faulted = await self._arrive(request, endpoint, sid)  # (blips are info's alone)
        if faulted is not None:
            return faulted
        station = self.stations.get(sid)
        if station is None:
            return _json({"error": True, "message": "Unknown station"})
        return station

    async def _request_search(self, request: web.Request) -> web.StreamResponse:
        station = await self._public(request, "songrequestsearch")
        if not isinstance(station, SimStation):
            return station
        return _json(station.song_requests.search(request.query.get("q", "")))

    async def _request_make(self, request: web.Request) -> web.StreamResponse:
        station = await self._public(request, "songrequestmake")
        if not isinstance(station, SimStation):
            return station
        now = station.programme.at(self.clock()).number
        return _json(station.song_requests.make(request.query.get("id", ""), now))

    async def _request_list(self, request: web.Request) -> web.StreamResponse:
        station = await self._public(request, "songrequestlist")
        if not isinstance(station, SimStation):
            return station
        try:
            count = min(100, int(request.query.get("cnt", "10")))
        except ValueError:
            count = 10
        now = station.programme.at(self.clock()).number
        return _json(station.song_requests.listing(count, now))

    async def _admin_counters(self, request: web.Request) -> web.Response:
        return _json(dict(self.counters))

    async def _admin_fault(self, request: web.Request) -> web.Response:
        try:
            fault = Fault.from_json(await request.json())
        except (ValueError, TypeError) as exc:
            return _json({"error": str(exc)}, status=400)
        self.faults.add(fault)
        return _json({"ok": True, "faults": len(self.faults)})

    async def _admin_clear(self, request: web.Request) -> web.Response:
        self.faults.clear()
        return _json({"ok": True})

    async def _admin_quirks(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
            self.set_quirks(body.get("quirks", []), body.get("station"))
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            return _json({"error": str(exc)}, status=400)
        return _json({"ok": True})

    async def _admin_requests(self, request: web.Request) -> web.Response:
        """Switch a station's request rules: off, shape, refusal (and its member)."""
        try:
            body = await request.json()
            rules = self.station(body.get("station", 1)).song_requests
            rules.off = bool(body.get("off", rules.off))
            shape = body.get("shape", rules.shape)
            if shape not in REQUEST_SHAPES:
                raise ValueError(f"unknown shape {shape!r}; known: {sorted(REQUEST_SHAPES)}")
            rules.shape = shape
            rules.refusal = body.get("refusal", rules.refusal)
            rules.refusal_key = body.get("refusal_key", rules.refusal_key)
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            return _json({"error": str(exc)}, status=400)
        return _json({"ok": True})
