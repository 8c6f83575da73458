"""A loopback TCP relay between OnAir and PostgreSQL that keeps a killed connection looking alive.

When PostgreSQL ends a session (``pg_terminate_backend``, a fast shutdown, a failover) it sends
a FATAL ``ErrorResponse`` and closes the socket. Over a network the client often sees the close
late, and meanwhile asyncpg's pool hands the dying connection out: the next query fails with
``InternalClientError`` ("cannot switch to state 12; another operation is in progress"). The
relay makes that window deterministic: after the server's FATAL message it forwards everything
the server sent, then keeps the client's side open (and swallows what the client writes) until
:meth:`PgRelay.release` is called or ``hold`` seconds have passed. Everything else is relayed
byte for byte; an SSL request is answered "no" by the relay itself, so the messages it reads
are plain.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
MAX_MESSAGE = 64 * 1024 * 1024


def fatal_severity(body: bytes) -> bool:
    """Whether an ErrorResponse body (fields of a code byte and a NUL-ended string) says FATAL
    or PANIC: the server ends the session after it."""
    for part in body.split(b"\x00"):
        if part[:1] in (b"S", b"V") and part[1:] in (b"FATAL", b"PANIC"):
            return True
    return False


@dataclass(eq=False)
class _Session:
    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter
    dying: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class PgRelay:
    """``async with PgRelay(url) as relay``: ``relay.url`` reaches the same database through
    the relay. ``fatals`` counts the FATAL messages seen, ``held`` the client sides kept open
    after one."""

    def __init__(self, url: str, *, hold: float = 5.0) -> None:
        parts = urlsplit(url)
        self._parts = parts
        self.target_host = parts.hostname or "127.0.0.1"
        self.target_port = parts.port or 5432
        self.hold = hold
        self.fatals = 0
        self.held = 0
        self.connections = 0
        self._released = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._sessions: set[_Session] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        netloc = self._parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{port}"
        location = f"{netloc[0]}@{host}" if len(netloc) == 2 else host
        return urlunsplit(self._parts._replace(netloc=location))

    async def __aenter__(self) -> PgRelay:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self.release()
        assert self._server is not None
        self._server.close()
        for session in list(self._sessions):
            session.client.close()
            session.upstream.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()

    def release(self) -> None:
        """Close the client side of every dying connection now (and of those to come)."""
        self._released.set()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._spawn(self._serve(reader, writer))

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            writer.close()
            return
        self.connections += 1
        session = _Session(writer, up_writer)
        self._sessions.add(session)
        try:
            upstream = self._spawn(self._client_to_server(reader, session))
            await self._server_to_client(up_reader, session)
            upstream.cancel()
            if session.dying:
                self.held += 1
                # Keep the client's side open; swallow what the client still writes.
                drain = self._spawn(self._swallow(reader))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._released.wait(), self.hold)
                drain.cancel()
        finally:
            self._sessions.discard(session)
            writer.close()
            up_writer.close()

    async def _client_to_server(self, reader: asyncio.StreamReader, session: _Session) -> None:
        try:
            # The startup packet has no type byte: an SSL (or GSS) request is refused here.
            while True:
                head = await reader.readexactly(8)
                length, code = struct.unpack("!ii", head)
                if length == 8 and code in (SSL_REQUEST, GSSENC_REQUEST):
                    session.client.write(b"N")
                    await session.client.drain()
                    continue
                session.upstream.write(head + await reader.readexactly(length - 8))
                break
            while chunk := await reader.read(65536):
                if session.dying:
                    continue
                session.upstream.write(chunk)
                await session.upstream.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            if not session.dying:
                session.upstream.close()

    async def _server_to_client(self, reader: asyncio.StreamReader, session: _Session) -> None:
        try:
            while True:
                head = await reader.readexactly(5)
                kind, length = head[:1], struct.unpack("!i", head[1:])[0]
                if not 4 <= length <= MAX_MESSAGE:
                    return
                body = await reader.readexactly(length - 4)
                if kind == b"E" and fatal_severity(body):
                    self.fatals += 1
                    session.dying = True
                session.client.write(head + body)
                await session.client.drain()
        except (OSError, asyncio.IncompleteReadError):
            return

    async def _swallow(self, reader: asyncio.StreamReader) -> None:
        with contextlib.suppress(OSError):
            while await reader.read(65536):
                pass
