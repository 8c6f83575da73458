"""One FFmpeg per station, fanned out to every guild that plays it.

A :class:`StationBroadcast` starts its decoder with its first subscriber and stops it with the
last. A supervisor task reads FFmpeg's Ogg output, parses it into Opus packets and puts each one
into every subscriber's own bounded queue (a stalled guild loses its oldest packets; nobody
waits for it). When FFmpeg exits, or produces no packet for ``watchdog`` seconds, the supervisor
kills its process group and starts a new one after a capped, jittered backoff; meanwhile the
players send silence instead of ending. :class:`Broadcasts` is the station-key registry every
guild shares.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import re
import signal
import threading
from collections import deque
from dataclasses import dataclass

import aiohttp

from ..errors import OnAirError
from .ffmpeg import UnsafeStreamUrl, check_stream_url, decode_args, redact_url
from .ogg import OggOpusParser
from .source import PacketQueue, StationAudio

log = logging.getLogger(__name__)

READ_SIZE = 64 * 1024
STDERR_LINES = 3  # FFmpeg's last error lines kept for the restart log line
STDERR_LINE_CHARS = 200
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,15}://[^\s'\"]{1,300}")


class StreamUnreachable(Exception):
    """The station's stream cannot be played; ``message`` is polite and names no URL."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class BroadcastStats:
    frames_produced: int
    restarts: int
    subscribers: int
    running: bool = False


def _checked(stream_url: str) -> str:
    try:
        return check_stream_url(stream_url)
    except UnsafeStreamUrl as error:
        raise StreamUnreachable(
            f"That station's stream address cannot be played: {error}."
        ) from None


