"""A Shoutcast DNAS 2.x (or 1.x) serving the simulator's stations as its streams (sid = station
id), in the shapes of the DNAS's own code (sc_serv 2.6, ``protocol_HTTPStyle.cpp``):

- ``/stats?sid=N&json=1``: the stream's summary; XML without ``json``. A sid the DNAS has no
  stream for answers like a stream without a source (zeros, empty titles, ``streamstatus`` 0).
- ``/played?sid=N&type=json``: the history, newest first, its head the title on air with the time
  it arrived; a 302 to ``index.html?sid=N`` when the history is off; HTML without ``type``.
- ``/7.html``: the 1.x line; ``/listen.pls?sid=N``; the stream itself at its path (silent MP3).

A 1.x DNAS (``version=1``) has only ``/7.html`` and the stream, answers "Invalid resource" to
anything else, and serves the page only to a User-Agent with "Mozilla" (others get the stream).
"""

from __future__ import annotations

import asyncio
import html
import json
from typing import Any

from aiohttp import web

from ..server import BLIP, StationSimulator
from ..station import SimStation

VERSION = "2.6.1.777 (posix(linux x64))"
# One silent MPEG-1 Layer III frame (128 kbit/s, 44.1 kHz): 417 bytes, 26 ms of sound.
SILENT_FRAME = b"\xff\xfb\x90\x00" + bytes(413)
FRAMES_PER_SECOND = 38


def _xml(tag: str, value: object) -> str:
    return f"<{tag}>{html.escape(str(value), quote=False)}</{tag}>"


