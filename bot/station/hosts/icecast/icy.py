"""ICY in-stream metadata, as Icecast 2 sends it to a listener that asks with ``Icy-MetaData: 1``.

The answer's ``icy-metaint`` header says how many audio bytes come between two metadata
blocks. Each block is one length byte (×16) and that many bytes: ``StreamTitle='...';`` padded
with NULs, optionally ``StreamUrl='...';``; a length byte of 0 means "unchanged" (Icecast
``format_mp3.c``: ``send_stream_metadata`` sends the block when the mount's metadata changed
since the last one this listener got, else a single zero byte). Quotes inside a title are not
escaped: Icecast itself ends the title at the first ``';`` (``filter_shoutcast_metadata``).
The text is the mount's charset: Latin-1 by default, UTF-8 when the source or admin sent it
so; read as UTF-8 when it is valid UTF-8, else as Latin-1.

The stream is untrusted: the reader keeps no audio (it discards each chunk as it arrives),
refuses a ``metaint`` outside 1..MAX_METAINT, and a block is at most 255×16 bytes by its very
format.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Protocol

# Icecast's default is 16000; SHOUTcast's 8192. Anything far above is no Icecast.
MAX_METAINT = 256 * 1024
MAX_BLOCK = 255 * 16
# How much audio is read (and dropped) at a time: the reader never holds more.
CHUNK = 16 * 1024
MAX_TITLE = 500


class ByteStream(Protocol):
    """What the reader needs of a response body (aiohttp's ``StreamReader`` is one)."""

    async def read(self, n: int = -1) -> bytes: ...

    async def readexactly(self, n: int) -> bytes: ...


class NoMetadata(Exception):
    """The server sends no usable in-stream metadata on this mount (no or a bad metaint)."""


def metaint_of(headers: Mapping[str, str]) -> int:
    """The metadata interval the answer announces; ``NoMetadata`` when it has none or an
    absurd one (0, negative, not a number, above ``MAX_METAINT``)."""
    raw = headers.get("icy-metaint") or headers.get("Icy-MetaInt")
    if raw is None:
        raise NoMetadata("no icy-metaint header")
    text = raw.strip()
    if not text.isdigit() or len(text) > 7:
        raise NoMetadata("icy-metaint is not a number")
    value = int(text)
    if not 1 <= value <= MAX_METAINT:
        raise NoMetadata(f"icy-metaint {value} out of range")
    return value


def decode_text(raw: bytes) -> str:
    """UTF-8 when it is valid UTF-8, else Latin-1 (every byte string is Latin-1)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def stream_title(block: bytes) -> str | None:
    """The ``StreamTitle`` of one metadata block (its bytes after the length byte), or None
    when the block names none. Blank titles are "" (nothing on air)."""
    data = block.rstrip(b"\x00")
    start = data.find(b"StreamTitle='")
    if start < 0:
        return None
    start += len(b"StreamTitle='")
    end = data.find(b"';", start)
    if end < 0:
        # The last field may lack its ';' (some sources): up to the closing quote, if any.
        end = data.rfind(b"'")
        if end < start:
            return None
    text = decode_text(data[start:end])
    text = "".join(ch for ch in text if ch.isprintable() or ch == " ")
    return text.strip()[:MAX_TITLE]


@dataclass(frozen=True, slots=True)
class Block:
    """One metadata block that carried text (a zero-length "unchanged" block yields none)."""

    title: str | None
    raw_length: int


async def blocks(body: ByteStream, metaint: int) -> AsyncIterator[Block]:
    """Each non-empty metadata block of ``body``, read ``metaint`` audio bytes apart, the audio
    dropped chunk by chunk. Ends when the stream does (``IncompleteReadError`` included)."""
    while True:
        left = metaint
        while left:
            chunk = await body.read(min(CHUNK, left))
            if not chunk:
                return
            left -= len(chunk)
        length = (await body.readexactly(1))[0] * 16
        if not length:
            continue
        block = await body.readexactly(length)
        yield Block(stream_title(block), length)
