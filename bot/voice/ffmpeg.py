"""Finding FFmpeg and the one command line that turns a station's stream into Opus packets.

FFmpeg never sees the stream's URL: OnAir opens the stream through its guarded session and pipes
the bytes to FFmpeg's stdin (stream.py checks and opens URLs), and FFmpeg may open no protocol
but ``pipe`` (a playlist in the stream cannot make it read a file or connect anywhere).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass

log = logging.getLogger(__name__)

FFMPEG_ENV = "ONAIR_FFMPEG"
ALLOWED_PROTOCOLS = "pipe"  # stdin in, stdout out: nothing else
OPUS_BITRATE = "128k"


@dataclass(frozen=True, slots=True)
class FFmpegBinary:
    """An FFmpeg executable and where it was found ("ONAIR_FFMPEG", "imageio-ffmpeg", "PATH")."""

    path: str
    origin: str


def _bundled_ffmpeg() -> str | None:
    """The static FFmpeg of the ``imageio-ffmpeg`` wheel, if it is installed and usable."""
    try:
        import imageio_ffmpeg

        path = imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError, OSError):
        return None
    return str(path) if path and os.access(path, os.X_OK) else None


def find_ffmpeg(
    environ: Mapping[str, str] | None = None,
    *,
    bundled: Callable[[], str | None] = _bundled_ffmpeg,
) -> FFmpegBinary | None:
    """``ONAIR_FFMPEG``, else imageio-ffmpeg's binary, else ``ffmpeg`` on PATH; None if none.

    A set but unusable ``ONAIR_FFMPEG`` is None (with one warning line), not a silent fallback:
    the owner asked for that binary. ``bundled`` exists so tests can take the wheel away."""
    env = os.environ if environ is None else environ
    wanted = env.get(FFMPEG_ENV, "").strip()
    if wanted:
        found = shutil.which(wanted, path=env.get("PATH", os.defpath))
        if found is None:
            log.warning("%s=%s is not an executable FFmpeg", FFMPEG_ENV, wanted[:200])
            return None
        return FFmpegBinary(found, FFMPEG_ENV)
    wheel = bundled()
    if wheel:
        return FFmpegBinary(wheel, "imageio-ffmpeg")
    on_path = shutil.which("ffmpeg", path=env.get("PATH", os.defpath))
    return FFmpegBinary(on_path, "PATH") if on_path else None


def decode_args(ffmpeg: str) -> list[str]:
    """FFmpeg arguments: the stream's bytes in on stdin, Opus (48 kHz stereo, 20 ms, 128k) in
    Ogg out on stdout, one 20 ms packet a page so packets leave as soon as they are encoded.
    No URL: FFmpeg opens nothing itself."""
    return [
        ffmpeg,
        "-nostdin",  # no keyboard interaction; the input is still read from pipe:0
        "-hide_banner",
        "-loglevel",
        "error",
        # Input: stdin only (a playlist in the stream can never make FFmpeg open anything).
        "-protocol_whitelist",
        ALLOWED_PROTOCOLS,
        # Start fast: a few KB identify MP3/AAC/Ogg; no long analysis.
        "-probesize",
        "8192",
        "-analyzeduration",
        "200000",
        "-i",
        "pipe:0",
        "-map",
        "0:a:0",
        "-vn",
        "-c:a",
        "libopus",
        "-b:a",
        OPUS_BITRATE,
        "-ar",
        "48000",
        "-ac",
        "2",
        "-frame_duration",
        "20",
        "-application",
        "audio",
        "-f",
        "ogg",
        "-page_duration",
        "20000",
        "-flush_packets",
        "1",
        "pipe:1",
    ]