class ShoutcastSimulator(StationSimulator):
    """The simulator's stations as the streams of one DNAS. ``down`` holds the sids whose source
    is disconnected, ``history_off`` those whose song history is off (``streamsonghistory=0``),
    ``paths`` a stream's configured path (else the DNAS's default: ``/`` for sid 1,
    ``/stream/N/`` for others)."""

    def __init__(self, *, version: int = 2, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.version = version
        self.down: set[int] = set()
        self.history_off: set[int] = set()
        self.paths: dict[int, str] = {}
        self.history_size = 10
        # (query, User-Agent) of each /stats, /played and /7.html request, as received.
        self.received: list[tuple[dict[str, str], str]] = []

    def make_app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/stats", self._dnas_stats)
        app.router.add_get("/played", self._played)
        app.router.add_get("/played.html", self._played)
        app.router.add_get("/7.html", self._seven)
        app.router.add_get("/listen.pls", self._pls)
        app.router.add_get("/index.html", self._index)
        app.router.add_get("/_admin/counters", self._admin_counters)
        app.router.add_post("/_admin/fault", self._admin_fault)
        app.router.add_delete("/_admin/fault", self._admin_clear)
        app.router.add_get("/{path:.*}", self._stream)
        return app

    # What a stream says --------------------------------------------------------------------

    def path(self, sid: int) -> str:
        return self.paths.get(sid) or ("/" if sid == 1 else f"/stream/{sid}/")

    def _sid(self, request: web.Request) -> int:
        raw = request.query.get("sid", "")
        return int(raw) if raw.isdigit() and 0 < int(raw) < 2**31 else 1

    def _on_air(self, sid: int, request: web.Request) -> SimStation | None:
        """The station on air as stream ``sid``: None without a source (or without a stream)."""
        station = self.stations.get(str(sid))
        if station is None or sid in self.down or request.get(BLIP):
            return None
        return station

    def stats(self, sid: int, request: web.Request) -> dict[str, Any]:
        """``getStatsJSONBody`` for one stream: members in its order, only those it writes."""
        station = self.stations.get(str(sid))
        on_air = self._on_air(sid, request)
        moment = self.clock()
        listeners = station.listeners_at(moment) if on_air is not None and station else 0
        body: dict[str, Any] = {
            "currentlisteners": listeners,
            "peaklisteners": max(listeners, 120 if station else 0),
            "maxlisteners": 512,
            "uniquelisteners": max(0, listeners - 3),
            "averagetime": 1337 if listeners else 0,
            "servergenre": "Eclectic" if station else "",
            "servergenre2": "",
            "servergenre3": "",
            "servergenre4": "",
            "servergenre5": "",
            "serverurl": f"{station.public_url.rstrip('/')}/p/{sid}" if station else "",
            "servertitle": station.name if station else "",
            "songtitle": "",
        }
        if on_air is not None:
            now = on_air.programme.at(moment)
            body["songtitle"] = now.item.cast_title
            if now.next_known(moment):
                body["nexttitle"] = on_air.programme.airing(now.number + 1).item.cast_title
        body |= {
            "streamhits": 4242 if station else 0,
            "streamstatus": 1 if on_air is not None else 0,
            "backupstatus": 0,
            "streamlisted": 0,
            "streamlistederror": 200,
            "streampath": self.path(sid),
        }
        if on_air is not None:
            body["streamuptime"] = int(moment - on_air.programme.epoch)
        body |= {
            "bitrate": "128" if on_air is not None else "0",
            "samplerate": "44100" if on_air is not None else "0",
            "content": "audio/mpeg" if on_air is not None else "",
            "version": VERSION,
        }
        return body

    def played(self, sid: int, request: web.Request) -> list[dict[str, Any]]:
        """The history, newest first: each title with the time it arrived. A source that went
        away leaves its history as it was (the DNAS keeps it)."""
        station = self.stations.get(str(sid))
        if station is None:
            return []
        moment = self.clock()
        now = station.programme.at(moment)
        entries: list[dict[str, Any]] = []
        for back in range(self.history_size):
            airing = station.programme.airing(now.number - back)
            if airing.started < station.programme.epoch:
                break  # before the source connected
            item = airing.item
            metadata: dict[str, str] = {"tit2": item.title}
            if item.artist:
                metadata["tpe1"] = item.artist
            entries.append(
                {"playedat": int(airing.started), "title": item.cast_title, "metadata": metadata}
            )
        return entries

    # Endpoints ----------------------------------------------------------------------------

    def _receive(self, request: web.Request) -> int:
        self.received.append((dict(request.query), request.headers.get("User-Agent", "")))
        return self._sid(request)

    async def _dnas_stats(self, request: web.Request) -> web.StreamResponse:
        sid = self._receive(request)
        # Counted and faulted as "info", the endpoint every host has (blips shape only it).
        faulted = await self._arrive(request, "info", str(sid))
        if faulted is not None:
            return faulted
        if self.version == 1:
            return self._invalid_resource()
        body = self.stats(sid, request)
        if request.query.get("json") not in (None, "", "0"):
            callback = request.query.get("callback", "")
            text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
            if callback:
                text = f"{callback}({text})"
            return web.Response(text=text, content_type="application/json", charset="utf-8")
        xml = "".join(_xml(key.upper(), value) for key, value in body.items())
        return web.Response(
            text=f'<?xml version="1.0" encoding="UTF-8" standalone="yes" ?>'
            f"<SHOUTCASTSERVER>{xml}</SHOUTCASTSERVER>",
            content_type="text/xml",
        )

    async def _played(self, request: web.Request) -> web.StreamResponse:
        sid = self._receive(request)
        faulted = await self._arrive(request, "played", str(sid))
        if faulted is not None:
            return faulted
        if self.version == 1:
            return self._invalid_resource()
        if sid in self.history_off:
            raise web.HTTPFound(location=f"index.html?sid={sid}")
        entries = self.played(sid, request)
        if request.query.get("type", "").lower() == "json":
            return web.Response(
                text=json.dumps(entries, ensure_ascii=False, separators=(",", ":")),
                content_type="application/json",
                charset="utf-8",
            )
        rows = "".join(
            f"<tr><td>{e['playedat']}</td><td>{html.escape(e['title'])}</td></tr>" for e in entries
        )
        return web.Response(
            text=f"<html><body><table>{rows}</table></body></html>", content_type="text/html"
        )

    async def _seven(self, request: web.Request) -> web.StreamResponse:
        sid = self._receive(request)
        faulted = await self._arrive(request, "7.html", str(sid))
        if faulted is not None:
            return faulted
        if self.version == 1 and "mozilla" not in request.headers.get("User-Agent", "").lower():
            return await self._audio(request)  # a 1.x DNAS streams to what is not a browser
        body = self.stats(sid, request)
        line = ",".join(
            str(body[key])
            for key in (
                "currentlisteners",
                "streamstatus",
                "peaklisteners",
                "maxlisteners",
                "uniquelisteners",
                "bitrate",
            )
        )
        title = html.escape(body["songtitle"], quote=False)
        return web.Response(
            text=f"<html><body>{line},{title}</body></html>", content_type="text/html"
        )

    async def _pls(self, request: web.Request) -> web.Response:
        sid = self._sid(request)
        self.counters["listen.pls"] += 1
        station = self.stations.get(str(sid))
        url = f"{self.base_url}{self.path(sid)}"
        if url.endswith("/"):
            url += ";"
        name = station.name if station else ""
        return web.Response(
            text=f"[playlist]\nNumberOfEntries=1\nFile1={url}\nTitle1={name}\nLength1=-1\n"
            "Version=2\n",
            content_type="audio/x-scpls",
        )

    async def _index(self, request: web.Request) -> web.Response:
        return web.Response(
            text="<html><body>Shoutcast Server</body></html>", content_type="text/html"
        )

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["path"]
        wanted = path[:-1] if path.endswith("/;") else path
        for station in self.stations.values():
            sid = station.station_id
            own = self.path(sid)
            if wanted in (own, own.rstrip("/") or "/") and sid not in self.down:
                self.counters["listen"] += 1
                return await self._audio(request)
        return web.Response(status=404)

    async def _audio(self, request: web.Request) -> web.StreamResponse:
        """Silent MP3 at its bit rate until the listener goes (as a DNAS streams)."""
        response = web.StreamResponse(
            headers={"Content-Type": "audio/mpeg", "icy-br": "128", "icy-pub": "0"}
        )
        await response.prepare(request)
        second = SILENT_FRAME * FRAMES_PER_SECOND
        try:
            while True:
                await response.write(second)
                await asyncio.sleep(1.0)
        except (ConnectionResetError, RuntimeError):
            pass
        return response

    @staticmethod
    def _invalid_resource() -> web.Response:
        return web.Response(text="Invalid resource", content_type="text/html")
