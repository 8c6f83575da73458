"""Finding FFmpeg and the one command line that turns a station's stream into Opus packets.

The stream URL is station text, so it is untrusted: only http(s) of bounded length. FFmpeg never
sees it: OnAir opens the stream through its guarded session and pipes the bytes to FFmpeg's stdin
(see stream.py), and FFmpeg may open no protocol but ``pipe`` (a playlist in the stream cannot
make it read a file or connect anywhere).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from yarl import URL

log = logging.getLogger(__name__)

FFMPEG_ENV = "ONAIR_FFMPEG"
MAX_STREAM_URL = 2048  # characters; a listen link is far shorter
ALLOWED_PROTOCOLS = "pipe"  # stdin in, stdout out: nothing else
OPUS_BITRATE = "128k"


@dataclass(frozen=True, slots=True)
class FFmpegBinary:
    """An FFmpeg executable and where it was found ("ONAIR_FFMPEG", "imageio-ffmpeg", "PATH")."""

    path: str
    origin: str


class UnsafeStreamUrl(ValueError):
    """A stream URL FFmpeg must not be given (not http(s), too long, control characters)."""


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


def check_stream_url(stream_url: str) -> str:
    """The URL if FFmpeg may open it: http(s), a host, bounded, no whitespace or control
    characters (an argument must never be read as an option or a second URL)."""
    if not isinstance(stream_url, str) or not stream_url:
        raise UnsafeStreamUrl("no stream URL")
    if len(stream_url) > MAX_STREAM_URL:
        raise UnsafeStreamUrl(f"the stream URL is longer than {MAX_STREAM_URL} characters")
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in stream_url):
        raise UnsafeStreamUrl("the stream URL contains spaces or control characters")
    try:
        url = URL(stream_url)
    except (ValueError, TypeError):
        raise UnsafeStreamUrl("the stream URL is not a URL") from None
    if url.scheme.lower() not in ("http", "https") or not url.host:
        raise UnsafeStreamUrl("the stream URL must be an http:// or https:// address")
    return stream_url


def redact_url(stream_url: str) -> str:
    """``scheme://host[:port]/…`` for logs: paths and queries may carry listener tokens."""
    try:
        url = URL(stream_url)
        host = url.host or "?"
    except (ValueError, TypeError):
        return "<stream>"
    port = f":{url.explicit_port}" if url.explicit_port else ""
    return f"{url.scheme}://{host}{port}/…"


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
