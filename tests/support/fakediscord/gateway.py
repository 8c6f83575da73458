"""The fake's gateway websocket: HELLO, heartbeats, IDENTIFY and RESUME, READY and GUILD_CREATE
per shard, presence updates (op 3), op 4 handed to the voice side, Discord's send limit, and
the RECONNECT and INVALID_SESSION a test sends.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from typing import Any

import aiohttp
from aiohttp import web

from .. import discord_rules as rules
from .objects import Guild, PresenceSent
from .voice import VoiceSide

# Fields of GUILD_CREATE that Discord's guild object (GUILD_UPDATE's payload) does not carry.
GUILD_CREATE_ONLY = (
    "joined_at",
    "large",
    "unavailable",
    "member_count",
    "voice_states",
    "members",
    "channels",
    "threads",
    "presences",
    "stage_instances",
    "guild_scheduled_events",
    "soundboard_sounds",
)


class Gateway(VoiceSide):
    """The gateway connection and what arrives on it."""

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self.outage.watch(request.transport)
        self.sockets.append(ws)
        await ws.send_str(json.dumps({"op": 10, "d": {"heartbeat_interval": 45000}}))
        sent: deque[float] = deque()
        try:
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.TEXT:
                    continue
                if self._over_gateway_limit(sent):
                    self.gateway_rate_limited += 1
                    await ws.close(code=4008, message=b"Rate limited.")
                    break
                data = json.loads(msg.data)
                op = data.get("op")
                if op == 1:
                    await ws.send_str(json.dumps({"op": 11}))
                elif op == 2:
                    self.identify_count += 1
                    self.token = data["d"]["token"]
                    self.intents = int(data["d"].get("intents") or 0)
                    shard = data["d"].get("shard") or [0, 1]
                    self._shard_of[id(ws)] = int(shard[0])
                    self._shard_count_of[id(ws)] = max(1, int(shard[1]))
                    await self._ready(ws, shard)
                elif op == 3:
                    await self._presence_op(ws, data.get("d"))
                elif op == 4:
                    await self._voice_op(ws, data.get("d"))
                elif op == 6:
                    resumed = self.gateway_sessions.get(
                        str((data.get("d") or {}).get("session_id"))
                    )
                    if resumed is None:  # Discord: op 9, not resumable; the client identifies
                        await ws.send_str(json.dumps({"op": 9, "d": False}))
                        continue
                    self._shard_of[id(ws)], self._shard_count_of[id(ws)] = resumed
                    self.resume_count += 1
                    self.sequence += 1
                    await ws.send_str(
                        json.dumps({"op": 0, "t": "RESUMED", "s": self.sequence, "d": {}})
                    )
                    self.identified.set()
                    self._changed.set()
        finally:
            if ws in self.sockets:
                self.sockets.remove(ws)
            self._shard_of.pop(id(ws), None)
            self._shard_count_of.pop(id(ws), None)
        return ws

    def _over_gateway_limit(self, sent: deque[float]) -> bool:
        """One more send on a connection: over Discord's limit (120 per 60 s, heartbeats
        included)?"""
        count, per = self.gateway_limit
        now = time.monotonic()
        while sent and sent[0] <= now - per:
            sent.popleft()
        sent.append(now)
        return len(sent) > count

    async def _presence_op(self, ws: web.WebSocketResponse, data: Any) -> None:
        """The bot's op 3: recorded when valid; a malformed one closes the gateway with 4002
        (Discord's "Decode error"), as Discord does."""
        problem = rules.check_presence_update(data)
        if problem is not None:
            self.presence_rejections.append(problem)
            if self.strict:
                await ws.close(code=4002)
            return
        shard = self._shard_of.get(id(ws), 0)
        self.presences.append(PresenceSent(shard, time.monotonic(), data))
        self._changed.set()

    async def _ready(self, ws: web.WebSocketResponse, shard: list[int]) -> None:
        """READY and GUILD_CREATE for the guilds of the identifying shard (Discord's formula
        ``(guild_id >> 22) % shard_count``), so each process of a fleet sees its own guilds
        (later, in the background, while ``ready_held`` is held)."""
        if self.ready_held is not None and not self.ready_held.is_set():
            task = asyncio.create_task(self._ready_after(self.ready_held, ws, shard))
            self._background.add(task)
            task.add_done_callback(self._background.discard)
            return
        guilds = [g for g in self.guilds if (g.id >> 22) % shard[1] == shard[0]]
        session = f"fake-gateway-{shard[0]}-of-{shard[1]}-{self.identify_count}"
        self.gateway_sessions[session] = (int(shard[0]), max(1, int(shard[1])))
        self.sequence += 1
        ready = {
            "v": 10,
            "user": self.user(self.bot_id, "OnAir", bot=True),
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session,
            "resume_gateway_url": f"wss://gateway.discord.gg:{self.port}",
            "application": {"id": str(self.app_id), "flags": 0},
            "shard": shard,
        }
        await ws.send_str(json.dumps({"op": 0, "t": "READY", "s": self.sequence, "d": ready}))
        await self._guild_creates(ws, guilds)

    async def _ready_after(
        self, held: asyncio.Event, ws: web.WebSocketResponse, shard: list[int]
    ) -> None:
        await held.wait()
        if not ws.closed:
            await self._ready(ws, shard)

    async def _guild_creates(self, ws: web.WebSocketResponse, guilds: list[Guild]) -> None:
        for guild in guilds:
            self.sequence += 1
            await ws.send_str(
                json.dumps(
                    {
                        "op": 0,
                        "t": "GUILD_CREATE",
                        "s": self.sequence,
                        "d": self._guild_payload(guild),
                    }
                )
            )
        self.identified.set()
        self._changed.set()

    async def reconnect(self) -> None:
        """op 7: the client must reconnect and resume."""
        self.identified.clear()
        for ws in list(self.sockets):
            await ws.send_str(json.dumps({"op": 7, "d": None}))

    async def invalid_session(self, resumable: bool = False) -> None:
        self.identified.clear()
        for ws in list(self.sockets):
            await ws.send_str(json.dumps({"op": 9, "d": resumable}))

    async def update_guild(self, guild: Guild) -> None:
        """GUILD_UPDATE after a server setting changed (e.g. ``preferred_locale``), sent to the
        guild's shard: the guild object without what only GUILD_CREATE carries."""
        data = self._guild_payload(guild)
        for only_on_create in GUILD_CREATE_ONLY:
            data.pop(only_on_create, None)
        await self.dispatch("GUILD_UPDATE", data, guild_id=guild.id)

    async def remove_guild(self, guild: Guild) -> None:
        await self.dispatch("GUILD_DELETE", {"id": str(guild.id)})
