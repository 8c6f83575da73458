"""One FFmpeg decoder process and the three pipes of a run: the stream copied into its stdin
(``feed``), its Ogg output parsed into Opus packets and fanned out (``pump``) and its stderr
read to the end, keeping the last lines (``drain_stderr``); started in its own process group
(``start_ffmpeg``) and killed as a whole (``kill``). The run itself, its restarts and its
subscribers are :class:`bot.voice.broadcast.StationBroadcast`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections import deque
from collections.abc import Callable

import aiohttp

from .ffmpeg import decode_args
from .ogg import OggOpusParser
from .stream import elided

READ_SIZE = 64 * 1024
# Before its first packet a decoder that keeps reading its input is starting, not stuck: the
# watchdog waits for it up to this much input (FFmpeg's probing of a stream it cannot name
# reads up to a few hundred KiB; a 320 kbit/s MP3 needs just over 5 s of it, longer than one
# watchdog period), and for up to this many watchdog periods (a decoder that reads a stream it
# cannot decode must still go).
STARTUP_BYTES = 1024 * 1024
STARTUP_WATCHDOGS = 4
STDERR_LINES = 3  # FFmpeg's last error lines kept for the restart log line
STDERR_LINE_CHARS = 200
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,15}://[^\s'\"]{1,300}")


async def start_ffmpeg(ffmpeg: str, fmt: str | None = None) -> asyncio.subprocess.Process:
    """FFmpeg decoding stdin (as ``fmt``, else probed) to Ogg Opus on stdout, in a process
    group of its own."""
    return await asyncio.create_subprocess_exec(
        *decode_args(ffmpeg, fmt),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group: killed as a whole
    )


async def feed(
    response: aiohttp.ClientResponse,
    stdin: asyncio.StreamWriter,
    head: bytes,
    *,
    watchdog: float,
    received: Callable[[int], None],
) -> str | None:
    """Copy ``head`` (what the probe read) and then the stream into FFmpeg's stdin (waiting
    for it to keep up: backpressure) until the stream ends, fails or stalls (why, as a
    restart reason) or FFmpeg stops reading (None: FFmpeg's exit says why)."""
    reason: str | None
    try:
        if head:
            received(len(head))
            stdin.write(head)
            await stdin.drain()
        while True:
            try:
                chunk = await response.content.readany()
            except TimeoutError:
                reason = f"no audio for {watchdog:g} s (the stream sent nothing)"
                break
            except (aiohttp.ClientError, OSError) as error:
                reason = f"the stream connection failed ({type(error).__name__})"
                break
            if not chunk:
                reason = "the stream ended"
                break
            received(len(chunk))
            stdin.write(chunk)
            await stdin.drain()
    except (ConnectionError, OSError):
        return None  # FFmpeg is gone
    with contextlib.suppress(ConnectionError, OSError):
        stdin.close()  # EOF: FFmpeg flushes what it has and exits
    return reason


async def pump(
    stdout: asyncio.StreamReader,
    *,
    watchdog: float,
    fan_out: Callable[[list[bytes]], None],
    fed: Callable[[], int] = lambda: 0,
    startup_bytes: int = STARTUP_BYTES,
) -> bool:
    """Fan FFmpeg's packets out until its output ends (False) or the watchdog fires (True):
    ``watchdog`` seconds without a packet, except that before the first one a decoder still
    reading its input (``fed``: bytes given to it so far, at most ``startup_bytes``) is given
    another ``watchdog``, up to ``STARTUP_WATCHDOGS`` of them."""
    loop = asyncio.get_running_loop()
    parser = OggOpusParser()
    last_packet = loop.time()
    give_up = last_packet + STARTUP_WATCHDOGS * watchdog
    started = False
    fed_seen = fed()
    while True:
        left = last_packet + watchdog - loop.time()
        try:
            if left <= 0:
                raise TimeoutError
            async with asyncio.timeout(left):
                chunk = await stdout.read(READ_SIZE)
        except TimeoutError:
            fed_now = fed()
            starting = not started and loop.time() < give_up
            if starting and fed_seen < fed_now <= startup_bytes:
                fed_seen, last_packet = fed_now, loop.time()  # starting: making progress
                continue
            return True
        if not chunk:
            return False
        packets = parser.feed(chunk)
        if not packets:
            continue
        started = True
        last_packet = loop.time()
        fan_out(packets)


async def drain_stderr(stderr: asyncio.StreamReader, tail: deque[str]) -> None:
    """Read FFmpeg's stderr to the end, keeping only its last few lines (bounded), so a
    chatty FFmpeg never blocks on a full pipe."""
    pending = b""
    while chunk := await stderr.read(4096):
        *lines, pending = (pending + chunk).split(b"\n")
        pending = pending[-STDERR_LINE_CHARS:]
        for line in lines:
            text = line.decode("utf-8", "replace").strip()
            if text:
                tail.append(text[:STDERR_LINE_CHARS])


def redact(text: str, stream_url: str) -> str:
    """FFmpeg's words for a log line: every URL elided, nothing unprintable."""
    text = text.replace(stream_url, elided(stream_url))
    text = _URL_IN_TEXT.sub(lambda match: elided(match.group(0)), text)
    return "".join(ch if ch.isprintable() else "?" for ch in text)


def kill(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL FFmpeg's whole process group (it runs in its own session)."""
    if proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
