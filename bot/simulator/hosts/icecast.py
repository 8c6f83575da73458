"""An Icecast 2 server on loopback, driven by the simulator's programme.

It serves what a real Icecast 2.4.4 serves (xiph/Icecast-Server):

- ``/status-json.xsl``: ``{"icestats": {...}}`` written by xml2json.xslt's rules from the stats
  tree (every value is XML text; members in the stats tree's order, which is alphabetical; the
  hidden ones leave the trailing ``"dummy":null``): ``source`` is ONE object when one mount is
  up, a LIST when several are, ABSENT when none. Its quirks behind switches (``QUIRKS``):
  ``xml2json_24`` writes number-like text bare the way 2.4.4 does (``"title": - ,``, ``.5``,
  a title ``1979`` as a number, ``true`` as a boolean; unescaped control characters);
  ``startup`` drops the ``{`` of ``icestats`` as right after start-up (issue 38);
  ``no_metadata`` serves the stream without ``icy-metaint``; ``metaint_zero`` announces 0.
- each mount's stream: MP3 silence frames at the mount's bit rate with ICY metadata every
  ``metaint`` bytes when the listener asks (``Icy-MetaData: 1``): a block with the title when
  the mount's metadata changed since this listener's last block (the programme's next item, or
  an admin update, even to the same title), else one zero byte. A new listener first gets a
  burst of older audio that starts mid-frame, and its first block names the title of that
  older audio, as Icecast's burst does.
- ``/admin/metadata?mount=/live&mode=updinfo&song=...`` with HTTP basic auth: the title until
  the programme moves on; without ``charset=UTF-8`` the status page shows the song's UTF-8
  read as Latin-1 (Icecast converts from the mount's default charset, ISO8859-1), while the
  stream carries the bytes as sent.
- ``/_admin/counters`` (requests by endpoint) for tests and the benchmark.
"""

from __future__ import annotations

import asyncio
import base64
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from ...util.tasks import StartStop
from ..programme import Programme

Clock = Callable[[], float]

QUIRKS = frozenset({"xml2json_24", "startup", "no_metadata", "metaint_zero"})

# One silent MPEG-1 Layer III frame, 128 kbit/s, 44.1 kHz, joint stereo: a header and zeroed
# side info and main data decode as 26 ms of silence.
SILENT_FRAME = b"\xff\xfb\x90\x44" + bytes(413)
FRAME_SECONDS = 1152 / 44100
MAX_META = 255 * 16
ADMIN_OK = (
    '<?xml version="1.0"?>\n<iceresponse><message>Metadata update successful</message>'
    "<return>1</return></iceresponse>\n"
)


def _error_page(status: int, message: str, **headers: str) -> web.Response:
    """Icecast 2.4's error answer (``client_send_error``)."""
    body = (
        f"<html><head><title>Error {status}</title></head>"
        f"<body><b>{status} - {message}</b></body></html>"
    )
    return web.Response(status=status, text=body, content_type="text/html", headers=headers)


