"""A fake Icecast 2 server on loopback: one endless mount, served as a real Icecast serves it.

What Icecast 2 does and this fake does too (a clean file from byte 0 in even chunks would hide
how a decoder copes with each):

- **Burst on connect.** Each new listener first gets about ``burst_bytes`` (Icecast's
  ``burst-size``, 64 KiB by default) of what the source sent before the live edge, at once. The
  burst starts at an arbitrary byte of the stream: in the middle of an MP3 or ADTS frame, or of
  an Ogg page (Icecast's queue holds the source's writes, not frames). An Ogg stream's header
  pages go first, as Icecast sends them to every listener.
- **Real-time pacing in the container's own units.** After the burst, each MP3 frame, ADTS frame
  or Ogg page is sent whole when its time has come: an Ogg page of 1 s of sound arrives as one
  block every second, as FFmpeg's Ogg muxer writes them by default.
- **Content-Type** of the format (``audio/mpeg``, ``audio/aac``, ``application/ogg``,
  ``audio/ogg``), and ``/admin/killclient`` drops the listeners (Icecast's admin command).

The media is made at test time (``tests/support/icecast_media.py``) and looped. Faults on
demand: ``drop_all`` (killclient), ``stall`` (keep the socket, send nothing), ``hold`` (new
listeners get the header and the burst, then nothing until ``release``: what a decoder can do
with the burst alone), ``refuse_new`` and ``hang_new``. Each connection's ``Listener`` counts the
seconds of sound it carried in whole units, so a test can count frames end to end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from bot.util.tasks import StartStop

from .icecast_media import FORMATS, Media, make_media, media_of

BURST_BYTES = 65536  # Icecast 2's default burst-size


def make_mp3(ffmpeg: str, path: Path, *, seconds: float = 4.0, frequency: int = 440) -> Path:
    """Write ``seconds`` of a sine tone as a 128 kbit/s MP3 with no ID3/Xing header (so the
    file loops cleanly as one endless stream). Blocking: call it once per session, off-loop."""
    subprocess.run(
        [
            *(ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi"),
            *("-i", f"sine=frequency={frequency}:sample_rate=44100:duration={seconds}"),
            *("-ac", "2", "-c:a", "libmp3lame", "-b:a", "128k", "-write_xing", "0"),
            *("-id3v2_version", "0", "-f", "mp3", str(path)),
        ],
        check=True,
        timeout=60,
    )
    return path


@dataclass
class Listener:
    """One connection: what it was sent (``seconds`` of sound in whole units, the burst's
    included; the burst's cut-off first unit carries none)."""

    burst_bytes: int = 0
    burst_seconds: float = 0.0
    seconds: float = 0.0
    bytes: int = 0
    open: bool = True


class FakeIcecast(StartStop):
    """Serves ``media`` (a :class:`Media`, or MP3 bytes) on every path as an endless mount."""

    def __init__(
        self,
        media: Media | bytes,
        *,
        burst_bytes: int = BURST_BYTES,
        speed: float = 1.0,
        seed: int = 27,
    ) -> None:
        if isinstance(media, bytes):
            if not media:
                raise ValueError("the fake Icecast needs some audio")
            media = media_of("mp3", media, "audio/mpeg")
        self.media = media
        self.burst_bytes = burst_bytes
        self.speed = speed  # 1.0: real time
        self._random = random.Random(seed)  # where each burst starts: arbitrary, reproducible
        self.connections = 0  # stream requests answered with audio
        self.requests = 0  # every request, refused and hung ones included
        self.refuse_new = False  # answer new requests with refuse_status
        self.refuse_status = 503
        self.hang_new = False  # accept new requests and never answer
        self.bytes_sent = 0
        self.listeners: list[Listener] = []
        self.base_url = ""
        self._open: dict[int, web.Request] = {}  # id(request): request (requests are unhashable)
        self._flowing = asyncio.Event()  # cleared: open connections send nothing
        self._flowing.set()
        self._released = asyncio.Event()  # cleared: new listeners wait after their burst
        self._released.set()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        suffix = {"audio/mpeg": "mp3", "audio/aac": "aac"}.get(self.media.content_type, "ogg")
        return f"{self.base_url}/stream.{suffix}"

    @property
    def open_connections(self) -> int:
        return len(self._open)

    @property
    def sent_seconds(self) -> float:
        """Seconds of sound sent in whole units, over every connection."""
        return sum(listener.seconds for listener in self.listeners)

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/_admin/counters", self._counters)
        app.router.add_get("/admin/killclient", self._killclient)
        app.router.add_get("/{path:.*}", self._stream)
        # Endless responses: a short shutdown timeout, or teardown waits a minute for them.
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = int(self._runner.addresses[0][1])
        self.base_url = f"http://127.0.0.1:{port}"
        return self.base_url

    async def stop(self) -> None:
        self.release()
        self.drop_all()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # Faults ---------------------------------------------------------------------------

    def drop_all(self) -> int:
        """Close every open stream connection at once (Icecast's admin killclient); returns
        how many were closed. What was written before is delivered first."""
        dropped = 0
        for request in list(self._open.values()):
            if request.transport is not None:
                request.transport.close()
                dropped += 1
        self._open.clear()
        return dropped

    def stall(self, stalled: bool = True) -> None:
        """Keep the open connections but send nothing (``False`` resumes sending)."""
        if stalled:
            self._flowing.clear()
        else:
            self._flowing.set()

    @property
    def stalled(self) -> bool:
        return not self._flowing.is_set()

    def hold(self) -> None:
        """New listeners get the header and the burst, then nothing until :meth:`release`."""
        self._released.clear()

    def release(self) -> None:
        self._released.set()

    async def _counters(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "connections": self.connections,
                "open": self.open_connections,
                "requests": self.requests,
                "bytes_sent": self.bytes_sent,
                "sent_seconds": self.sent_seconds,
            }
        )

    async def _killclient(self, request: web.Request) -> web.Response:
        return web.json_response({"dropped": self.drop_all()})

    # Serving --------------------------------------------------------------------------

    async def _stream(self, request: web.Request) -> web.StreamResponse:
        self.requests += 1
        if self.refuse_new:
            return web.Response(status=self.refuse_status, text="source unavailable")
        if self.hang_new:
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()  # until the client or the server gives up
            return web.Response(status=503)
        response = web.StreamResponse(
            headers={
                "Content-Type": self.media.content_type,
                "icy-name": "Fake FM",
                "Cache-Control": "no-cache, no-store",
                "Server": "Icecast 2.4.4",
            }
        )
        await response.prepare(request)
        self.connections += 1
        listener = Listener()
        self.listeners.append(listener)
        self._open[id(request)] = request
        try:
            await self._send(response, listener)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            listener.open = False
            self._open.pop(id(request), None)
        return response

    async def _write(self, response: web.StreamResponse, listener: Listener, data: bytes) -> None:
        await response.write(data)
        self.bytes_sent += len(data)
        listener.bytes += len(data)

    def _burst(self, edge: int) -> tuple[bytes, float]:
        """The ``burst_bytes`` before absolute unit ``edge`` (cut inside a unit) and the
        seconds of sound in its whole units."""
        media, units = self.media, self.media.units
        parts: list[bytes] = []
        seconds: list[float] = []
        size = 0
        index = edge
        while size < self.burst_bytes and index > 0:
            index -= 1
            part = media.unit_bytes(index % len(units), index // len(units))
            parts.append(part)
            seconds.append(units[index % len(units)].seconds)
            size += len(part)
        data = b"".join(reversed(parts))
        cut = max(0, len(data) - self.burst_bytes)
        if cut == 0 and len(parts) > 1:
            cut = 1  # never on a frame or page boundary: Icecast's queue knows none
        whole = sum(seconds[:-1]) if cut else sum(seconds)
        return data[cut:], whole

    async def _send(self, response: web.StreamResponse, listener: Listener) -> None:
        """The header and the burst at once, then one unit at a time at its due time."""
        loop = asyncio.get_running_loop()
        units = self.media.units
        loops_back = self.burst_bytes // max(1, len(self.media.body)) + 2
        edge = loops_back * len(units) + self._random.randrange(len(units))
        burst, burst_seconds = self._burst(edge)
        listener.burst_bytes, listener.burst_seconds = len(burst), burst_seconds
        await self._write(response, listener, self.media.header + burst)
        listener.seconds += burst_seconds
        await self._released.wait()
        next_at = loop.time()
        index = edge
        while True:
            if self.stalled:
                await self._flowing.wait()  # the connection stays open, silent
                next_at = loop.time()
            unit = units[index % len(units)]
            next_at += unit.seconds / self.speed
            await asyncio.sleep(max(0.0, next_at - loop.time()))
            await self._write(
                response, listener, self.media.unit_bytes(index % len(units), index // len(units))
            )
            listener.seconds += unit.seconds
            index += 1


async def _serve(media: Media) -> None:
    """Serve until SIGTERM/SIGINT; the first stdout line is the stream URL."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with FakeIcecast(media) as server:
        print(server.url, flush=True)
        await stop.wait()


def main() -> None:
    """``python -m tests.support.fakeicecast --mp3 FILE`` or ``--format NAME --ffmpeg PATH``:
    the fake in a process of its own (the voice benchmark keeps its CPU apart from the bot's)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--mp3", type=Path)
    parser.add_argument("--format", choices=sorted(FORMATS))
    parser.add_argument("--ffmpeg", help="FFmpeg to make the --format media with")
    parser.add_argument("--folder", type=Path, default=Path("."), help="where to write it")
    args = parser.parse_args()
    if args.format:
        media = make_media(args.ffmpeg or "ffmpeg", args.format, args.folder)
    elif args.mp3:
        media = media_of("mp3", args.mp3.read_bytes(), "audio/mpeg")
    else:
        parser.error("--mp3 or --format is needed")
    asyncio.run(_serve(media))


if __name__ == "__main__":
    main()
