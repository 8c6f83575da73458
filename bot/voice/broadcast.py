"""One FFmpeg per station, fanned out to every guild that plays it.

A :class:`StationBroadcast` starts its decoder with its first subscriber and stops it with the
last. A supervisor task opens the stream through OnAir's guarded aiohttp session (stream.py:
FFmpeg itself connects nowhere; at the start it may take over the probe's open stream instead,
so a first listener costs one connection), copies its bytes into FFmpeg's stdin, reads FFmpeg's
Ogg output, parses it into Opus packets and hands them to the station's pacer (``pacer.py``),
which absorbs the stream's bursts and puts one packet every 20 ms into every subscriber's own
bounded queue (a stalled guild loses its oldest packets; nobody waits for it). FFmpeg is told the
stream's format from its Content-Type (``ffmpeg.input_format``). When the stream fails,
ends or stalls, or FFmpeg exits or produces no packet for ``watchdog`` seconds, the supervisor
closes the connection, kills FFmpeg's process group and starts again after a capped, jittered
backoff; meanwhile the players send silence (or the pacer's backlog) instead of ending. The
registry by station every guild shares is ``broadcasts.py``'s; the FFmpeg process and the pipes
of one run are ``decoder.py``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
from collections import deque
from dataclasses import dataclass
from typing import TypedDict

import aiohttp

from . import decoder
from .ffmpeg import input_format
from .pacer import Pacer
from .source import PacketQueue, StationAudio
from .stream import (
    OpenedStream,
    StreamGuard,
    StreamUnreachable,
    checked_url,
    open_stream,
    stream_timeout,
)

log = logging.getLogger(__name__)

WATCHDOG = 5.0  # seconds without audio before a decoder restarts (and a probe's read timeout)


class Tuning(TypedDict, total=False):
    """The decoder settings ``Broadcasts`` gives every station's :class:`StationBroadcast`
    (what it leaves out takes the defaults there)."""

    queue_frames: int
    watchdog: float
    max_backoff: float
    linger: float


LOG_REPEAT_SECONDS = 300.0  # an identical restart line is logged at WARNING once per this


@dataclass(frozen=True, slots=True)
class BroadcastStats:
    frames_produced: int
    restarts: int
    subscribers: int
    running: bool = False
    frames_dropped: int = 0  # decoded packets the pacer's bounded backlog let go
    frames_replaced: int = 0  # an old run's packets a reconnect's burst replaced


class StationBroadcast:
    """One station's decoder and its subscribers (guild players). ``session`` is OnAir's one
    shared (guarded) session: the stream is opened through it, never by FFmpeg."""

    def __init__(
        self,
        station: str,
        stream_url: str,
        ffmpeg: str,
        *,
        session: aiohttp.ClientSession,
        queue_frames: int = 25,
        watchdog: float = WATCHDOG,
        max_backoff: float = 30.0,
        min_backoff: float = 0.5,
        healthy_after: float = 30.0,
        linger: float = 0.0,
        prefill: int = 3,
        guard: StreamGuard | None = None,
        backlog_seconds: float = 10.0,
    ) -> None:
        self.station = station  # the station's slug
        self.guard = guard  # the station's URL policy, on every (re)connection and every hop
        self.stream_url = checked_url(stream_url)
        self.ffmpeg = ffmpeg
        self.session = session
        self.final_url: str | None = None  # where the last connection's redirects ended
        self.queue_frames = queue_frames
        self.watchdog = watchdog
        self.max_backoff = max_backoff
        self.min_backoff = min(min_backoff, max_backoff)
        self.healthy_after = healthy_after
        self.linger = linger  # seconds the decoder outlives its last subscriber
        self.prefill = prefill
        self.frames_produced = 0  # packets let out to the subscribers
        self.frames_decoded = 0  # packets FFmpeg made (the pacer lets them out at 20 ms)
        self.bytes_received = 0  # from the stream, piped into FFmpeg
        self._run_bytes = 0  # the same, in the current decoder run
        self.pacer = Pacer(self._fan_out, max_seconds=backlog_seconds)
        self._probe_format = False  # the Content-Type's format did not decode: probe instead
        self.restarts = 0
        self._subs: dict[int, StationAudio] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._response: aiohttp.ClientResponse | None = None
        self._logged_reason = ""  # the last restart reason logged at WARNING, and when
        self._logged_at = float("-inf")
        self._quiet = 0  # identical restart lines since then, logged at DEBUG only
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
        return BroadcastStats(
            self.frames_produced,
            self.restarts,
            self.subscribers,
            self.running,
            self.pacer.dropped,
            self.pacer.replaced,
        )

    # Subscribing ----------------------------------------------------------------------

    def audio(self, first: OpenedStream | None = None) -> StationAudio:
        """A new subscriber's source; starts the decoder if it is not running. Call it on the
        event loop. ``first`` (the probe's open stream; this takes it over) is the decoder's
        first connection when it starts now on that URL; otherwise it is closed."""
        if self._closed:
            if first is not None:
                first.close()
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
            task = self._loop.create_task(self._supervise(first), name=f"voice:{self.station}")
            if first is not None:
                # However the task ends (even cancelled before it ran), nothing stays open.
                task.add_done_callback(lambda _: first.close())
            self._task = task
        elif first is not None:
            first.close()  # it already plays: the probe's connection is not needed
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
        """Play another URL for this station (it changed): the decoder restarts at once. The
        URL it plays, or the one its redirects last ended at (what ``probe_stream`` returns),
        is the same station: nothing restarts, no connection opens."""
        stream_url = checked_url(stream_url)
        if stream_url in (self.stream_url, self.final_url):
            return
        self.stream_url = stream_url
        self.final_url = None
        self._probe_format = False  # a new stream: its own Content-Type is trusted again
        if self._proc is not None or self._response is not None:
            self._retarget = True
            if self._response is not None:
                self._response.close()
            if self._proc is not None:
                decoder.kill(self._proc)

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

    async def _supervise(self, first: OpenedStream | None = None) -> None:
        pacer = asyncio.create_task(self.pacer.run(), name=f"voice-pacer:{self.station}")
        try:
            await self._restarts(first)
        finally:
            pacer.cancel()
            self.pacer.clear()
            with contextlib.suppress(asyncio.CancelledError):
                await pacer

    async def _restarts(self, first: OpenedStream | None) -> None:
        loop = asyncio.get_running_loop()
        delay = self.min_backoff
        while self._subs:
            started = loop.time()
            produced = self.frames_produced
            try:
                reason = await self._run_once(first)
                first = None  # restarts open fresh connections
            except Exception:  # a bug here must not leave the station silent for good
                log.exception("voice %s: decoder supervisor failed", self.station)
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
            self._log_restart(loop.time(), wait, reason)
            await asyncio.sleep(wait)

    def _log_restart(self, now: float, wait: float, reason: str) -> None:
        """One line per restart; the same reason again within ``LOG_REPEAT_SECONDS`` goes to
        DEBUG (a station down for an hour is a few WARNING lines, not hundreds)."""
        repeated = reason == self._logged_reason and now - self._logged_at < LOG_REPEAT_SECONDS
        if repeated:
            self._quiet += 1
        else:
            if self._quiet:
                reason = f"{reason}; {self._quiet} more like the last one since"
            self._logged_reason, self._logged_at, self._quiet = reason, now, 0
        log.log(
            logging.DEBUG if repeated else logging.WARNING,
            "voice %s: decoder restart #%d in %.1f s (%s)",
            self.station,
            self.restarts,
            wait,
            reason,
        )

    async def _run_once(self, first: OpenedStream | None = None) -> str:
        """Open the stream (or take ``first``, the probe's, when it is still the URL to play),
        run FFmpeg on it until either fails, ends or stalls; why it ended."""
        url = self.stream_url
        head = b""
        if first is not None and first.url == url and not first.closed:
            response, head = first.response, first.head
        else:
            if first is not None:
                first.close()
            try:
                response = await open_stream(
                    self.session,
                    url,
                    client_timeout=stream_timeout(self.watchdog),
                    guard=self.guard,
                )
            except StreamUnreachable as error:
                return error.reason
        if url != self.stream_url:  # retargeted while connecting: start over on the new URL
            response.close()
            self._retarget = True
            return "the stream URL changed"
        self._response = response
        self.final_url = str(response.url)
        fmt = None if self._probe_format else input_format(response.headers.get("Content-Type", ""))
        decoded = self.frames_decoded
        self._run_bytes = 0
        self.pacer.new_run()
        try:
            proc = await decoder.start_ffmpeg(self.ffmpeg, fmt)
        except BaseException as error:  # cancelled while FFmpeg starts: the stream closes too
            response.close()
            self._response = None
            if not isinstance(error, OSError):
                raise
            return f"FFmpeg could not start: {error.strerror or type(error).__name__}"
        self._proc = proc
        assert proc.stdin is not None
        assert proc.stdout is not None
        assert proc.stderr is not None
        tail: deque[str] = deque(maxlen=decoder.STDERR_LINES)
        drain = asyncio.create_task(decoder.drain_stderr(proc.stderr, tail))
        feed = asyncio.create_task(
            decoder.feed(
                response, proc.stdin, head, watchdog=self.watchdog, received=self._received
            )
        )
        pump = asyncio.create_task(
            decoder.pump(proc.stdout, watchdog=self.watchdog, fan_out=self._decoded, fed=self._fed)
        )
        try:
            await asyncio.wait((feed, pump), return_when=asyncio.FIRST_COMPLETED)
            if feed.done() and (reason := feed.result()) is not None:
                # The stream ended, failed or stalled and FFmpeg's stdin is closed: let it
                # finish the audio it has (briefly), then say why the stream ended.
                await asyncio.wait((pump,), timeout=1.0)
                return reason
            if not pump.done():  # FFmpeg stopped reading its input: it is exiting
                await asyncio.wait((pump,), timeout=1.0)
            elif pump.result():
                self._probe_format |= fmt is not None and self.frames_decoded == decoded
                return f"no audio for {self.watchdog:g} s"
            # FFmpeg's output ended: it exits; give it a moment to say why on stderr.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(1.0):
                    await proc.wait()
                    await drain
            detail = decoder.redact(tail[-1], self.stream_url) if tail else "no message"
            # The type named a format the stream is not: FFmpeg probes it next time.
            self._probe_format |= fmt is not None and self.frames_decoded == decoded
            return f"FFmpeg exited ({proc.returncode}): {detail}"
        finally:
            for task in (feed, pump, drain):
                task.cancel()
            response.close()
            if self._response is response:
                self._response = None
            decoder.kill(proc)
            if self._proc is proc:
                self._proc = None
            with contextlib.suppress(ProcessLookupError):
                await asyncio.shield(proc.wait())  # reaped: no zombie, no orphan
            await asyncio.gather(feed, pump, drain, return_exceptions=True)

    def _decoded(self, packets: list[bytes]) -> None:
        self.frames_decoded += len(packets)
        self.pacer.put(packets)

    def _fan_out(self, packet: bytes) -> None:
        for audio in self._subs.values():
            audio.queue.put(packet)
        self.frames_produced += 1

    def _received(self, count: int) -> None:
        self.bytes_received += count
        self._run_bytes += count

    def _fed(self) -> int:
        return self._run_bytes
