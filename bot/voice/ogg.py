"""Incremental Ogg page parser: bytes as they come off FFmpeg's stdout in, Opus packets out.

Fed whatever chunk sizes a pipe read returns (a page may be split anywhere); it resynchronises
on the ``OggS`` capture pattern after garbage, never buffers more than one maximal page plus a
read, checks each page's CRC (so garbage that happens to contain ``OggS`` is not taken for a
page) and skips the OpusHead/OpusTags header packets. Cheap enough for the event loop: one
~400-byte page per 20 ms per station.
"""

from __future__ import annotations

import struct
import zlib

CAPTURE = b"OggS"
HEADER = struct.Struct("<4sBBqIIIB")  # capture, version, flags, granule, serial, seq, crc, nsegs
HEADER_SIZE = HEADER.size  # 27
MAX_PAGE = HEADER_SIZE + 255 + 255 * 255
MAX_PACKET = 64 * 1024  # an Opus packet is at most a few KB; a longer one is garbage
CONTINUED = 0x01
OPUS_HEADERS = (b"OpusHead", b"OpusTags")


_REVERSED_BITS = bytes(int(f"{byte:08b}"[::-1], 2) for byte in range(256))


def ogg_crc(data: bytes | bytearray) -> int:
    """Ogg's CRC-32 (polynomial 0x04C11DB7, not reflected, initial value 0, no final xor).

    zlib computes the reflected CRC with the same polynomial in C: feed it the bytes with their
    bits reversed, undo its initial and final inversion, and reverse the 32-bit result."""
    raw = zlib.crc32(data.translate(_REVERSED_BITS), 0xFFFFFFFF) ^ 0xFFFFFFFF
    return int(f"{raw:032b}"[::-1], 2)


class OggOpusParser:
    """Feed bytes, get complete Opus audio packets."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._partial: bytearray | None = None  # a packet continued on the next page
        self._last_seq: dict[int, int] = {}  # serial: last page sequence number
        self.pages = 0
        self.skipped_bytes = 0  # garbage discarded while resynchronising
        self.dropped_packets = 0  # partial packets lost to a gap or garbage

    def feed(self, data: bytes) -> list[bytes]:
        """Every packet completed by ``data`` (possibly none)."""
        self._buffer += data
        packets: list[bytes] = []
        while True:
            start = self._buffer.find(CAPTURE)
            if start < 0:
                keep = len(CAPTURE) - 1  # a capture pattern may be split across reads
                self._skip(len(self._buffer) - keep)
                return packets
            if start:
                self._skip(start)
            if len(self._buffer) < HEADER_SIZE:
                return packets
            _, version, flags, _, serial, seq, crc, nsegs = HEADER.unpack_from(self._buffer)
            if version != 0:
                self._skip(1)  # not a page: look for the next capture pattern
                continue
            table_end = HEADER_SIZE + nsegs
            if len(self._buffer) < table_end:
                return packets
            lacing = self._buffer[HEADER_SIZE:table_end]
            page_end = table_end + sum(lacing)
            if len(self._buffer) < page_end:
                return packets
            page = self._buffer[:page_end]  # a copy (a bytearray slice is one)
            page[22:26] = b"\0\0\0\0"  # the CRC is computed with its own field zeroed
            if ogg_crc(page) != crc:
                self._skip(1)  # a false capture pattern or a damaged page
                continue
            body = bytes(page[table_end:])
            del self._buffer[:page_end]
            self.pages += 1
            self._page(serial, seq, flags, lacing, body, packets)

    def _skip(self, count: int) -> None:
        if count <= 0:
            return
        del self._buffer[:count]
        self.skipped_bytes += count
        if self._partial is not None:  # whatever it continued on is gone
            self._partial = None
            self.dropped_packets += 1

    def _page(
        self,
        serial: int,
        seq: int,
        flags: int,
        lacing: bytearray,
        body: bytes,
        packets: list[bytes],
    ) -> None:
        previous = self._last_seq.get(serial)
        self._last_seq[serial] = seq
        gap = previous is not None and seq != (previous + 1) & 0xFFFFFFFF
        continued = bool(flags & CONTINUED)
        current = self._partial
        if current is not None and (gap or not continued):
            self.dropped_packets += 1
            current = None
        # A continuation whose start we never saw: discard it up to its end.
        discarding = continued and current is None
        offset = 0
        for size in lacing:
            if not discarding:
                if current is None:
                    current = bytearray()
                current += body[offset : offset + size]
                if len(current) > MAX_PACKET:
                    current = None
                    discarding = True
                    self.dropped_packets += 1
            offset += size
            if size < 255:  # the packet ends here
                if current is not None and not discarding:
                    self._emit(bytes(current), packets)
                current = None
                discarding = False
        self._partial = current

    @staticmethod
    def _emit(packet: bytes, packets: list[bytes]) -> None:
        if not packet or packet.startswith(OPUS_HEADERS):
            return
        packets.append(packet)
