"""A fake Icecast server on loopback: an endless MP3, paced at real time, with faults on demand.

The audio is made in the test session with FFmpeg's sine source (no audio file is committed) and
looped. The server counts connections, can drop every open connection, stall them (keep the
socket, send nothing) and refuse or hang new ones, so the engine's reconnects, watchdog and
supervisor can be exercised through a real FFmpeg.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import subprocess
from pathlib import Path

from aiohttp import web

from bot.util.tasks import StartStop

MP3_BITRATE = 128_000
MP3_BYTES_PER_SECOND = MP3_BITRATE // 8


def make_mp3(ffmpeg: str, path: Path, *, seconds: float = 4.0, frequency: int = 440) -> Path:
    """Write ``seconds`` of a sine tone as a 128 kbit/s MP3 with no ID3/Xing header (so the
    file loops cleanly as one endless stream). Blocking: call it once per session, off-loop."""
    subprocess.run(
        [
            ffmpeg,
            "-nostdin",
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"sine=frequency={frequency}:sample_rate=44100:duration={seconds}",
            "-ac",
            "2",
            "-c:a",
            "libmp3lame",
            "-b:a",
            "128k",
            "-write_xing",
            "0",
            "-id3v2_version",
            "0",
            "-f",
            "mp3",
            str(path),
        ],
        check=True,
        timeout=60,
    )
    return path


class FakeIcecast(StartStop):
    """Serves ``/stream.mp3`` (and any path) as an endless MP3 at real time."""

    def __init__(
        self,
        mp3: bytes,
        *,
        chunk_seconds: float = 0.05,
        burst_seconds: float = 0.5,
        bytes_per_second: int = MP3_BYTES_PER_SECOND,
    ) -> None:
        if not mp3:
            raise ValueError("the fake Icecast needs some MP3 data")
        self.mp3 = mp3
        self.chunk_seconds = chunk_seconds
        self.burst_seconds = burst_seconds  # Icecast's burst-on-connect
        self.bytes_per_second = bytes_per_second
        self.connections = 0  # stream requests answered with audio
        self.requests = 0  # every request, refused and hung ones included
        self.refuse_new = False  # answer new requests with refuse_status
        self.refuse_status = 503
        self.hang_new = False  # accept new requests and never answer
        self.bytes_sent = 0
        self.base_url = ""
        self._open: dict[int, web.Request] = {}  # id(request): request (requests are unhashable)
        self._flowing = asyncio.Event()  # cleared: open connections send nothing
        self._flowing.set()
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"{self.base_url}/stream.mp3"

    @property
    def open_connections(self) -> int:
        return len(self._open)

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/_admin/counters", self._counters)
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
        self.drop_all()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # Faults ---------------------------------------------------------------------------

    def drop_all(self) -> int:
        """Close every open stream connection at once; returns how many were closed."""
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

    async def _counters(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "connections": self.connections,
                "open": self.open_connections,
                "requests": self.requests,
                "bytes_sent": self.bytes_sent,
            }
        )

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
            headers={"Content-Type": "audio/mpeg", "icy-br": "128", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        self.connections += 1
        self._open[id(request)] = request
        try:
            await self._send(response)
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self._open.pop(id(request), None)
        return response

    async def _send(self, response: web.StreamResponse) -> None:
        """The burst, then one chunk every ``chunk_seconds`` on a drift-free schedule."""
        loop = asyncio.get_running_loop()
        position = 0
        chunk = max(1, int(self.bytes_per_second * self.chunk_seconds))
        owed = int(self.bytes_per_second * self.burst_seconds)
        next_at = loop.time()
        while True:
            if self.stalled:
                await self._flowing.wait()  # the connection stays open, silent
                next_at = loop.time()
            while owed > 0:
                size = min(owed, len(self.mp3) - position)
                data = self.mp3[position : position + size]
                await response.write(data)
                self.bytes_sent += size
                position = (position + size) % len(self.mp3)
                owed -= size
            next_at += self.chunk_seconds
            await asyncio.sleep(max(0.0, next_at - loop.time()))
            owed = chunk


async def _serve(mp3: bytes) -> None:
    """Serve until SIGTERM/SIGINT; the first stdout line is the stream URL."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with FakeIcecast(mp3) as server:
        print(server.url, flush=True)
        await stop.wait()


def main() -> None:
    """``python -m tests.support.fakeicecast --mp3 FILE``: the fake in a process of its own
    (the voice benchmark keeps its CPU apart from the bot's)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--mp3", type=Path, required=True)
    asyncio.run(_serve(parser.parse_args().mp3.read_bytes()))


if __name__ == "__main__":
    main()
