"""What the fake voice server counted from one guild's RTP: frames, gaps and arrival times,
and the pace the sender kept.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class FrameStats:
    """Frames received from one guild's voice client (a snapshot; arrival times are monotonic)."""

    frames: int = 0
    audio: int = 0
    silence: int = 0
    gaps: int = 0  # sequence discontinuities (a lost, duplicated or reordered packet)
    dave_frames: int = 0  # payloads with the DAVE trailer (0 while DAVE is in passthrough)
    rejected: int = 0  # packets that failed to decrypt or were malformed
    arrivals: list[float] = field(default_factory=list)
    audio_arrivals: list[float] = field(default_factory=list)
    # RTP timestamp advances between consecutive packets of one SSRC: {960} when every frame is
    # 20 ms of 48 kHz audio (50 frames to a second of sound, however the packets were paced).
    steps: set[int] = field(default_factory=set)
    # (arrival, verdict) of each audio frame while the call has DAVE listeners: "opus" (each
    # member listener decrypted it), "failed" (one could not) or "plain" (no DAVE at all).
    media: list[tuple[float, str]] = field(default_factory=list)

    def add(self, other: FrameStats, *, arrivals: bool = True) -> None:
        """Count ``other`` in (another SSRC of the same guild); without ``arrivals``, all but
        the arrival times."""
        self.frames += other.frames
        self.audio += other.audio
        self.silence += other.silence
        self.gaps += other.gaps
        self.dave_frames += other.dave_frames
        self.rejected += other.rejected
        self.steps |= other.steps
        if arrivals:
            self.arrivals += other.arrivals
            self.audio_arrivals += other.audio_arrivals
            self.media += other.media

    def rate(self, window: float = 2.0, *, audio_only: bool = False) -> float:
        """Frames per second the sender kept to over the last ``window`` seconds of arrivals.

        A player paced like discord.py's (frame n due at start + n x 20 ms; a late one is sent
        at once and the next ones catch up) sends a frame late but never early, so the punctual
        frames lie on the lower envelope of (frame number, kernel arrival time) and a stall and
        its catch-up burst lie above it. The envelope's slope at the middle of the window is
        the rate: a loaded machine's stalls do not move it, a player that paces wrong does."""
        times = self.audio_arrivals if audio_only else self.arrivals
        if len(times) < 2:
            return 0.0
        end = times[-1]
        points = [(n, t) for n, t in enumerate(times) if t >= end - window]
        hull: list[tuple[int, float]] = []  # the lower convex hull, left to right
        for point in points:
            while len(hull) >= 2 and _turns_down(hull[-2], hull[-1], point):
                hull.pop()
            hull.append(point)
        middle = (points[0][0] + points[-1][0]) / 2
        for (n0, t0), (n1, t1) in itertools.pairwise(hull):
            if n0 <= middle <= n1:
                return (n1 - n0) / (t1 - t0) if t1 > t0 else float("inf")
        return 0.0

    def span(self, *, audio_only: bool = False) -> float:
        """Seconds between the first and the last counted frame."""
        times = self.audio_arrivals if audio_only else self.arrivals
        return times[-1] - times[0] if len(times) > 1 else 0.0

    def verdicts(self, after: float) -> Counter[str]:
        """What the DAVE listeners made of the audio frames that arrived after ``after``."""
        return Counter(verdict for arrived, verdict in self.media if arrived > after)

    def audio_after(self, moment: float) -> int:
        """Audio frames that arrived after ``moment`` (``time.monotonic()``)."""
        return sum(1 for t in self.audio_arrivals if t > moment)


def _turns_down(a: tuple[int, float], b: tuple[int, float], c: tuple[int, float]) -> bool:
    """True when ``b`` lies on or above the line from ``a`` to ``c`` (not a lower hull vertex)."""
    return (b[1] - a[1]) * (c[0] - a[0]) >= (c[1] - a[1]) * (b[0] - a[0])
