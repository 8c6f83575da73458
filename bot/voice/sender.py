"""One sender per process: a steady 20 ms clock that sends each Opus frame of a station to every
guild playing it.

discord.py's ``AudioPlayer`` is one thread per guild, each reading its own source and sleeping
20 ms: the more guilds, the more threads queue for the GIL, so sound stutters and the event loop
stalls (figures in docs/benchmarks.md). The sender is one thread instead. Each tick it reads
one packet per station (the station's one ``StationAudio``: silence while its decoder restarts)
and hands it to every guild's voice client through discord.py's public
``send_audio_packet(..., encode=False)``, which keeps what Discord needs per connection: the RTP
sequence and timestamp, DAVE and the transport encryption. One UDP datagram per guild per frame
(the socket is non-blocking: a full buffer drops the datagram, as discord.py does).

What ``AudioPlayer`` does per guild, the sender does per :class:`Lane`: SPEAKING when playback
starts and again when a reconnected connection is back; no packet (and no sequence number used)
while the connection is not connected; five silence frames and "not speaking" when it stops.

A guild never delays the others: a watchdog thread looks at the sender every ``stall_after``
seconds; when one send has not returned since the last look (and the sender thread is not
runnable, or has been for ``patience`` looks: a busy machine's pause is not a stalled
connection, see ``threadstate.py``), that guild's lane is set aside
(``stalled``), a new sender thread takes over the clock where the stuck one stopped, and the stuck
thread, once its send returns, frees the lane and ends. The closing silence is watched the same
way; the thread taking over resumes on the plan and packets the stuck one had (a station that left
meanwhile shifts nobody), and a send's end and a rescue agree under the lock, so a lane is never
left set aside nor sent to by two threads at once (one client's nonce and sequence are not
thread-safe).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

import discord

from ..util.lograte import CountedLine
from .source import OPUS_SILENCE
from .threadstate import runnable

_LOGGER = logging.getLogger("onair.voice")

FRAME_SECONDS = 0.02
MAX_LATE_SECONDS = 0.2  # woken later than this: the clock restarts now instead of catching up
STOP_SILENCE = 5  # silence frames after the last one (discord.py's AudioPlayer sends five)
RESCUE_LOG_EVERY = 60.0  # seconds between two log lines about stalled sends (counted meanwhile)
PATIENCE = 10  # looks a runnable sender thread's unfinished send is waited for before a rescue


class VoiceLink(Protocol):
    """What the sender needs of a guild's voice connection (``OnAirVoiceClient``)."""

    def send_audio_packet(self, data: bytes, *, encode: bool = True) -> None: ...

    def is_connected(self) -> bool: ...

    def speaking(self, on: bool) -> None:
        """Tell Discord (op 5) from any thread; returns at once."""


After = Callable[[Exception | None], None]


class _Sent(Enum):
    """How one send ended, for the thread that made it."""

    OK = "ok"
    FAILED = "failed"  # the link raised (the lane's error is kept unless it was a goodbye)
    TAKEN_OVER = "taken over"  # it stalled: a newer sender thread has the clock; this one ends


# Read per packet: module names are cheaper to look up than an Enum's members (Python 3.11).
_OK, _FAILED, _TAKEN_OVER = _Sent.OK, _Sent.FAILED, _Sent.TAKEN_OVER


_Plan = tuple[tuple["_Feed", tuple["Lane", ...]], ...]


@dataclass(slots=True)
class _Progress:
    """Where a tick is: the plan it sends, the packets it read for it, and the feed and lane
    (indexes into the plan) it is sending to. The sending thread moves ``feed`` and ``lane``
    along (no new object per packet); a rescue copies them for the thread taking over."""

    plan: _Plan
    packets: list[bytes]
    feed: int = 0
    lane: int = 0


