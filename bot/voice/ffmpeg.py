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
FORMAT_PROBE_BYTES = "8192"
# The input format named from the stream's Content-Type: FFmpeg then decodes from the first
# frame it finds. Probing instead reads 128-256 KiB of an MP3 stream that starts mid-frame (as
# every Icecast burst does) before it decodes anything: seconds of silence on each join.
INPUT_FORMATS = {
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/x-mpeg": "mp3",
    "audio/mpeg3": "mp3",
    "audio/aac": "aac",
    "audio/aacp": "aac",
    "audio/x-aac": "aac",
    "audio/ogg": "ogg",
    "application/ogg": "ogg",
    "audio/x-ogg": "ogg",
    "audio/vorbis": "ogg",
    "audio/opus": "ogg",
}


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


def input_format(content_type: str) -> str | None:
    """FFmpeg's demuxer for a stream's ``Content-Type`` (``mp3``, ``aac``, ``ogg``), or None
    for a type that does not say (``application/octet-stream``, none): FFmpeg probes then."""
    return INPUT_FORMATS.get(content_type.split(";", 1)[0].strip().lower())


def decode_args(ffmpeg: str, fmt: str | None = None) -> list[str]:
    """FFmpeg arguments: the stream's bytes in on stdin (demuxed as ``fmt`` when the stream
    named its format, else probed from at most 8 KiB), Opus (48 kHz stereo, 20 ms, 128k) in
    Ogg out on stdout, one 20 ms packet a page so packets leave as soon as they are encoded.
    No URL: FFmpeg opens nothing itself."""
    named = ["-f", fmt] if fmt else []
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
        "-formatprobesize",
        FORMAT_PROBE_BYTES,
        "-probesize",
        "8192",
        "-analyzeduration",
        "200000",
        *named,
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