def _http_date(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%a, %d %b %Y %H:%M:%S +0000")


def _iso(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")


@dataclass
class SimMount:
    """One mount and its source: the programme says what is on air unless an admin update
    named something else during the current item."""

    mount: str
    programme: Programme
    name: str = "OnAir Radio"
    description: str = "Music all day"
    genre: str = "Various"
    url: str = "https://onair.example/"
    up: bool = True
    audio_info: bool = True  # the source sent ice-audio-info (bitrate, channels, samplerate)
    started: float = 0.0
    listeners: int = 3
    # An admin update: (title as the stats show it, bytes as the stream carries them, the
    # programme's play it was made during, its sequence number)
    update: tuple[str, bytes, int, int] | None = None
    updates: int = 0
    open_streams: int = 0

    def now(self, moment: float) -> tuple[str, bytes, tuple[int, int]]:
        """(stats title, stream bytes, metadata version) at ``moment``."""
        airing = self.programme.at(moment)
        if self.update is not None and self.update[2] == airing.number:
            return self.update[0], self.update[1], (airing.number, self.update[3])
        title = airing.item.cast_title
        return title, title.encode("utf-8"), (airing.number, 0)


@dataclass
class IcecastSimulator(StartStop):
    """Icecast 2 on loopback: any number of mounts behind one server."""

    clock: Clock = time.time
    hostname: str | None = None  # the configured <hostname> (listenurl); None: the bound one
    admin_user: str = "admin"
    admin_password: str = "hackme"
    metaint: int = 16000
    byte_rate: float = len(SILENT_FRAME) / FRAME_SECONDS  # 128 kbit/s
    burst_bytes: int = 65535
    server_started: float = field(default_factory=time.time)
    quirks: set[str] = field(default_factory=set)
    mounts: dict[str, SimMount] = field(default_factory=dict)
    counters: Counter[str] = field(default_factory=Counter)
    seed: int = 33
    base_url: str = ""
    port: int = 0

    def __post_init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._random = random.Random(self.seed)
        self._streams: dict[int, web.Request] = {}  # id(request): requests are unhashable

    # Setup -------------------------------------------------------------------------------

    def add_mount(
        self,
        mount: str = "/live",
        *,
        programme: Programme | None = None,
        seed: int = 1,
        speed: float = 1.0,
        track_seconds: tuple[float, float] | None = None,
        **options: Any,
    ) -> SimMount:
        programme = programme or Programme.generate(
            seed=seed, now=self.clock(), speed=speed, track_seconds=track_seconds, with_live=False
        )
        options.setdefault("started", self.clock() - 3600)
        sim = SimMount(mount, programme, **options)
        self.mounts[mount] = sim
        return sim

    def set_quirks(self, names: set[str] | frozenset[str]) -> None:
        unknown = set(names) - QUIRKS
        if unknown:
            raise ValueError(f"unknown quirks {sorted(unknown)}; known: {sorted(QUIRKS)}")
        self.quirks = set(names)

    def update_title(self, mount: str, song: str, *, utf8: bool = True) -> None:
        """What ``/admin/metadata`` does (``utf8``: the request said ``charset=UTF-8``)."""
        sim = self.mounts[mount]
        raw = song.encode("utf-8")
        shown = song if utf8 else raw.decode("latin-1")
        sim.updates += 1
        sim.update = (shown, raw, sim.programme.at(self.clock()).number, sim.updates)

    def drop_streams(self) -> int:
        """Close every open stream connection (Icecast's killclient)."""
        dropped = 0
        for request in list(self._streams.values()):
            if request.transport is not None:
                request.transport.close()
                dropped += 1
        return dropped

    # Server ------------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int | None = None) -> str:
        app = web.Application()
        app.router.add_get("/status-json.xsl", self._status)
        app.router.add_get("/admin/metadata", self._admin_metadata)
        app.router.add_get("/_admin/counters", self._counters)
        app.router.add_get("/{path:.*}", self._stream)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, self.port if port is None else port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        self.base_url = f"http://{host}:{self.port}"
        return self.base_url

    async def stop(self) -> None:
        self.drop_streams()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # Status page -------------------------------------------------------------------------

    def status_body(self) -> str:
        """The status-json.xsl body now, written by xml2json's rules (and quirks)."""
        moment = self.clock()
        old = "xml2json_24" in self.quirks
        host = self.hostname or "127.0.0.1"
        server = [
            ("admin", "icemaster@localhost"),
            ("host", host),
            ("location", "Earth"),
            ("server_id", "Icecast 2.4.4"),
            ("server_start", _http_date(self.server_started)),
            ("server_start_iso8601", _iso(self.server_started)),
        ]
        if "startup" in self.quirks:
            server = server[4:]
        sources = [self._source_members(m, host, moment) for m in self.mounts.values() if m.up]
        parts = [f"{_key(k)}:{_value(v, old)}" for k, v in server]
        if len(sources) == 1:
            parts.append(f'"source":{_object(sources[0], old)}')
        elif sources:
            parts.append('"source":[' + ",".join(_object(s, old) for s in sources) + "]")
        parts.append('"dummy":null')
        opening = "" if "startup" in self.quirks else "{"
        return '{"icestats":' + opening + ",".join(parts) + "}}"

    def _source_members(self, sim: SimMount, host: str, moment: float) -> list[tuple[str, str]]:
        title, _raw, _version = sim.now(moment)
        members = {
            "genre": sim.genre,
            "listener_peak": str(max(sim.listeners, 7)),
            "listeners": str(sim.listeners + sim.open_streams),
            "listenurl": f"http://{host}:{self.port}{sim.mount}",
            "server_description": sim.description,
            "server_name": sim.name,
            "server_type": "audio/mpeg",
            "server_url": sim.url,
            "stream_start": _http_date(sim.started),
            "stream_start_iso8601": _iso(sim.started),
            "title": title,
        }
        if sim.audio_info:
            members |= {
                "audio_bitrate": "128000",
                "audio_info": "channels=2;samplerate=44100;bitrate=128",
                "bitrate": "128",
                "channels": "2",
                "ice-bitrate": "128",
                "samplerate": "44100",
            }
        return sorted(members.items())

    async def _status(self, request: web.Request) -> web.Response:
        self.counters["status"] += 1
        return web.Response(
            body=self.status_body().encode("utf-8"),
            headers={
                "Content-Type": "application/json; charset=utf-8",
                "Server": "Icecast 2.4.4",
                "Cache-Control": "no-cache",
                "Access-Control-Allow-Origin": "*",
            },
        )

    # Admin -------------------------------------------------------------------------------

    def _authorised(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:]).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        return (user, password) == (self.admin_user, self.admin_password)

    async def _admin_metadata(self, request: web.Request) -> web.Response:
        self.counters["admin"] += 1
        if not self._authorised(request):
            return _error_page(
                401,
                "You need to authenticate\r\n",
                **{"WWW-Authenticate": 'Basic realm="Icecast2 Server"'},
            )
        sim = self.mounts.get(request.query.get("mount", ""))
        if sim is None or not sim.up:
            return _error_page(400, "Source does not exist")
        if "mode" not in request.query:
            return _error_page(400, "Missing parameter")
        if request.query["mode"] != "updinfo":
            return web.Response(
                text='<?xml version="1.0"?>\n<iceresponse><message>No such action</message>'
                "<return>0</return></iceresponse>\n",
                content_type="text/xml",
            )
        song = request.query.get("song")
        if song is not None and len(song.encode("utf-8")) + 16 <= MAX_META:
            utf8 = request.query.get("charset", "").upper().replace("-", "") == "UTF8"
            self.update_title(sim.mount, song, utf8=utf8)
        return web.Response(text=ADMIN_OK, content_type="text/xml")

    async def _counters(self, request: web.Request) -> web.Response:
        return web.json_response(dict(self.counters))

    # Streams -----------------------------------------------------------------------------

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["path"]
        sim = self.mounts.get(path)
        if sim is None or not sim.up:
            self.counters["not_found"] += 1
            return _error_page(404, "The file you requested could not be found")
        self.counters["stream"] += 1
        icy = request.headers.get("Icy-MetaData", "").strip() == "1"
        headers = {
            "Content-Type": "audio/mpeg",
            "Server": "Icecast 2.4.4",
            "Cache-Control": "no-cache, no-store",
            "icy-name": sim.name,
            "icy-description": sim.description,
            "icy-genre": sim.genre,
            "icy-pub": "0",
        }
        metaint = self.metaint
        if icy and "no_metadata" not in self.quirks:
            headers["icy-metadata"] = "1"
            headers["icy-metaint"] = "0" if "metaint_zero" in self.quirks else str(metaint)
            icy = "metaint_zero" not in self.quirks
        else:
            icy = False
        response = web.StreamResponse(headers=headers)
        await response.prepare(request)
        self._streams[id(request)] = request
        sim.open_streams += 1
        try:
            await self._send(response, sim, icy, metaint)
        except (ConnectionError, asyncio.CancelledError, RuntimeError):
            pass
        finally:
            sim.open_streams -= 1
            self._streams.pop(id(request), None)
        return response

    async def _send(
        self, response: web.StreamResponse, sim: SimMount, icy: bool, metaint: int
    ) -> None:
        """The burst (from mid-frame; its first block names the burst's older title), then
        ``metaint`` bytes and a block at a time, paced at the byte rate."""
        loop = asyncio.get_running_loop()
        audio = _Audio(self._random.randrange(1, len(SILENT_FRAME)))
        burst_seconds = self.burst_bytes / self.byte_rate
        _title, raw, version = sim.now(self.clock() - burst_seconds)
        sent_version: tuple[int, int] | None = None
        burst = self.burst_bytes
        next_at = loop.time()
        while True:
            size = metaint if icy else 4096
            await response.write(audio.take(size))
            if icy:
                if burst <= 0:
                    _title, raw, version = sim.now(self.clock())
                if version != sent_version:
                    await response.write(_block(raw))
                    sent_version = version
                else:
                    await response.write(b"\x00")
            if burst > 0:
                burst -= size
                next_at = loop.time()
                continue
            next_at += size / self.byte_rate
            await asyncio.sleep(max(0.0, next_at - loop.time()))


class _Audio:
    """Endless silent frames, from ``offset`` bytes into the first (a burst starts mid-frame)."""

    def __init__(self, offset: int) -> None:
        self._offset = offset

    def take(self, size: int) -> bytes:
        frame = len(SILENT_FRAME)
        start = self._offset % frame
        count = (start + size) // frame + 1
        data = (SILENT_FRAME * count)[start : start + size]
        self._offset += size
        return data


def _block(raw: bytes) -> bytes:
    """A metadata block: the length byte (×16) and ``StreamTitle='...';`` padded with NULs."""
    text = b"StreamTitle='" + raw + b"';"
    length = -(-len(text) // 16)
    return bytes([length]) + text.ljust(length * 16, b"\x00")


# xml2json.xslt's rules ----------------------------------------------------------------------

# XPath 1.0's number(): optional blanks, optional minus, digits with an optional fraction.
_XPATH_NUMBER = re.compile(r"^\s*-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*$")
# libxml2's reading that 2.4.4's stylesheet did not guard against: a lone "-" among blanks.
_LONE_DASH = re.compile(r"^\s*-\s*$")


def _key(name: str) -> str:
    return json.dumps(name)


def _value(text: str, old: bool) -> str:
    """One XML text as xml2json writes it: a number or boolean bare, else an escaped string
    (only backslash, quote, tab, newline and return are escaped)."""
    if text == "":
        return "null"
    numeric = bool(_XPATH_NUMBER.match(text)) or (old and bool(_LONE_DASH.match(text)))
    leading_zero = text.startswith("0") and text != "0" and (old or not text.startswith("0."))
    if numeric and not leading_zero:
        if old:
            return text
        if not _LONE_DASH.match(text):
            value = text.strip()
            if value.startswith("."):
                value = "0" + value
            elif value.startswith("-."):
                value = "-0." + value[2:]
            if value.endswith("."):
                value += "0"
            return value
    if text.lower() in ("true", "false"):
        return text.lower()
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\t", "\\t")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
    )
    return f'"{escaped}"'


def _object(members: list[tuple[str, str]], old: bool) -> str:
    return "{" + ",".join(f"{_key(k)}:{_value(v, old)}" for k, v in members) + ',"dummy":null}'