@dataclass(eq=False)
class Lane:
    """One guild on the sender: its connection and counters. Nothing else is kept per guild."""

    link: VoiceLink
    station: str  # the station's slug
    after: After | None = None
    frames_sent: int = 0
    audio_frames: int = 0
    silence_frames: int = 0
    stalls: int = 0  # sends that took over the watchdog's period (the lane was set aside)
    stalled: bool = False  # a send of it is stuck in a retired sender thread
    ending: bool = False  # stop() was called: silence, "not speaking", then it goes
    ended: bool = False
    connected: bool = False  # as of its last tick (False → True: SPEAKING again)
    error: Exception | None = field(default=None, repr=False)
    _sender: VoiceSender | None = field(default=None, repr=False)

    @property
    def playing(self) -> bool:
        return not (self.ending or self.ended)

    def stop(self) -> None:
        """Stop playing (any thread): the sender sends the closing silence and lets it go."""
        if self._sender is not None and self.playing:
            self._sender.stop(self)


@dataclass(eq=False)
class _Feed:
    """One station on the sender: its one source and the lanes playing it."""

    station: str  # the station's slug
    source: discord.AudioSource
    lanes: list[Lane] = field(default_factory=list)


class VoiceSender:
    """The process's one audio clock (see the module's docstring). ``play`` and ``stop`` from
    the event loop or any thread; ``close`` ends every lane."""

    def __init__(
        self,
        *,
        frame_seconds: float = FRAME_SECONDS,
        stall_after: float = 0.01,
        patience: int = PATIENCE,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.frame_seconds = frame_seconds
        self.stall_after = stall_after
        self.patience = patience
        self._clock = clock
        self._lock = threading.Lock()
        self._feeds: dict[str, _Feed] = {}
        # What a tick sends, rebuilt on each change (copy on write: a tick reads it unlocked).
        self._plan: _Plan = ()
        self._ending: list[Lane] = []
        self._wake = threading.Event()
        self._closed = False
        self._generation = 0  # a rescue starts a new one: older sender threads end
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None
        self._busy: Lane | None = None  # the lane whose send is under way
        self._sender_id = 0  # the newest sender thread's native id (the one sending)
        self._sends = 0  # sends begun (the watchdog compares it between looks)
        self._due = 0.0
        self._progress: _Progress | None = None  # where a rescue resumes (None: next tick)
        self.ticks = 0
        self.late_ticks = 0  # ticks woken more than a frame late
        self.rescues = 0  # sender threads replaced because a send stalled
        self._rescue_line = CountedLine(self._say_rescues, every=RESCUE_LOG_EVERY, clock=clock)

    # Lanes ----------------------------------------------------------------------------------

    def play(
        self,
        link: VoiceLink,
        station: str,
        source: discord.AudioSource,
        *,
        after: After | None = None,
    ) -> Lane:
        """Play ``station`` (its slug) on ``link``. ``source`` is this guild's subscription to the
        station: the first lane of a station keeps it as the station's feed (read once per tick
        for every lane); a later lane's is released at once (the station plays already)."""
        lane = Lane(link, station, after, _sender=self)
        release: discord.AudioSource | None = source
        with self._lock:
            if self._closed:
                raise RuntimeError("the voice sender is closed")
            feed = self._feeds.get(station)
            if feed is None or getattr(feed.source, "closed", False):
                if feed is not None:
                    release = feed.source  # a closed feed gives way to the new subscription
                    feed.source = source
                else:
                    feed = self._feeds[station] = _Feed(station, source)
                    release = None
            feed.lanes.append(lane)
            self._replan()
        if release is not None:
            release.cleanup()
        link.speaking(True)
        self._start()
        self._wake.set()
        return lane

    def stop(self, lane: Lane) -> None:
        """``lane`` stops: on its next tick it gets the closing silence and leaves the plan."""
        with self._lock:
            if lane.ending or lane.ended:
                return
            lane.ending = True
            self._ending.append(lane)
            released = self._drop(lane)
        if released is not None:
            released.cleanup()
        self._wake.set()

    def lanes(self) -> list[Lane]:
        return [lane for _, lanes in self._plan for lane in lanes]

    @property
    def feeds(self) -> int:
        return len(self._feeds)

    def _drop(self, lane: Lane) -> discord.AudioSource | None:
        """Take ``lane`` out of its feed (under the lock); the source to release (outside the
        lock) when it was the feed's last lane."""
        feed = self._feeds.get(lane.station)
        if feed is None or lane not in feed.lanes:
            return None
        feed.lanes.remove(lane)
        if not feed.lanes:
            del self._feeds[lane.station]  # before the plan is made again: its source is released
        self._replan()
        return None if feed.lanes else feed.source

    def _replan(self) -> None:
        self._plan = tuple((feed, tuple(feed.lanes)) for feed in self._feeds.values())

    # The clock ------------------------------------------------------------------------------

    def _start(self) -> None:
        with self._lock:
            if self._thread is not None or self._closed:
                return
            self._due = self._clock()
            self._spawn(resume=None)
            self._watchdog = threading.Thread(
                target=self._watch, name="voice-sender-watchdog", daemon=True
            )
            self._watchdog.start()

    def _spawn(self, resume: _Progress | None) -> None:
        """A sender thread of the current generation (under the lock)."""
        generation = self._generation
        self._thread = threading.Thread(
            target=self._run, args=(generation, resume), name="voice-sender", daemon=True
        )
        self._thread.start()

    def _run(self, generation: int, resume: _Progress | None) -> None:
        self._sender_id = threading.get_native_id()
        if resume is not None:
            self._tick(generation, resume)
            if generation != self._generation:
                return
        while generation == self._generation:
            if self._closed or (not self._plan and not self._ending):
                if self._closed:
                    self._finish_ending(generation)
                    return
                self._wake.wait()  # nothing plays: sleep until something does
                self._wake.clear()
                self._due = max(self._due, self._clock())
                continue
            now = self._clock()
            wait = self._due - now
            if wait > 0:
                self._wake.wait(wait)
                self._wake.clear()
                if self._ending:
                    self._finish_ending(generation)
                continue
            if wait < -MAX_LATE_SECONDS:
                self._due = now  # a long stall (the process was stopped): start the clock anew
            elif wait < -self.frame_seconds:
                self.late_ticks += 1
            self._due += self.frame_seconds
            self.ticks += 1
            self._finish_ending(generation)
            if generation != self._generation:
                return  # a closing silence stalled: a new sender thread has the clock
            self._tick(generation, None)

    def _tick(self, generation: int, resume: _Progress | None) -> None:
        """Send one frame of every station to each of its lanes; from ``resume`` on when
        given: a replacement thread goes on where a stuck one stopped, with the plan and packets
        it had."""
        if resume is None:
            plan = self._plan
            progress = _Progress(plan, [self._read(feed) for feed, _ in plan])
        else:
            progress = resume
        plan, packets = progress.plan, progress.packets
        start_feed, start_lane = progress.feed, progress.lane
        self._progress = progress
        for index in range(start_feed, len(plan)):
            lanes = plan[index][1]
            packet = packets[index] if index < len(packets) else b""
            if not packet:
                continue  # the station's source closed: its lanes were ended by _read
            audio = packet != OPUS_SILENCE
            first = start_lane if index == start_feed else 0
            for position in range(first, len(lanes)):
                lane = lanes[position]
                if lane.stalled or not lane.playing:
                    continue
                if not lane.link.is_connected():
                    lane.connected = False  # reconnecting: no packet, no sequence number
                    continue
                if not lane.connected:
                    lane.connected = True
                    if lane.frames_sent:
                        lane.link.speaking(True)  # back after a reconnect, as AudioPlayer does
                progress.feed, progress.lane = index, position
                sent = self._send(generation, lane, packet)
                lane.frames_sent += 1
                if sent is _TAKEN_OVER:
                    return  # another thread goes on with the tick
                if audio:
                    lane.audio_frames += 1
                else:
                    lane.silence_frames += 1

    def _send(self, generation: int, lane: Lane, packet: bytes, *, goodbye: bool = False) -> _Sent:
        """One send the watchdog can see. A failure is kept as the lane's error, except in a
        closing silence (``goodbye``: no error, as in AudioPlayer). TAKEN_OVER when it stalled:
        a newer thread has the clock and the lane is freed. Its end and a rescue agree under the
        lock: either the rescue came first (this thread ends) or the send's end (no rescue for
        it)."""
        self._busy = lane
        self._sends += 1
        ok = True
        try:
            lane.link.send_audio_packet(packet, encode=False)
        except Exception as error:  # one guild's failure is its own
            ok = False
            if lane.error is None and not goodbye:
                lane.error = error
                _LOGGER.warning("voice send failed: %s", type(error).__name__)
        finally:
            with self._lock:
                if self._busy is lane:
                    self._busy = None
                current = generation == self._generation
        if not current:
            lane.stalled = False
            return _TAKEN_OVER
        return _OK if ok else _FAILED

    def _read(self, feed: _Feed) -> bytes:
        try:
            packet = feed.source.read()
        except Exception as error:
            _LOGGER.warning("voice source of %s failed: %s", feed.station, type(error).__name__)
            packet = b""
        if not packet:  # the source ended: so does its playback, as AudioPlayer's does
            for lane in list(feed.lanes):
                self.stop(lane)
        return packet

    def _finish_ending(self, generation: int) -> None:
        """Closing silence and "not speaking" for the lanes that stopped; then ``after``."""
        with self._lock:
            ending, self._ending = self._ending, []
        for done, lane in enumerate(ending):
            if generation != self._generation:
                # A closing silence stalled: the newer sender thread sees to the rest.
                with self._lock:
                    self._ending.extend(ending[done:])
                self._wake.set()
                return
            if not lane.stalled and lane.link.is_connected():
                self._progress = None  # stalled here: the new thread starts with the next tick
                for _ in range(STOP_SILENCE):
                    if self._send(generation, lane, OPUS_SILENCE, goodbye=True) is not _OK:
                        break
                lane.link.speaking(False)
            lane.ended = True
            if lane.after is not None:
                try:
                    lane.after(lane.error)
                except Exception:
                    _LOGGER.exception("a voice lane's after callback failed")

    # Stalls ---------------------------------------------------------------------------------

    def _watch(self) -> None:
        """Every ``stall_after`` s: a send that has not returned since the last look stalls its
        lane; a new sender thread goes on with the others. While the sender thread is runnable
        (on a CPU or queued for one: a busy machine preempted it) the send is not stuck on its
        guild: it is waited for up to ``patience`` looks, since replacing a thread the machine
        merely paused costs a thread start and a frame of the paused guild and gains nothing
        (how long a loaded machine pauses it: docs/features/voice.md)."""
        seen = -1
        looks = 0
        while not self._closed:
            time.sleep(self.stall_after if self._plan else 0.25)
            self._rescue_line.flush()
            busy, sends = self._busy, self._sends
            if busy is not None and sends == seen:
                looks += 1
                if looks < self.patience and runnable(self._sender_id):
                    continue
                self._rescue(busy)
                seen, looks = -1, 0
            else:
                seen = sends if busy is not None else -1
                looks = 0

    def _rescue(self, lane: Lane) -> None:
        with self._lock:
            if self._busy is not lane or self._closed:
                return
            lane.stalled = True
            lane.stalls += 1
            self.rescues += 1
            self._generation += 1
            progress = self._progress
            self._busy = None
            if progress is None:
                self._spawn(resume=None)
            else:
                self._spawn(
                    resume=_Progress(
                        progress.plan, progress.packets, progress.feed, progress.lane + 1
                    )
                )
        self._rescue_line.count()

    @staticmethod
    def _say_rescues(count: int, total: int) -> None:
        # (A loaded machine pauses the thread inside a send too: many mean too little CPU.)
        _LOGGER.info(
            "voice: %d guild send(s) stalled and the sender went on without them (%d since "
            "start); many each minute mean this machine is too busy for its voice guilds",
            count,
            total,
        )

    # Life -----------------------------------------------------------------------------------

    def close(self) -> None:
        """End every lane (the sender thread sends their closing silence and runs their
        ``after``, then ends); returns at once."""
        with self._lock:
            lanes = [lane for feed in self._feeds.values() for lane in feed.lanes]
        for lane in lanes:
            self.stop(lane)
        with self._lock:
            self._closed = True
            if self._thread is None:  # never started: nobody else will run the afters
                ending, self._ending = self._ending, []
                for lane in ending:
                    lane.ended = True
        self._wake.set()
