"""Test audio for the fake Icecast, one per mount format a real Icecast 2 serves, and its cut
into the container's own units (MP3 frames, ADTS frames, Ogg pages) with their durations.

The media is made at test time with the bundled FFmpeg (nothing is committed): a sine tone under
pink noise, so a VBR codec (Vorbis, Opus) really spends its bit rate. Ogg streams keep FFmpeg's
default page duration (1 s: pages of 0.5-1 s, as a source encoder writes them), so their audio
arrives in bursts, as it does from a real Icecast.
"""

from __future__ import annotations

import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bot.voice.ogg import ogg_crc

OGG_FLAGS_AT = 5
OGG_END_OF_STREAM = 0x04
OGG_GRANULE_AT = 6
OGG_SEQUENCE_AT = 18
OGG_CRC_AT = 22


@dataclass(frozen=True, slots=True)
class Unit:
    """One frame or page of the looped body: its bytes ``[start, end)`` and seconds of sound."""

    start: int
    end: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Media:
    """One mount's audio: ``header`` (an Ogg stream's header pages: Icecast sends them to every
    new listener before anything else) and the ``body`` looped forever, cut into ``units``."""

    name: str
    content_type: str
    header: bytes
    body: bytes
    units: tuple[Unit, ...]
    ogg: bool = False

    @property
    def seconds(self) -> float:
        return sum(unit.seconds for unit in self.units)

    @property
    def bytes_per_second(self) -> float:
        return len(self.body) / self.seconds

    def unit_bytes(self, index: int, loop: int) -> bytes:
        """Unit ``index`` of loop ``loop``: an Ogg page's granule position and sequence number
        carry on across loops (its CRC redone), as one endless stream's would."""
        unit = self.units[index]
        data = self.body[unit.start : unit.end]
        if not self.ogg or (loop == 0 and index < len(self.units) - 1):
            return data
        page = bytearray(data)
        page[OGG_FLAGS_AT] &= ~OGG_END_OF_STREAM  # the stream goes on: no end-of-stream page
        granule, sequence = _ogg_positions(self.body, self.units[-1])
        first_sequence = _ogg_positions(self.body, self.units[0])[1]
        own_granule = struct.unpack_from("<q", page, OGG_GRANULE_AT)[0]
        own_sequence = struct.unpack_from("<I", page, OGG_SEQUENCE_AT)[0]
        struct.pack_into("<q", page, OGG_GRANULE_AT, own_granule + loop * granule)
        span = sequence - first_sequence + 1
        struct.pack_into("<I", page, OGG_SEQUENCE_AT, (own_sequence + loop * span) & 0xFFFFFFFF)
        page[OGG_CRC_AT : OGG_CRC_AT + 4] = b"\0\0\0\0"
        struct.pack_into("<I", page, OGG_CRC_AT, ogg_crc(page))
        return bytes(page)


def _ogg_positions(body: bytes, unit: Unit) -> tuple[int, int]:
    granule: int = struct.unpack_from("<q", body, unit.start + OGG_GRANULE_AT)[0]
    sequence: int = struct.unpack_from("<I", body, unit.start + OGG_SEQUENCE_AT)[0]
    return granule, sequence


# (name, content type, FFmpeg output options): the mount formats docs/benchmarks.md measures.
FORMATS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mp3-128": ("audio/mpeg", ("-c:a", "libmp3lame", "-b:a", "128k", "-f", "mp3")),
    "mp3-320": ("audio/mpeg", ("-c:a", "libmp3lame", "-b:a", "320k", "-f", "mp3")),
    "aac-128": ("audio/aac", ("-c:a", "aac", "-b:a", "128k", "-f", "adts")),
    "vorbis": ("application/ogg", ("-c:a", "libvorbis", "-b:a", "128k", "-f", "ogg")),
    "opus": ("audio/ogg", ("-ar", "48000", "-c:a", "libopus", "-b:a", "128k", "-f", "ogg")),
}