class StationBroadcast:
    """One station's decoder and its subscribers (guild players)."""

    def __init__(
        self,
        key: str,
        stream_url: str,
        ffmpeg: str,
        *,
        queue_frames: int = 25,
        watchdog: float = 5.0,
        max_backoff: float = 30.0,
        min_backoff: float = 0.5,
        healthy_after: float = 30.0,
        linger: float = 0.0,
        prefill: int = 3,
    ) -> None:
        self.key = key
        self.stream_url = _checked(stream_url)
        self.ffmpeg = ffmpeg
        self.queue_frames = queue_frames
        self.watchdog = watchdog
        self.max_backoff = max_backoff
        self.min_backoff = min(min_backoff, max_backoff)
        self.healthy_after = healthy_after
        self.linger = linger  # seconds the decoder outlives its last subscriber
        self.prefill = prefill
        self.frames_produced = 0
        self.restarts = 0
        self._subs: dict[int, StationAudio] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._linger: asyncio.TimerHandle | None = None
        self._retarget = False
        self._closed = False
        self._stopping: set[asyncio.Task[None]] = set()

    # State ----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """The decoder is meant to run (it may be between restarts)."""
        return self._task is not None and not self._task.done()

    @property
    def subscribers(self) -> int:
        return len(self._subs)

    @property
    def pid(self) -> int | None:
        """The current FFmpeg process id, if one is running."""
        proc = self._proc
        return proc.pid if proc is not None and proc.returncode is None else None

    def stats(self) -> BroadcastStats:
        return BroadcastStats(self.frames_produced, self.restarts, self.subscribers, self.running)

    # Subscribing ----------------------------------------------------------------------

    def audio(self) -> StationAudio:
        """A new subscriber's source; starts the decoder if it is not running. Call it on the
        event loop."""
        if self._closed:
            raise RuntimeError("this broadcast is closed")
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        audio = StationAudio(
            PacketQueue(self.queue_frames), release=self.release, prefill=self.prefill
        )
        self._subs[id(audio)] = audio
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        if not self.running:
            self._task = self._loop.create_task(self._supervise(), name=f"voice:{self.key}")
        return audio

    def release(self, audio: StationAudio) -> None:
        """Unsubscribe ``audio``; from any thread (discord.py's player thread calls
        ``cleanup()``, which lands here). The last one out stops the decoder."""
        loop = self._loop
        if loop is None:
            return
        if threading.get_ident() == self._loop_thread:
            self._release(audio)
            return
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing runs any more
            loop.call_soon_threadsafe(self._release, audio)

    def _release(self, audio: StationAudio) -> None:
        if self._subs.pop(id(audio), None) is None or self._subs:
            return
        if self.linger > 0 and self._loop is not None and not self._closed:
            self._linger = self._loop.call_later(self.linger, self._stop_if_idle)
        else:
            self._stop_if_idle()

    def _stop_if_idle(self) -> None:
        self._linger = None
        task = self._task
        if not self._subs and task is not None:
            # Not running from now on: a subscriber arriving before the task has wound down
            # starts a new one instead of joining a dying one.
            self._task = None
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)
            task.cancel()

    def retarget(self, stream_url: str) -> None:
        """Play another URL for this station (it changed): the decoder restarts at once."""
        stream_url = _checked(stream_url)
        if stream_url == self.stream_url:
            return
        self.stream_url = stream_url
        if self._proc is not None:
            self._retarget = True
            self._kill(self._proc)

    async def close(self) -> None:
        """Stop the decoder and end every subscriber's playback (their next read is empty)."""
        self._closed = True
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
        for audio in list(self._subs.values()):
            audio.close()
        self._subs.clear()
        tasks = [*self._stopping, *([self._task] if self._task is not None else [])]
        self._task = None
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # The supervisor -------------------------------------------------------------------

    async def _supervise(self) -> None:
        loop = asyncio.get_running_loop()
        delay = self.min_backoff
        while self._subs:
            started = loop.time()
            produced = self.frames_produced
            try:
                reason = await self._run_once()
            except Exception:  # a bug here must not leave the station silent for good
                log.exception("voice %s: decoder supervisor failed", self.key)
                reason = "internal error"
            if not self._subs:
                return
            if self._retarget:
                self._retarget = False
                continue
            if loop.time() - started >= self.healthy_after and self.frames_produced > produced:
                delay = self.min_backoff  # it played well for a while: start the backoff over
            wait = min(self.max_backoff, delay * random.uniform(0.75, 1.25))
            delay = min(self.max_backoff, delay * 2)
            self.restarts += 1
            log.warning(
                "voice %s: decoder restart #%d in %.1f s (%s)",
                self.key,
                self.restarts,
                wait,
                reason,
            )
            await asyncio.sleep(wait)

    async def _run_once(self) -> str:
        """Run FFmpeg until it exits or stalls; why it ended."""
        try:
            proc = await asyncio.create_subprocess_exec(
                *decode_args(self.ffmpeg, self.stream_url),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # its own process group: killed as a whole
            )
        except OSError as error:
            return f"FFmpeg could not start: {error.strerror or type(error).__name__}"
        self._proc = proc
        assert proc.stdout is not None
        assert proc.stderr is not None
        tail: deque[str] = deque(maxlen=STDERR_LINES)
        drain = asyncio.create_task(self._drain(proc.stderr, tail))
        try:
            if await self._pump(proc.stdout):
                return f"no audio for {self.watchdog:g} s"
            # Output ended: FFmpeg exits; give it a moment to say why on stderr.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await proc.wait()
                    await drain
            detail = self._redact(tail[-1]) if tail else "no message"
            return f"the stream ended or failed, exit {proc.returncode}: {detail}"
        finally:
            self._kill(proc)
            drain.cancel()
            if self._proc is proc:
                self._proc = None
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(proc.wait())  # reaped: no zombie, no orphan

    async def _pump(self, stdout: asyncio.StreamReader) -> bool:
        """Fan FFmpeg's packets out until its output ends (False) or the watchdog fires (True)."""
        loop = asyncio.get_running_loop()
        parser = OggOpusParser()
        last_packet = loop.time()
        while True:
            left = last_packet + self.watchdog - loop.time()
            try:
                if left <= 0:
                    raise TimeoutError
                async with asyncio.timeout(left):
                    chunk = await stdout.read(READ_SIZE)
            except TimeoutError:
                return True
            if not chunk:
                return False
            packets = parser.feed(chunk)
            if not packets:
                continue
            last_packet = loop.time()
            queues = [audio.queue for audio in self._subs.values()]
            for packet in packets:
                for queue in queues:
                    queue.put(packet)
            self.frames_produced += len(packets)

    @staticmethod
    async def _drain(stderr: asyncio.StreamReader, tail: deque[str]) -> None:
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

    def _redact(self, text: str) -> str:
        text = text.replace(self.stream_url, redact_url(self.stream_url))
        text = _URL_IN_TEXT.sub(lambda match: redact_url(match.group(0)), text)
        return "".join(ch if ch.isprintable() else "?" for ch in text)

    @staticmethod
    def _kill(proc: asyncio.subprocess.Process) -> None:
        if proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


