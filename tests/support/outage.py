"""An outage as a client sees one: Discord stops answering, and its connections hang rather than
refuse. Nothing more is read from the open websockets (a heartbeat, an op 4, a close frame get no
answer, so a close waits for its reply), and REST requests wait for an answer that does not
come. ``end`` lets everything go on (a test's clean-up)."""

from __future__ import annotations

import asyncio


class Outage:
    """Shared by the gateway, the REST routes and the voice server of one fake Discord."""

    def __init__(self) -> None:
        self.on = False
        self._over = asyncio.Event()
        self._transports: set[asyncio.BaseTransport] = set()

    def watch(self, transport: asyncio.BaseTransport | None) -> None:
        """A websocket's connection: paused now if the outage has begun, else when it does."""
        if transport is None:
            return
        self._transports = {t for t in self._transports if not t.is_closing()}
        self._transports.add(transport)
        if self.on and isinstance(transport, asyncio.ReadTransport):
            transport.pause_reading()

    def begin(self) -> None:
        self.on = True
        self._over.clear()
        for transport in self._transports:
            if isinstance(transport, asyncio.ReadTransport) and not transport.is_closing():
                transport.pause_reading()

    def end(self) -> None:
        self.on = False
        self._over.set()
        for transport in self._transports:
            if isinstance(transport, asyncio.ReadTransport) and not transport.is_closing():
                transport.resume_reading()

    async def hang(self) -> None:
        """A request arriving during the outage waits here until it ends."""
        if self.on:
            await self._over.wait()