def make_media(ffmpeg: str, name: str, folder: Path, *, seconds: float = 12.0) -> Media:
    """Encode ``seconds`` of test audio as mount ``name`` (a key of :data:`FORMATS`) and cut
    it into units. Blocking (FFmpeg runs for a second or two): call it off the event loop."""
    content_type, options = FORMATS[name]
    path = folder / f"{name}.bin"
    subprocess.run(
        [
            *(ffmpeg, "-nostdin", "-hide_banner", "-loglevel", "error", "-y"),
            *("-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=44100:duration={seconds}"),
            *("-f", "lavfi", "-i", f"anoisesrc=d={seconds}:c=pink:r=44100:a=0.2"),
            *("-filter_complex", "amix=inputs=2", "-ac", "2"),
            # MP3: no ID3 or Xing header, so the file loops as one endless stream.
            *(("-write_xing", "0", "-id3v2_version", "0") if name.startswith("mp3") else ()),
            *options,
            str(path),
        ],
        check=True,
        timeout=120,
    )
    return media_of(name, path.read_bytes(), content_type)


def media_of(name: str, data: bytes, content_type: str) -> Media:
    """Cut encoded ``data`` into its units (MP3, ADTS or Ogg by its first bytes)."""
    if data.startswith(b"OggS"):
        header, body, units = _ogg_units(data)
        return Media(name, content_type, header, body, units, ogg=True)
    if len(data) > 1 and data[0] == 0xFF and data[1] & 0xF6 == 0xF0:
        return Media(name, content_type, b"", data, _adts_units(data))
    return Media(name, content_type, b"", data, _mp3_units(data))


_MP3_KBPS = (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320)
_MP3_RATES = (44100, 48000, 32000)
_ADTS_RATES = (96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025)


def _mp3_units(data: bytes) -> tuple[Unit, ...]:
    """MPEG-1 Layer III frames (what ``make_media`` writes), 1152 samples each."""
    units = []
    at = 0
    while at + 4 <= len(data):
        b1, b2 = data[at + 1], data[at + 2]
        if data[at] != 0xFF or b1 & 0xFE != 0xFA:
            raise ValueError(f"not an MPEG-1 Layer III frame at byte {at}")
        rate = _MP3_RATES[(b2 >> 2) & 3]
        size = 144 * _MP3_KBPS[b2 >> 4] * 1000 // rate + ((b2 >> 1) & 1)
        units.append(Unit(at, min(at + size, len(data)), 1152 / rate))
        at += size
    return tuple(units)


def _adts_units(data: bytes) -> tuple[Unit, ...]:
    """ADTS frames, 1024 samples each."""
    units = []
    at = 0
    while at + 7 <= len(data):
        if data[at] != 0xFF or data[at + 1] & 0xF6 != 0xF0:
            raise ValueError(f"not an ADTS frame at byte {at}")
        rate = _ADTS_RATES[(data[at + 2] >> 2) & 0xF]
        size = ((data[at + 3] & 3) << 11) | (data[at + 4] << 3) | (data[at + 5] >> 5)
        units.append(Unit(at, at + size, 1024 / rate))
        at += size
    return tuple(units)


def _ogg_units(data: bytes) -> tuple[bytes, bytes, tuple[Unit, ...]]:
    """The header pages (granule 0) and the audio pages after them, each page's duration from
    its granule advance (Opus counts 48 kHz samples; Vorbis its own rate, from its id header)."""
    pages = []
    at = 0
    while at + 27 <= len(data):
        if data[at : at + 4] != b"OggS":
            raise ValueError(f"not an Ogg page at byte {at}")
        count = data[at + 26]
        size = 27 + count + sum(data[at + 27 : at + 27 + count])
        pages.append((at, at + size, struct.unpack_from("<q", data, at + OGG_GRANULE_AT)[0]))
        at += size
    # The header pages are the leading ones at granule 0; after them every page is the body's
    # (one on which no packet ends has granule -1 and no sound of its own).
    body_pages = pages[next(i for i, page in enumerate(pages) if page[2] != 0) :]
    header_end = body_pages[0][0]
    identification = data[pages[0][0] + 27 + data[pages[0][0] + 26] :]
    if identification.startswith(b"\x01vorbis"):
        rate = struct.unpack_from("<I", identification, 12)[0]
    else:
        rate = 48000  # Opus granules count 48 kHz samples whatever the input rate
    units = []
    previous = 0
    for start, end, granule in body_pages:
        seconds = (granule - previous) / rate if granule >= 0 else 0.0
        units.append(Unit(start - header_end, end - header_end, seconds))
        previous = max(previous, granule)
    return data[:header_end], data[header_end:], tuple(units)