class Broadcasts:
    """Station key → :class:`StationBroadcast`, shared by every guild."""

    def __init__(
        self,
        ffmpeg: str,
        *,
        queue_frames: int = 25,
        watchdog: float = 5.0,
        max_backoff: float = 30.0,
        linger: float = 0.0,
    ) -> None:
        self.ffmpeg = ffmpeg
        self._options = {
            "queue_frames": queue_frames,
            "watchdog": watchdog,
            "max_backoff": max_backoff,
            "linger": linger,
        }
        self._broadcasts: dict[str, StationBroadcast] = {}

    def audio_for(self, key: str, stream_url: str) -> StationAudio:
        """A new source playing station ``key`` (its decoder starts if it is not running).
        Raises :class:`StreamUnreachable` for a URL FFmpeg must not be given."""
        broadcast = self._broadcasts.get(key)
        if broadcast is None:
            broadcast = StationBroadcast(
                key,
                stream_url,
                self.ffmpeg,
                queue_frames=int(self._options["queue_frames"]),
                watchdog=float(self._options["watchdog"]),
                max_backoff=float(self._options["max_backoff"]),
                linger=float(self._options["linger"]),
            )
            self._broadcasts[key] = broadcast
        else:
            broadcast.retarget(stream_url)
        return broadcast.audio()

    def get(self, key: str) -> StationBroadcast | None:
        return self._broadcasts.get(key)

    def is_running(self, key: str) -> bool:
        broadcast = self._broadcasts.get(key)
        return broadcast is not None and broadcast.running

    def stats(self) -> dict[str, BroadcastStats]:
        return {key: broadcast.stats() for key, broadcast in self._broadcasts.items()}

    async def close(self) -> None:
        broadcasts = list(self._broadcasts.values())
        self._broadcasts.clear()
        await asyncio.gather(*(broadcast.close() for broadcast in broadcasts))


PROBE_BYTES = 4096


async def probe_stream(
    session: aiohttp.ClientSession,
    url: str,
    *,
    timeout: float = 5.0,  # noqa: ASYNC109 - the contract's name; it bounds the whole request
) -> str:
    """Open the stream through OnAir's shared (guarded) session, read a few KB, and return the
    URL it ends at after redirects; :class:`StreamUnreachable` if it does not play."""
    _checked(url)
    host = redact_url(url).removesuffix("/…")
    try:
        async with session.get(
            url,
            timeout=aiohttp.ClientTimeout(total=timeout),
            headers={"Icy-MetaData": "0"},
        ) as response:
            if response.status >= 400:
                raise StreamUnreachable(
                    f"The station's stream at {host} answered HTTP {response.status}."
                )
            data = await response.content.read(PROBE_BYTES)
            if not data:
                raise StreamUnreachable(f"The station's stream at {host} sent no audio.")
            final = str(response.url)
    except StreamUnreachable:
        raise
    except TimeoutError:
        raise StreamUnreachable(
            f"The station's stream at {host} did not answer within {timeout:g} s."
        ) from None
    except (aiohttp.ClientError, OSError, OnAirError, ValueError):
        raise StreamUnreachable(f"The station's stream at {host} could not be reached.") from None
    return _checked(final)
