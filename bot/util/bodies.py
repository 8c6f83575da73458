"""Reading an HTTP answer with a cap (a station's, a song search's): a body larger than the
caller allows is refused as it streams in, never buffered whole (a hostile or broken server may
send without end)."""

from __future__ import annotations

import aiohttp

CHUNK = 64 * 1024


async def read_at_most(response: aiohttp.ClientResponse, limit: int) -> bytes | None:
    """The body, or None as soon as more than ``limit`` bytes of it have come in."""
    buffer = bytearray()
    async for chunk in response.content.iter_chunked(CHUNK):
        buffer += chunk
        if len(buffer) > limit:
            return None
    return bytes(buffer)
