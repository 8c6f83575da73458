"""A wire-level fake Discord (REST + gateway) on loopback, for the real discord.py client.

discord.py runs untouched: a custom resolver sends discord.com, gateway.discord.gg and
cdn.discordapp.com to this server (every other name is refused), and TLS is real, with a
throw-away CA from trustme. Every request is recorded; unknown routes answer 404 and are recorded
too. The fake can inject slash commands, autocomplete and component clicks, emulate rate limits
(per-route buckets, a global limit, 5 messages per 5 s per channel), inject 403/404/5xx answers,
and send RECONNECT or INVALID_SESSION on the gateway.

It is as strict as Discord: every request body is checked against Discord's documented shapes and
limits (tests/support/discord_rules.py) and a violation is answered as Discord answers it (400,
code 50035 with the errors by field path; 50006 for an empty message; 40060 for a second answer
to one interaction), so discord.py raises ``HTTPException`` and the bot's own error paths run.

When ``ONAIR_FAKE_DISCORD_RECORD`` names a file, every recorded request is also appended to it as
one JSON line in the input shape of the discord-look tool (method, path, json, files, at, command,
user, response_id).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import json
import math
import os
import re
import secrets
import socket
import ssl
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
import trustme
from aiohttp import BodyPartReader, web
from aiohttp.abc import AbstractResolver, ResolveResult

from . import discord_rules as rules
from .fakevoice import FakeVoiceServer

DISCORD_EPOCH_MS = 1420070400000
HOSTS = ("discord.com", "gateway.discord.gg", "cdn.discordapp.com")
JSON = "application/json"
RECORD_ENV = "ONAIR_FAKE_DISCORD_RECORD"
_counter = itertools.count(1)

# Permission bits the voice side checks (Discord's values).
VIEW_CHANNEL = 1 << 10
CONNECT = 1 << 20
SPEAK = 1 << 21
MUTE_MEMBERS = 1 << 22
REQUEST_TO_SPEAK = 1 << 32
MANAGE_CHANNELS = 1 << 4
MOVE_MEMBERS = 1 << 24
STAGE_MODERATOR = MANAGE_CHANNELS | MUTE_MEMBERS | MOVE_MEMBERS  # Discord's three, in the stage
SET_VOICE_CHANNEL_STATUS = rules.SET_VOICE_CHANNEL_STATUS
MANAGE_EVENTS = rules.MANAGE_EVENTS
GUILD_VOICE_STATES = 1 << 7  # the gateway intent
EVERYONE_PERMISSIONS = 1071698660929  # @everyone's: view, connect, speak, request to speak; no mute


def snowflake() -> int:
    """A realistic id: its timestamp part is now."""
    return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) | (next(_counter) % 4096)


def _json(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # Exactly application/json: discord.py treats "; charset=utf-8" as text.
    return web.Response(
        body=json.dumps(body).encode(),
        status=status,
        headers={"Content-Type": JSON, **(headers or {})},
    )


def _form_error(field_name: str, code: str, message: str) -> web.Response:
    """Discord's 400 Invalid Form Body (50035) for one field."""
    errors = rules.FormErrors()
    errors.add((field_name,), code, message)
    return _json(errors.body(), 400)


def _too_many(
    retry: float, *, is_global: bool, bucket: str | None = None, limit: int = 1
) -> web.Response:
    """Discord's 429: the body discord.py reads, the headers Discord documents for each scope."""
    headers = {
        "Via": "1.1 google",  # discord.py treats a 429 without Via as a Cloudflare ban
        "Retry-After": str(math.ceil(retry)),
        "X-RateLimit-Scope": "global" if is_global else "user",
    }
    if is_global:
        headers["X-RateLimit-Global"] = "true"
    if bucket is not None:
        headers |= {
            "X-RateLimit-Bucket": bucket,
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset-After": f"{retry:.3f}",
        }
    body = {"message": "You are being rate limited.", "retry_after": retry, "global": is_global}
    return _json(body, 429, headers)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any = None
    files: list[tuple[str, str, bytes]] = field(default_factory=list)
    status: int = 0
    at: float = 0.0
    wall: float = 0.0  # time.time() of the request, for the JSONL recording
    response: Any = None  # the JSON the fake answered

    @property
    def filenames(self) -> list[str]:
        return [name for _, name, _ in self.files]

    @property
    def route(self) -> str:
        return self.path.removeprefix("/api/v10")


@dataclass
class Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    code: int
    message: str
    times: int | None


@dataclass
class Throttle:
    """The next `times` requests matching answer 429, as Discord's limiter does."""

    method: str
    pattern: re.Pattern[str]
    times: int
    retry_after: float
    is_global: bool


class FakeResolver(AbstractResolver):
    """Resolves Discord's hosts to the fake; refuses every other name."""

    def __init__(self, port: int) -> None:
        self.port = port

    async def resolve(
        self, host: str, port: int = 0, family: int = socket.AF_INET
    ) -> list[ResolveResult]:
        if host not in HOSTS:
            raise OSError(f"fake resolver: {host} is not reachable in tests")
        return [
            {
                "hostname": host,
                "host": "127.0.0.1",
                "port": self.port,
                "family": socket.AF_INET,
                "proto": 0,
                "flags": socket.AI_NUMERICHOST,
            }
        ]

    async def close(self) -> None:
        return None


@dataclass
class Interaction:
    """What the fake remembers of an interaction it sent: its type and who invoked what."""

    kind: int
    user: str
    command: str = ""
    acknowledged: bool = False
    message_id: int | None = None  # the message a component interaction came from
    created: float = field(default_factory=time.monotonic)


@dataclass
class VoiceChannel:
    """A voice (type 2) or stage (type 13) channel; ``overwrites`` in Discord's shape."""

    id: int
    name: str
    stage: bool = False
    overwrites: list[dict[str, Any]] = field(default_factory=list)
    status: str | None = None  # a voice channel's status (the sidebar line under its name)
    topic: str | None = None  # a stage's open stage instance's topic (None: no instance)
    status_by: str = ""  # who set the status last: "bot" or "person" (tests)


@dataclass
class Guild:
    id: int
    name: str
    channels: list[int]
    roles: list[int] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)
    voice_channels: list[VoiceChannel] = field(default_factory=list)
    # user id → that user's voice state (Discord's payload without ``member``)
    voice_states: dict[int, dict[str, Any]] = field(default_factory=dict)
    member_names: dict[int, str] = field(default_factory=dict)  # members seen in voice
    # @everyone's permissions; a test may take some away
    everyone_permissions: int = EVERYONE_PERMISSIONS
    # Guild-wide permissions of the bot's own role (e.g. MANAGE_EVENTS), beyond @everyone's.
    bot_role_permissions: int = 0
    bot_role: int = 0  # its id, made with the guild
    # Scheduled events by id, in Discord's shape (what the GET routes answer).
    events: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Discord gives a preferred locale to every guild ("en-US" unless a Community server chose).
    preferred_locale: str = "en-US"


@dataclass(frozen=True, slots=True)
class PresenceSent:
    """One op 3 the bot sent, as Discord received it: on which shard's gateway and when."""

    shard: int
    at: float  # time.monotonic() when the fake received it
    data: dict[str, Any]

    @property
    def activity(self) -> dict[str, Any] | None:
        activities = self.data.get("activities") or []
        return activities[0] if activities else None


class FakeDiscord:
    def __init__(
        self, *, guild_count: int = 1, channels_per_guild: int = 2, strict: bool = True
    ) -> None:
        self.strict = strict  # only the tests of the rules themselves turn this off
        # Discord's gateway limit: 120 sends per 60 s per connection, else close 4008.
        self.gateway_limit = (120, 60.0)
        self.gateway_rate_limited = 0  # connections closed with 4008
        self.max_concurrency = 1  # shards that may IDENTIFY at once (/gateway/bot)
        # Discord answers 10062 Unknown interaction to a first response later than 3 s. Off
        # (None) unless a test turns it on: most tests do not measure how fast the bot answers,
        # and a loaded test machine must not fail them for it.
        self.callback_window: float | None = None
        self.interactions: dict[str, Interaction] = {}
        # What members are called and which roles they hold, by user id (default "listener",
        # none): interactions carry them.
        self.user_names: dict[int, str] = {}
        # user id -> the language of that user's Discord client (an interaction's ``locale``)
        self.user_locales: dict[int, str] = {}
        self.member_roles: dict[int, list[int]] = {}
        self.ca = trustme.CA()
        self.bot_id = snowflake()
        self.app_id = self.bot_id
        self.owner_id = snowflake()
        self.token: str | None = None
        self.expected_token = "fake-token"
        self.requests: list[Recorded] = []
        self.guilds: list[Guild] = []
        for index in range(guild_count):
            guild = Guild(
                snowflake(), f"Guild {index}", [snowflake() for _ in range(channels_per_guild)]
            )
            guild.roles = [guild.id, snowflake(), snowflake()]  # @everyone, Listeners, Staff
            guild.bot_role = snowflake()
            guild.threads = [snowflake()]
            self.guilds.append(guild)
        self.messages: dict[int, dict[str, Any]] = {}
        self.channel_messages: dict[int, list[int]] = defaultdict(list)
        self.nonces: dict[tuple[int, str], tuple[float, int]] = {}  # (author, nonce) -> first
        # Discord: "checked for uniqueness in the past few minutes"; 0 = a nonce seen long ago.
        self.nonce_window = 300.0
        # Awaited before a REST request is answered: a test can hold requests (a slow Discord).
        self.hold: Callable[[Recorded], Awaitable[None]] | None = None
        self.failures: list[Failure] = []
        self.rate_limits = False
        self.global_limit = 50
        self.channel_limit = (5, 5.0)
        self.ratelimited: list[Recorded] = []
        self.throttles: list[Throttle] = []
        self._global_window: deque[float] = deque()
        self._channel_windows: dict[int, deque[float]] = defaultdict(deque)
        self.sockets: list[web.WebSocketResponse] = []
        self.identified = asyncio.Event()
        # Set to an unset Event to hold READY and the GUILD_CREATEs until it is set (a slow
        # gateway): the bot's REST requests and station polls go on meanwhile (start-up races).
        self.ready_held: asyncio.Event | None = None
        self._background: set[asyncio.Task[None]] = set()
        self.identify_count = 0
        self.resume_count = 0
        self.session_id = "fake-session"
        self.sequence = 0
        self.commands: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._changed = asyncio.Event()
        self._originals: dict[str, int] = {}
        self.connections: set[int] = set()  # distinct client connections seen (keep-alive check)
        # The voice server (started with the first op 4) and what the fake refused on the gateway.
        self.voice = FakeVoiceServer(self.ca)
        self.voice_rejections: list[str] = []
        self.intents = 0  # of the last IDENTIFY: voice states reach only GUILD_VOICE_STATES
        # Awaited with each op 4 before Discord answers it: a test acts mid-connect.
        self.before_voice_op: Callable[[Any], Awaitable[None]] | None = None
        # Every valid op 3 (presence) in arrival order, and what the fake refused (then 4002).
        self.presences: list[PresenceSent] = []
        self.presence_rejections: list[str] = []
        self._shard_of: dict[int, int] = {}  # id(gateway websocket) → its IDENTIFY's shard
        self._shard_count_of: dict[int, int] = {}  # ... and the shard count it gave

    # Lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/", self._gateway)
        app.router.add_route("*", "/{tail:.*}", self._rest)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert(*HOSTS).configure_cert(context)
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        for task in list(self._background):
            task.cancel()
        if self.voice.running:
            await self.voice.stop()
        for ws in list(self.sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def connector(self) -> aiohttp.TCPConnector:
        """A new connector for one discord.py client: fake DNS, trusted fake CA, and no limit on
        connections, as discord.py's own (aiohttp's default of 100 would leave the 100th voice
        websocket waiting forever: the gateway holds one)."""
        context = ssl.create_default_context()
        self.ca.configure_trust(context)
        return aiohttp.TCPConnector(resolver=FakeResolver(self.port), ssl=context, limit=0)

    # Recording helpers -----------------------------------------------------------------

    def sent(self, method: str | None = None, pattern: str | None = None) -> list[Recorded]:
        regex = re.compile(pattern) if pattern else None
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (regex is None or regex.search(r.route))
        ]

    async def wait_for(self, predicate: Callable[[], Any], within: float = 10.0) -> Any:
        deadline = time.monotonic() + within
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"fake Discord: condition not met within {within}s")
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), timeout=min(remaining, 0.25))

    async def wait_request(
        self, method: str, pattern: str, *, count: int = 1, within: float = 10.0
    ) -> list[Recorded]:
        found: list[Recorded] = await self.wait_for(
            lambda: (lambda hits: hits if len(hits) >= count else None)(self.sent(method, pattern)),
            within,
        )
        return found

    def fail(
        self,
        method: str,
        pattern: str,
        status: int,
        *,
        code: int = 0,
        message: str = "",
        times: int | None = 1,
    ) -> None:
        self.failures.append(Failure(method, re.compile(pattern), status, code, message, times))

    def throttle(
        self, method: str, pattern: str, *, times: int, retry_after: float, is_global: bool
    ) -> None:
        """Answer the next `times` matching requests with Discord's 429 (route or global)."""
        self.throttles.append(Throttle(method, re.compile(pattern), times, retry_after, is_global))

    # Objects ---------------------------------------------------------------------------

    def user(self, user_id: int, name: str = "listener", bot: bool = False) -> dict[str, Any]:
        return {
            "id": str(user_id),
            "username": name,
            "discriminator": "0",
            "global_name": name,
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
        }

    def _channel(self, guild: Guild, channel_id: int, position: int) -> dict[str, Any]:
        return {
            "id": str(channel_id),
            "type": 0,
            "guild_id": str(guild.id),
            "name": f"channel-{position}",
            "position": position,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "rate_limit_per_user": 0,
            "topic": None,
            "last_message_id": None,
        }

    def _thread(self, guild: Guild, thread_id: int) -> dict[str, Any]:
        return {
            "id": str(thread_id),
            "type": 11,
            "guild_id": str(guild.id),
            "parent_id": str(guild.channels[0]),
            "owner_id": str(self.owner_id),
            "name": "now-playing-thread",
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "message_count": 0,
            "member_count": 1,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": "2026-01-01T00:00:00+00:00",
                "locked": False,
            },
            "flags": 0,
        }

    def _guild_payload(self, guild: Guild) -> dict[str, Any]:
        return {
            "id": str(guild.id),
            "name": guild.name,
            "icon": None,
            "owner_id": str(self.owner_id),
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "features": [],
            "mfa_level": 0,
            "system_channel_flags": 0,
            "premium_tier": 0,
            "nsfw_level": 0,
            "preferred_locale": guild.preferred_locale,
            "unavailable": False,
            "member_count": 3,
            "large": False,
            "joined_at": "2026-01-01T00:00:00+00:00",
            "roles": [self._role(guild, role_id) for role_id in guild.roles]
            + [
                {
                    "id": str(guild.bot_role),
                    "name": "OnAir",
                    "permissions": str(guild.bot_role_permissions),
                    "position": len(guild.roles),
                    "color": 0,
                    "hoist": False,
                    "managed": True,
                    "mentionable": False,
                    "flags": 0,
                }
            ],
            "emojis": [],
            "stickers": [],
            "channels": [self._channel(guild, cid, i) for i, cid in enumerate(guild.channels)]
            + [self._voice_channel(guild, vc) for vc in guild.voice_channels],
            "threads": [self._thread(guild, tid) for tid in guild.threads],
            "members": [self._member(guild, self.bot_id)]
            + [
                self._member(guild, uid)
                for uid in guild.voice_states
                if uid != self.bot_id and uid in guild.member_names and self._voice_intent
            ],
            "voice_states": [
                {k: v for k, v in state.items() if k != "guild_id"}
                for state in guild.voice_states.values()
                if self._voice_intent
            ],
            "presences": [],
            "stage_instances": [
                self._stage_instance(guild, vc)
                for vc in guild.voice_channels
                if vc.stage and vc.topic is not None
            ],
            "guild_scheduled_events": list(guild.events.values()),
        }

    def message(
        self,
        channel_id: int,
        body: dict[str, Any],
        *,
        message_id: int | None = None,
        webhook: bool = False,
        flags: int = 0,
    ) -> dict[str, Any]:
        mid = message_id or snowflake()
        data = {
            "id": str(mid),
            "channel_id": str(channel_id),
            "author": self.user(self.bot_id, "OnAir", bot=True),
            "content": body.get("content") or "",
            "timestamp": "2026-01-01T00:00:00+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [
                {
                    "id": str(snowflake()),
                    "filename": a.get("filename", "file"),
                    "size": 1,
                    "url": f"https://cdn.discordapp.com/attachments/{channel_id}/{mid}/file",
                    "proxy_url": "https://cdn.discordapp.com/x",
                }
                for a in body.get("attachments") or []
            ],
            "embeds": body.get("embeds") or [],
            "components": body.get("components") or [],
            "pinned": False,
            "type": 0,
            "flags": flags | int(body.get("flags") or 0),
        }
        if webhook:
            data["webhook_id"] = str(self.app_id)
        self.messages[mid] = data
        self.channel_messages[channel_id].append(mid)
        return data

    # Gateway ---------------------------------------------------------------------------

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        if event == "VOICE_STATE_UPDATE" and not self.intents & GUILD_VOICE_STATES:
            return  # Discord sends none without the intent (then voice connects time out)
        self.sequence += 1
        payload = {"op": 0, "t": event, "s": self.sequence, "d": data}
        guild_id = data.get("guild_id") if isinstance(data, dict) else None
        for ws in list(self.sockets):
            if ws.closed:
                continue
            shard = self._shard_of.get(id(ws))
            count = self._shard_count_of.get(id(ws), 1)
            if (
                guild_id is not None
                and shard is not None
                and (int(guild_id) >> 22) % count != shard
            ):
                continue  # Discord sends a guild's events to the shard the formula names
            await ws.send_str(json.dumps(payload))

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
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
        self.sequence += 1
        ready = {
            "v": 10,
            "user": self.user(self.bot_id, "OnAir", bot=True),
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": self.session_id,
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

    async def remove_guild(self, guild: Guild) -> None:
        await self.dispatch("GUILD_DELETE", {"id": str(guild.id)})

    # Voice ------------------------------------------------------------------------------

    def add_voice_channel(
        self,
        guild: Guild,
        name: str = "Radio",
        *,
        stage: bool = False,
        bot_allow: int = 0,
        bot_deny: int = 0,
    ) -> int:
        """A voice (or stage) channel in ``guild``'s GUILD_CREATE (call before the bot starts).

        ``bot_allow``/``bot_deny`` become a member overwrite for the bot (e.g. ``bot_deny=CONNECT``
        or ``SPEAK``, ``bot_allow=MUTE_MEMBERS`` on a stage), which discord.py folds into
        ``channel.permissions_for(guild.me)`` and the fake enforces on op 4 and the stage route.
        """
        channel = VoiceChannel(snowflake(), name, stage)
        if bot_allow or bot_deny:
            channel.overwrites.append(
                {"id": str(self.bot_id), "type": 1, "allow": str(bot_allow), "deny": str(bot_deny)}
            )
        guild.voice_channels.append(channel)
        return channel.id

    @property
    def bot_voice(self) -> dict[int, int]:
        """guild id → the voice channel the bot is in (guilds where it is in none are absent)."""
        return {
            g.id: int(g.voice_states[self.bot_id]["channel_id"])
            for g in self.guilds
            if self.bot_id in g.voice_states
        }

    def bot_voice_state(self, guild: Guild) -> dict[str, Any] | None:
        """The bot's voice state in ``guild`` as Discord keeps it (suppress, request to speak)."""
        state = guild.voice_states.get(self.bot_id)
        return dict(state) if state is not None else None

    def bot_permissions(self, guild: Guild, channel_id: int) -> int:
        """The bot's permissions in a voice channel, computed as Discord does (base, overwrites)."""
        base = guild.everyone_permissions | guild.bot_role_permissions  # @everyone, own role
        channel = self._find_voice_channel(guild, channel_id)
        for overwrite in channel.overwrites if channel else []:
            if overwrite["id"] in (str(guild.id), str(self.bot_id)):
                base = (base & ~int(overwrite["deny"])) | int(overwrite["allow"])
        return base

    async def set_member_voice(
        self, guild: Guild, user_id: int, channel_id: int | None, *, name: str = "listener"
    ) -> None:
        """Put a (non-bot) member into a voice channel, move them, or take them out (None).

        Before READY this only shapes GUILD_CREATE (``voice_states`` and the member); after READY
        it dispatches VOICE_STATE_UPDATE with the member, as Discord does.
        """
        if user_id == self.bot_id:
            raise AssertionError("the bot joins voice itself (op 4)")
        if channel_id is None:
            state = guild.voice_states.pop(user_id, None)
            if state is None:
                return
            state = {**state, "channel_id": None}
        else:
            channel = self._find_voice_channel(guild, channel_id)
            if channel is None:
                raise AssertionError(f"{channel_id} is not a voice channel of {guild.name}")
            guild.member_names[user_id] = name
            state = self._voice_state(guild, user_id, channel, secrets.token_hex(16))
            guild.voice_states[user_id] = state
        await self.dispatch("VOICE_STATE_UPDATE", {**state, "member": self._member(guild, user_id)})

    async def disconnect_bot(self, guild: Guild) -> None:
        """A moderator disconnects the bot: VOICE_STATE_UPDATE (no channel), voice close 4014."""
        state = guild.voice_states.pop(self.bot_id, None)
        if state is None:
            raise AssertionError("the bot is not in voice")
        self.voice.forget(guild.id)
        await self.dispatch(
            "VOICE_STATE_UPDATE",
            {**state, "channel_id": None, "member": self._member(guild, self.bot_id)},
        )
        if self.voice.connected(guild.id):
            await self.voice.close(guild.id, 4014)

    async def move_bot(self, guild: Guild, channel_id: int) -> None:
        """A moderator moves the bot to another voice channel: VOICE_STATE_UPDATE (new channel)
        and VOICE_SERVER_UPDATE with a new token, as Discord sends them; the client reconnects."""
        state = guild.voice_states.get(self.bot_id)
        channel = self._find_voice_channel(guild, channel_id)
        if state is None or channel is None:
            raise AssertionError("the bot is not in voice, or that is not a voice channel")
        await self._place_bot(guild, channel, state)

    async def _place_bot(self, guild: Guild, channel: VoiceChannel, flags: dict[str, Any]) -> None:
        """The bot is in ``channel`` now (muted and deafened as ``flags`` say): its
        VOICE_STATE_UPDATE and a VOICE_SERVER_UPDATE with a new token, as Discord sends them."""
        state = self._voice_state(
            guild,
            self.bot_id,
            channel,
            self.session_id,
            self_mute=flags["self_mute"],
            self_deaf=flags["self_deaf"],
        )
        guild.voice_states[self.bot_id] = state
        token = self.voice.expect(guild.id, self.bot_id, self.session_id, channel.id)
        await self.dispatch(
            "VOICE_STATE_UPDATE", {**state, "member": self._member(guild, self.bot_id)}
        )
        await self.dispatch(
            "VOICE_SERVER_UPDATE",
            {"token": token, "guild_id": str(guild.id), "endpoint": self.voice.endpoint},
        )

    @property
    def _voice_intent(self) -> bool:
        return bool(self.intents & GUILD_VOICE_STATES)

    def _find_voice_channel(self, guild: Guild, channel_id: int) -> VoiceChannel | None:
        return next((vc for vc in guild.voice_channels if vc.id == channel_id), None)

    def _voice_channel(self, guild: Guild, channel: VoiceChannel) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": str(channel.id),
            "type": 13 if channel.stage else 2,
            "guild_id": str(guild.id),
            "name": channel.name,
            "position": len(guild.channels) + guild.voice_channels.index(channel),
            "permission_overwrites": channel.overwrites,
            "nsfw": False,
            "parent_id": None,
            "bitrate": 64000,
            "user_limit": 0,
            "rtc_region": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
        }
        if channel.stage:
            data["topic"] = None
        else:
            data["video_quality_mode"] = 1
            data["status"] = channel.status  # Discord sends it in GUILD_CREATE's channels
        return data

    def _member(self, guild: Guild, user_id: int) -> dict[str, Any]:
        bot = user_id == self.bot_id
        return {
            "user": self.user(
                user_id, "OnAir" if bot else guild.member_names.get(user_id, ""), bot
            ),
            "roles": [str(guild.bot_role)] if bot else [],
            "joined_at": "2026-01-01T00:00:00+00:00",
            "deaf": False,
            "mute": False,
            "flags": 0,
        }

    def _voice_state(
        self,
        guild: Guild,
        user_id: int,
        channel: VoiceChannel,
        session_id: str,
        *,
        self_mute: bool = False,
        self_deaf: bool = False,
    ) -> dict[str, Any]:
        return {
            "guild_id": str(guild.id),
            "channel_id": str(channel.id),
            "user_id": str(user_id),
            "session_id": session_id,
            "deaf": False,
            "mute": False,
            "self_deaf": self_deaf,
            "self_mute": self_mute,
            "self_video": False,
            "suppress": channel.stage,  # everyone joins a stage as audience
            "request_to_speak_timestamp": None,
        }

    async def _voice_op(self, ws: web.WebSocketResponse, data: Any) -> None:
        """The bot's op 4: join, move or leave (channel_id null) a voice channel."""
        if self.before_voice_op is not None:
            await self.before_voice_op(data)
        problem = rules.check_gateway_voice_state(data)
        if problem is not None:
            self.voice_rejections.append(problem)
            if self.strict:
                await ws.close(code=4002)  # Discord's "Decode error" for an invalid payload
            return
        guild = next((g for g in self.guilds if g.id == int(data["guild_id"])), None)
        if guild is None:
            self.voice_rejections.append("op 4 for a guild the bot is not in")
            return
        if data["channel_id"] is None:
            # Answered even when the bot was in no channel: discord.py waits for this event.
            state = guild.voice_states.pop(self.bot_id, None)
            self.voice.forget(guild.id)
            left = {
                **(state or {"guild_id": str(guild.id), "user_id": str(self.bot_id)}),
                "channel_id": None,
                "session_id": self.session_id,
                "deaf": False,
                "mute": False,
                "self_deaf": data["self_deaf"],
                "self_mute": data["self_mute"],
                "self_video": False,
                "suppress": False,
                "request_to_speak_timestamp": None,
            }
            await self.dispatch(
                "VOICE_STATE_UPDATE", {**left, "member": self._member(guild, self.bot_id)}
            )
            self._changed.set()
            return
        channel = self._find_voice_channel(guild, int(data["channel_id"]))
        if channel is None:
            self.voice_rejections.append("op 4 into a channel that is not a voice channel")
            return
        allowed = self.bot_permissions(guild, channel.id)
        if allowed & (VIEW_CHANNEL | CONNECT) != VIEW_CHANNEL | CONNECT:
            # Discord ignores a join the bot may not make: no event, the client times out.
            self.voice_rejections.append("op 4 into a channel without Connect")
            return
        if not self.voice.running:
            await self.voice.start()
        previous = guild.voice_states.get(self.bot_id)
        moved = previous is not None and previous["channel_id"] != str(channel.id)
        await self._place_bot(guild, channel, data)
        if moved and self.voice.connected(guild.id):
            # A move ends the old voice connection with 4014; discord.py then reconnects.
            await self.voice.close(guild.id, 4014)
        self._changed.set()

    async def _edit_my_voice_state(self, guild_id: int, body: dict[str, Any]) -> web.Response:
        """Stage: unsuppress (needs Mute Members) or request to speak (needs Request to Speak)."""
        guild = next((g for g in self.guilds if g.id == guild_id), None)
        if guild is None:
            return _json({"message": "Unknown Guild", "code": 10004}, 404)
        state = guild.voice_states.get(self.bot_id)
        channel_id = body.get("channel_id")
        if state is None or (channel_id is not None and str(channel_id) != state["channel_id"]):
            found = rules.unknown_voice_state()
            return _json(found.body, found.status)
        channel = self._find_voice_channel(guild, int(state["channel_id"]))
        assert channel is not None
        if not channel.stage:
            found = rules.invalid_channel_type()
            return _json(found.body, found.status)
        allowed = self.bot_permissions(guild, channel.id)
        stamp = body.get("request_to_speak_timestamp")
        if (body.get("suppress") is False and not allowed & MUTE_MEMBERS) or (
            stamp is not None and not allowed & REQUEST_TO_SPEAK
        ):
            found = rules.missing_permissions()
            return _json(found.body, found.status)
        if "suppress" in body and body["suppress"] is not None:
            state["suppress"] = body["suppress"]
        if "request_to_speak_timestamp" in body:
            state["request_to_speak_timestamp"] = stamp
        await self.dispatch(
            "VOICE_STATE_UPDATE", {**state, "member": self._member(guild, self.bot_id)}
        )
        return web.Response(status=204)

    # Interactions ----------------------------------------------------------------------

    def _interaction(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        guild: Guild | None,
        channel_id: int | None,
        user_id: int | None,
        permissions: int,
        message: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        guild = guild or self.guilds[0]
        channel_id = channel_id or guild.channels[0]
        user_id = user_id or self.owner_id
        iid = snowflake()
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.app_id),
            "type": kind,
            "token": f"itoken-{iid}",
            "version": 1,
            "guild_id": str(guild.id),
            "channel_id": str(channel_id),
            "channel": self._channel(guild, channel_id, 0),
            "member": {
                "user": self.user(user_id, self.user_names.get(user_id, "listener")),
                "roles": [str(r) for r in self.member_roles.get(user_id, ())],
                "permissions": str(permissions),
                "joined_at": "2026-01-01T00:00:00+00:00",
                "deaf": False,
                "mute": False,
                "flags": 0,
            },
            "data": data,
            "app_permissions": "1071698660929",
            "locale": self.user_locales.get(user_id, "en-US"),
            "guild_locale": guild.preferred_locale,
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(guild.id)},
            "context": 0,
            "attachment_size_limit": 8 * 1024 * 1024,
        }
        if message is not None:
            payload["message"] = message
        self.interactions[str(iid)] = Interaction(
            kind, "listener", message_id=int(message["id"]) if message is not None else None
        )
        return payload

    def pending_interaction(self, kind: int = 2, guild: Guild | None = None) -> str:
        """An interaction of ``kind`` the bot never sees: for posting callbacks by hand."""
        data = {"id": "0", "name": "test", "type": 1} if kind in (2, 4) else {"custom_id": "x"}
        payload = self._interaction(
            kind, data, guild=guild, channel_id=None, user_id=None, permissions=0
        )
        return str(payload["id"])

    def _command(self, name: str) -> dict[str, Any]:
        for command in self.commands:
            if command["name"] == name:
                return command
        raise AssertionError(
            f"command /{name} was not synced; synced: {[c['name'] for c in self.commands]}"
        )

    async def slash(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        sub: list[str] | None = None,
        guild: Guild | None = None,
        channel_id: int | None = None,
        user_id: int | None = None,
        permissions: int = 0x6FFFFFFFF,
        resolved: dict[str, Any] | None = None,
    ) -> str:
        """Inject a slash command; returns the interaction id."""
        command = self._command(name)
        built = [
            {"name": key, "type": _option_type(command, sub, key), "value": value}
            for key, value in (options or {}).items()
        ]
        for part in reversed(sub or []):
            built = [{"name": part, "type": 1, "options": built}]
        data: dict[str, Any] = {"id": command["id"], "name": name, "type": 1, "options": built}
        if resolved:
            data["resolved"] = resolved
        payload = self._interaction(
            2, data, guild=guild, channel_id=channel_id, user_id=user_id, permissions=permissions
        )
        words = [f"/{name}", *(sub or []), *(f"{k}:{v}" for k, v in (options or {}).items())]
        self.interactions[payload["id"]].command = " ".join(words)
        await self.dispatch("INTERACTION_CREATE", payload)
        return str(payload["id"])

    async def autocomplete(
        self,
        name: str,
        focused: str,
        value: str,
        others: dict[str, Any] | None = None,
        *,
        guild: Guild | None = None,
        user_id: int | None = None,
        sub: list[str] | None = None,
    ) -> str:
        command = self._command(name)
        options = [
            {"name": k, "type": _option_type(command, None, k), "value": v}
            for k, v in (others or {}).items()
        ]
        options.append({"name": focused, "type": 3, "value": value, "focused": True})
        for part in reversed(sub or []):
            options = [{"name": part, "type": 1, "options": options}]
        data = {"id": command["id"], "name": name, "type": 1, "options": options}
        payload = self._interaction(
            4, data, guild=guild, channel_id=None, user_id=user_id, permissions=0
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return str(payload["id"])

    async def click(
        self,
        message: dict[str, Any],
        custom_id: str,
        *,
        user_id: int | None = None,
        guild: Guild | None = None,
    ) -> str:
        data = {"custom_id": custom_id, "component_type": 2}
        return await self._component_used(message, data, user_id=user_id, guild=guild)

    async def _component_used(
        self,
        message: dict[str, Any],
        data: dict[str, Any],
        *,
        user_id: int | None,
        guild: Guild | None,
    ) -> str:
        """A component interaction (type 3) on ``message``, dispatched; its id."""
        payload = self._interaction(
            3,
            data,
            guild=guild,
            channel_id=int(message["channel_id"]),
            user_id=user_id,
            permissions=0,
            message=message,
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return str(payload["id"])

    async def choose(
        self,
        message: dict[str, Any],
        custom_id: str,
        values: list[str],
        *,
        user_id: int | None = None,
        guild: Guild | None = None,
    ) -> str:
        """Pick ``values`` in the message's string select ``custom_id``, as the client does: it
        offers only the menu's own options, between its min_values and max_values of them."""
        menus = [
            component
            for row in message.get("components") or []
            for component in row.get("components") or []
            if component.get("custom_id") == custom_id
        ]
        assert menus, f"no component {custom_id!r} in the message"
        menu = menus[0]
        assert menu.get("type") == rules.STRING_SELECT, f"{custom_id!r} is not a string select"
        offered = [option["value"] for option in menu.get("options") or []]
        assert all(value in offered for value in values), f"{values} not among {offered}"
        low, high = menu.get("min_values", 1), menu.get("max_values", 1)
        assert low <= len(values) <= high, f"{len(values)} values; the menu takes {low}-{high}"
        data = {"custom_id": custom_id, "component_type": rules.STRING_SELECT, "values": values}
        return await self._component_used(message, data, user_id=user_id, guild=guild)

    async def submit_modal(
        self,
        custom_id: str,
        values: dict[str, str],
        *,
        user_id: int | None = None,
        guild: Guild | None = None,
        permissions: int = 0x6FFFFFFFF,
    ) -> str:
        """Inject a MODAL_SUBMIT (type 5) with the given text input values."""
        rows = [
            {"type": 1, "components": [{"type": 4, "custom_id": key, "value": value}]}
            for key, value in values.items()
        ]
        payload = self._interaction(
            5,
            {"custom_id": custom_id, "components": rows},
            guild=guild,
            channel_id=None,
            user_id=user_id,
            permissions=permissions,
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return str(payload["id"])

    def _role(self, guild: Guild, role_id: int) -> dict[str, Any]:
        """A role object as Discord sends it: @everyone (not mentionable), "Listeners"
        (mentionable) and "Staff" (not mentionable)."""
        position = guild.roles.index(role_id)
        names = ["@everyone", "Listeners", "Staff"]
        return {
            "id": str(role_id),
            "name": names[position] if position < len(names) else f"Role {position}",
            "permissions": str(guild.everyone_permissions) if position == 0 else "0",
            "position": position,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": position == 1,
            "flags": 0,
        }

    def resolved_role(self, role_id: int, guild: Guild | None = None) -> dict[str, Any]:
        """``resolved`` of an interaction whose role option names ``role_id``."""
        guild = guild or self.guilds[0]
        return {"roles": {str(role_id): self._role(guild, role_id)}}

    def resolved_channel(self, channel_id: int, guild: Guild | None = None) -> dict[str, Any]:
        guild = guild or self.guilds[0]
        if channel_id in guild.threads:
            data = self._thread(guild, channel_id)
        else:
            data = self._channel(guild, channel_id, guild.channels.index(channel_id))
        data["permissions"] = "1071698660929"
        return {"channels": {str(channel_id): data}}

    async def response(self, interaction_id: str, within: float = 10.0) -> Recorded:
        hits = await self.wait_request("POST", rf"^/interactions/{interaction_id}/", within=within)
        return hits[0]

    async def final_message(self, interaction_id: str, within: float = 10.0) -> dict[str, Any]:
        """The message a command ended with: its callback message, or the follow-up to a defer."""
        callback = await self.response(interaction_id, within)
        body = callback.json or {}
        if body.get("type") == 4:
            return dict(body["data"])
        if body.get("type") == 5:
            hits = await self.wait_request(
                "POST", rf"^/webhooks/{self.app_id}/itoken-{interaction_id}", within=within
            )
            return dict(hits[0].json)
        return body

    def original(self, interaction_id: str) -> dict[str, Any]:
        """The stored message that answered an interaction (as Discord would return it)."""
        return self.messages[self._originals[str(interaction_id)]]

    # REST ------------------------------------------------------------------------------

    async def _record(self, request: web.Request) -> Recorded:
        record = Recorded(
            request.method,
            request.path,
            dict(request.query),
            dict(request.headers),
            at=time.monotonic(),
            wall=time.time(),
        )
        content_type = request.headers.get("Content-Type", "")
        if content_type.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:
                if not isinstance(part, BodyPartReader):
                    continue  # Discord's bodies are flat: no nested multipart
                if part.name == "payload_json":
                    record.json = json.loads(await part.text())
                else:
                    record.files.append(
                        (part.name or "", part.filename or "", bytes(await part.read()))
                    )
        elif request.can_read_body:
            raw = await request.read()
            if raw:
                try:
                    record.json = json.loads(raw)
                except ValueError:
                    record.json = raw.decode(errors="replace")
        return record

    def _limited(self, record: Recorded) -> web.Response | None:
        scripted = self._throttled(record)
        if scripted is not None or not self.rate_limits:
            return scripted
        if _INTERACTION_ROUTE.match(record.route):
            return None  # interaction endpoints are not bound to the global rate limit
        now = time.monotonic()
        window = self._global_window
        while window and now - window[0] >= 1.0:
            window.popleft()
        if len(window) >= self.global_limit:
            return _too_many(max(0.01, 1.0 - (now - window[0])), is_global=True)
        window.append(now)
        match = re.match(r"^/channels/(\d+)/messages$", record.route)
        if match and record.method == "POST":
            channel = int(match.group(1))
            limit, period = self.channel_limit
            slots = self._channel_windows[channel]
            while slots and now - slots[0] >= period:
                slots.popleft()
            if len(slots) >= limit:
                retry = max(0.01, period - (now - slots[0]))
                return _too_many(retry, is_global=False, bucket=f"msg-{channel}", limit=limit)
            slots.append(now)
        return None

    def _throttled(self, record: Recorded) -> web.Response | None:
        """A scripted 429 (see `throttle`): counted, so a test never depends on timing."""
        for throttle in self.throttles:
            if throttle.method == record.method and throttle.pattern.search(record.route):
                throttle.times -= 1
                if throttle.times <= 0:
                    self.throttles.remove(throttle)
                bucket = None if throttle.is_global else "scripted"
                return _too_many(throttle.retry_after, is_global=throttle.is_global, bucket=bucket)
        return None

    def _bucket_headers(self, record: Recorded) -> dict[str, str]:
        match = re.match(r"^/channels/(\d+)/messages$", record.route)
        if not (self.rate_limits and match and record.method == "POST"):
            return {}
        channel = int(match.group(1))
        limit, period = self.channel_limit
        slots = self._channel_windows[channel]
        remaining = max(0, limit - len(slots))
        reset_after = period - (time.monotonic() - slots[0]) if slots else period
        return {
            "X-RateLimit-Bucket": f"msg-{channel}",
            "X-RateLimit-Limit": str(limit),
            "X-RateLimit-Remaining": str(remaining),
            "X-RateLimit-Reset-After": f"{max(0.0, reset_after):.3f}",
        }

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        record = await self._record(request)
        self.requests.append(record)
        self.connections.add(id(request.transport))
        try:
            if self.hold is not None:
                await self.hold(record)
            response = self._limited(record)
            if response is not None:
                self.ratelimited.append(record)
            else:
                response = self._injected(record) or self._validate(record)
                if response is None:
                    response = await self._route(record)
                if 200 <= response.status < 300:
                    for key, value in self._bucket_headers(record).items():
                        response.headers[key] = value
            record.status = response.status
            if isinstance(response, web.Response) and response.body:
                with contextlib.suppress(ValueError, TypeError):
                    record.response = json.loads(bytes(response.body))  # type: ignore[arg-type]
            self._write_record(record)
            return response
        finally:
            self._changed.set()

    # Validation (every request, as strict as Discord) ---------------------------------------

    def _validate(self, r: Recorded) -> web.Response | None:
        """The first route rule that matches checks the body; None lets the request through."""
        if self.strict and sum(len(data) for _, _, data in r.files) > rules.UPLOAD_MAX:
            return _json(rules.too_large().body, 413)
        for method, pattern, check in self._rules():
            match = pattern.match(r.route)
            if match and r.method == method:
                found = check(r, match)
                if found is not None and self.strict:
                    return _json(found.body, found.status)
                return None
        return None

    def _rules(
        self,
    ) -> list[
        tuple[str, re.Pattern[str], Callable[[Recorded, re.Match[str]], rules.Rejection | None]]
    ]:
        return [
            ("PUT", _COMMANDS, self._check_commands),
            ("POST", _CALLBACK, self._check_callback),
            ("POST", _CHANNEL_MESSAGES, self._check_create),
            ("PATCH", _CHANNEL_MESSAGE, self._check_edit),
            ("POST", _WEBHOOK, self._check_follow_up),
            ("PATCH", _WEBHOOK_MESSAGE, self._check_edit),
            ("PATCH", _MY_VOICE_STATE, self._check_my_voice_state),
            ("PUT", _VOICE_STATUS, self._check_voice_status),
            ("POST", _STAGE_INSTANCES, self._check_stage_create),
            ("PATCH", _STAGE_INSTANCE, self._check_stage_edit),
            ("POST", _EVENTS, self._check_event),
            ("PATCH", _EVENT, self._check_event),
        ]

    def _check_voice_status(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        errors = rules.FormErrors()
        rules.check_voice_status(r.json, errors)
        return rules.rejection(errors)

    def _check_stage_create(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        errors = rules.FormErrors()
        rules.check_stage_instance(r.json, errors, create=True)
        return rules.rejection(errors)

    def _check_stage_edit(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        errors = rules.FormErrors()
        rules.check_stage_instance(r.json, errors, create=False)
        return rules.rejection(errors)

    def _check_event(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        """A scheduled event's body, judged against the stored event when it is a change (an
        unknown event is left to the route: 404)."""
        current = None
        if match.lastindex == 2:
            guild = next((g for g in self.guilds if g.id == int(match.group(1))), None)
            current = guild.events.get(int(match.group(2))) if guild is not None else None
            if current is None:
                return None
            if current.get("status") in rules.FINISHED_STATUSES:
                return rules.finished_event()
        errors = rules.FormErrors()
        rules.check_scheduled_event(r.json, errors, current=current, now=datetime.now(UTC))
        return rules.rejection(errors)

    def _check_commands(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        errors = rules.FormErrors()
        rules.check_commands(r.json, errors)
        return rules.rejection(errors)

    def _check_callback(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        interaction = self.interactions.get(match.group(1))
        if interaction is None:
            return rules.unknown_interaction()
        if interaction.acknowledged:
            return rules.already_acknowledged()
        late = time.monotonic() - interaction.created
        if self.callback_window is not None and late > self.callback_window:
            return rules.unknown_interaction()
        found = rules.check_callback(
            r.json, interaction.kind, rules.FormErrors(), uploads=r.filenames
        )
        if found is None or not self.strict:
            interaction.acknowledged = True
        return found

    def _check_create(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        errors = rules.FormErrors()
        rules.check_message(r.json, errors, uploads=r.filenames)
        if errors:
            return rules.rejection(errors)
        if rules.is_empty(r.json or {}, r.filenames):
            return rules.empty_message()
        return None

    def _check_my_voice_state(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        errors = rules.FormErrors()
        rules.check_my_voice_state(r.json, errors)
        return rules.rejection(errors)

    def _check_follow_up(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        token = match.group(2)
        interaction = self.interactions.get(token.removeprefix("itoken-"))
        if token.startswith("itoken-") and (interaction is None or not interaction.acknowledged):
            return rules.unknown_webhook()
        return self._check_create(r, match)

    def _check_edit(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        body = r.json or {}
        current = self._target(r, match)
        if current is not None and current["author"]["id"] != str(self.bot_id):
            return rules.not_author()
        uploads = list(r.filenames)
        if current is not None and "attachments" not in body:
            uploads += [a.get("filename", "") for a in current.get("attachments") or []]
        errors = rules.FormErrors()
        rules.check_message(body, errors, uploads=uploads)
        if errors:
            return rules.rejection(errors)
        if current is not None and isinstance(body, dict):
            after = {**current, **{k: v for k, v in body.items() if v is not None}}
            if "attachments" not in body:
                after["attachments"] = current.get("attachments")
            if rules.is_empty(after, r.filenames):
                return rules.empty_message()
        return None

    def _target(self, r: Recorded, match: re.Match[str]) -> dict[str, Any] | None:
        """The stored message an edit targets (None when unknown: the route answers 404)."""
        message = match.group(match.lastindex or 0)
        if message == "@original":
            token = match.group(2)
            mid = self._originals.get(token.removeprefix("itoken-"))
        else:
            mid = int(message)
        return self.messages.get(mid) if mid is not None else None

    # Recording to a file (discord-look's input) ---------------------------------------------

    def _write_record(self, r: Recorded) -> None:
        target = os.environ.get(RECORD_ENV)
        if not target:
            return
        line: dict[str, Any] = {
            "method": r.method,
            "path": r.path,
            "json": r.json,
            "at": r.wall,
            "status": r.status,
        }
        if r.files:
            line["files"] = [
                {"filename": name, "base64": base64.b64encode(data).decode()}
                for _, name, data in r.files
            ]
        token = re.match(r"^/(?:interactions/\d+|webhooks/\d+)/itoken-(\d+)", r.route)
        callback = _CALLBACK.match(r.route)
        interaction = self.interactions.get(
            callback.group(1) if callback else token.group(1) if token else ""
        )
        if interaction is not None:
            line["user"] = interaction.user
            if interaction.command:
                line["command"] = interaction.command
        created = r.response if isinstance(r.response, dict) else {}
        created = created.get("resource", {}).get("message") or created
        if r.method == "POST" and 200 <= r.status < 300 and created.get("id"):
            line["response_id"] = str(created["id"])
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")

    def _injected(self, record: Recorded) -> web.Response | None:
        for failure in self.failures:
            if failure.method == record.method and failure.pattern.search(record.route):
                if failure.times is not None:
                    failure.times -= 1
                    if failure.times <= 0:
                        self.failures.remove(failure)
                body = {"message": failure.message or "error", "code": failure.code}
                return _json(body, failure.status)
        return None

    async def _route(self, r: Recorded) -> web.Response:
        route, method = r.route, r.method
        if route == "/users/@me" and method == "GET":
            if r.headers.get("Authorization", "") != f"Bot {self.expected_token}":
                return _json({"message": "401: Unauthorized", "code": 0}, 401)
            return _json(self.user(self.bot_id, "OnAir", bot=True))
        if route == "/oauth2/applications/@me" and method == "GET":
            return _json(
                {
                    "id": str(self.app_id),
                    "name": "OnAir",
                    "description": "",
                    "icon": None,
                    "bot_public": True,
                    "bot_require_code_grant": False,
                    "owner": self.user(self.owner_id, "owner"),
                    "verify_key": "0" * 64,
                    "flags": 0,
                    "interactions_endpoint_url": None,
                }
            )
        if route in ("/gateway/bot", "/gateway"):
            return _json(
                {
                    "url": f"wss://gateway.discord.gg:{self.port}",
                    "shards": 1,
                    "session_start_limit": {
                        "total": 1000,
                        "remaining": 999,
                        "reset_after": 0,
                        "max_concurrency": self.max_concurrency,
                    },
                }
            )
        match = re.match(r"^/applications/(\d+)(?:/guilds/(\d+))?/commands$", route)
        if match and method == "PUT":
            out = []
            for command in r.json or []:
                command = {
                    **command,
                    "id": str(snowflake()),
                    "application_id": str(self.app_id),
                    "version": "1",
                }
                if match.group(2):
                    command["guild_id"] = match.group(2)
                out.append(command)
            self.commands = out
            return _json(out)
        if match and method == "GET":
            return _json(self.commands)
        match = re.match(r"^/interactions/(\d+)/([^/]+)/callback$", route)
        if match and method == "POST":
            return self._callback(int(match.group(1)), r)
        match = re.match(r"^/webhooks/(\d+)/([^/]+)(?:/messages/(@original|\d+))?$", route)
        if match:
            return self._webhook(match.group(2), match.group(3), r)
        match = re.match(r"^/channels/(\d+)$", route)
        if match and method == "GET":
            channel_id = int(match.group(1))
            for guild in self.guilds:
                for index, cid in enumerate(guild.channels):
                    if cid == channel_id:
                        return _json(self._channel(guild, cid, index))
                if channel_id in guild.threads:
                    return _json(self._thread(guild, channel_id))
                for vc in guild.voice_channels:
                    if vc.id == channel_id:
                        return _json(self._voice_channel(guild, vc))
            return _json({"message": "Unknown Channel", "code": 10003}, 404)
        match = re.match(r"^/channels/(\d+)/messages(?:/(\d+))?$", route)
        if match:
            return self._channel_messages(int(match.group(1)), match.group(2), r)
        match = _MY_VOICE_STATE.match(route)
        if match and method == "PATCH":
            return await self._edit_my_voice_state(int(match.group(1)), r.json or {})
        match = _VOICE_STATUS.match(route)
        if match and method == "PUT":
            return await self._put_voice_status(int(match.group(1)), r.json or {})
        if route == "/stage-instances" and method == "POST":
            return await self._stage_instance_op(int((r.json or {}).get("channel_id") or 0), r)
        match = _STAGE_INSTANCE.match(route)
        if match and method in ("GET", "PATCH", "DELETE"):
            return await self._stage_instance_op(int(match.group(1)), r)
        match = _EVENTS.match(route)
        if match and method in ("GET", "POST"):
            return await self._events(int(match.group(1)), None, r)
        match = _EVENT.match(route)
        if match and method in ("GET", "PATCH", "DELETE"):
            return await self._events(int(match.group(1)), int(match.group(2)), r)
        return _json({"message": "404: Not Found", "code": 0}, 404)

    # Voice channel status, stage instances, scheduled events ---------------------------------

    def _voice_channel_anywhere(self, channel_id: int) -> tuple[Guild, VoiceChannel] | None:
        for guild in self.guilds:
            channel = self._find_voice_channel(guild, channel_id)
            if channel is not None:
                return guild, channel
        return None

    def _refuse(self, rejection: rules.Rejection) -> web.Response:
        return _json(rejection.body, rejection.status)

    async def _put_voice_status(self, channel_id: int, body: dict[str, Any]) -> web.Response:
        """Set a voice channel's status: a voice channel (not a stage), the bot with View
        Channel, Connect and Set Voice Channel Status there and in it, or with Manage Channels
        (else 403, 50013); then
        VOICE_CHANNEL_STATUS_UPDATE to the guild, as Discord sends it."""
        found = self._voice_channel_anywhere(channel_id)
        if found is None:
            return _json({"message": "Unknown Channel", "code": 10003}, 404)
        guild, channel = found
        if channel.stage:
            return self._refuse(rules.invalid_channel_type())
        needed = VIEW_CHANNEL | CONNECT | SET_VOICE_CHANNEL_STATUS
        allowed = self.bot_permissions(guild, channel_id)
        if allowed & needed != needed:
            return self._refuse(rules.missing_permissions())
        # Only a member connected to the channel sets its status; from outside it takes Manage
        # Channels (discord-api-docs #6400), so a bot that was disconnected cannot clear it.
        if self.bot_voice.get(guild.id) != channel_id and not allowed & MANAGE_CHANNELS:
            return self._refuse(rules.missing_permissions())
        await self._set_status(guild, channel, body.get("status") or None, by="bot")
        return web.Response(status=204)

    async def _set_status(
        self, guild: Guild, channel: VoiceChannel, status: str | None, *, by: str
    ) -> None:
        channel.status, channel.status_by = status, by
        await self.dispatch(
            "VOICE_CHANNEL_STATUS_UPDATE",
            {"id": str(channel.id), "guild_id": str(guild.id), "status": status},
        )
        self._changed.set()

    async def person_sets_status(self, guild: Guild, channel_id: int, status: str | None) -> None:
        """Someone in the server sets (or clears, None) a voice channel's status."""
        channel = self._find_voice_channel(guild, channel_id)
        assert channel is not None
        assert not channel.stage
        await self._set_status(guild, channel, status, by="person")

    def _stage_instance(self, guild: Guild, channel: VoiceChannel) -> dict[str, Any]:
        return {
            "id": str(channel.id + 1),
            "guild_id": str(guild.id),
            "channel_id": str(channel.id),
            "topic": channel.topic,
            "privacy_level": 2,
            "discoverable_disabled": True,
            "guild_scheduled_event_id": None,
        }

    async def start_stage(self, guild: Guild, channel_id: int, topic: str) -> None:
        """A stage moderator opens the stage with ``topic`` (before or after READY)."""
        channel = self._find_voice_channel(guild, channel_id)
        assert channel is not None
        assert channel.stage
        channel.topic = topic
        await self.dispatch("STAGE_INSTANCE_CREATE", self._stage_instance(guild, channel))

    async def _stage_instance_op(self, channel_id: int, r: Recorded) -> web.Response:
        """Open (POST), read, retopic (PATCH) or close (DELETE) a stage instance: a stage
        channel; changes need the bot to be a stage moderator (Manage Channels, Mute Members
        and Move Members there; else 403, 50013); one instance per stage (else 400, 150006);
        none open: 404, 10067. Each change is dispatched as Discord does."""
        found = self._voice_channel_anywhere(channel_id)
        if found is None or not found[1].stage:
            return _json({"message": "Unknown Channel", "code": 10003}, 404)
        guild, channel = found
        if r.method == "GET":
            if channel.topic is None:
                return self._refuse(rules.unknown_stage_instance())
            return _json(self._stage_instance(guild, channel))
        if self.bot_permissions(guild, channel_id) & STAGE_MODERATOR != STAGE_MODERATOR:
            return self._refuse(rules.missing_permissions())
        body = r.json or {}
        if r.method == "POST":
            if channel.topic is not None:
                message = "A stage instance has already been created for this channel"
                return _json({"message": message, "code": rules.STAGE_ALREADY_OPEN}, 400)
            channel.topic = str(body["topic"])
            event = "STAGE_INSTANCE_CREATE"
        elif channel.topic is None:
            return self._refuse(rules.unknown_stage_instance())
        elif r.method == "PATCH":
            channel.topic = str(body.get("topic") or channel.topic)
            event = "STAGE_INSTANCE_UPDATE"
        else:
            data = self._stage_instance(guild, channel)
            channel.topic = None
            await self.dispatch("STAGE_INSTANCE_DELETE", data)
            self._changed.set()
            return web.Response(status=204)
        data = self._stage_instance(guild, channel)
        await self.dispatch(event, data)
        self._changed.set()
        return _json(data)

    def live_events(self, guild: Guild) -> list[dict[str, Any]]:
        """The guild's SCHEDULED and ACTIVE events (what counts toward Discord's 100)."""
        return [e for e in guild.events.values() if e["status"] in (rules.SCHEDULED, rules.ACTIVE)]

    async def _events(self, guild_id: int, event_id: int | None, r: Recorded) -> web.Response:
        """Scheduled events: list, create, read, modify, delete. Changes need Manage Events
        (else 403, 50013); a guild holds at most 100 scheduled or active events (else 400,
        30038); the bodies were checked by ``_check_event`` (which also refuses any change to a
        finished event: 400, 180000). An event carries every field Discord's answer does."""
        guild = next((g for g in self.guilds if g.id == guild_id), None)
        if guild is None:
            return _json({"message": "Unknown Guild", "code": 10004}, 404)
        if event_id is None and r.method == "GET":
            return _json(list(guild.events.values()))
        current = guild.events.get(event_id) if event_id is not None else None
        if event_id is not None and current is None:
            return self._refuse(rules.unknown_scheduled_event())
        if r.method == "GET":
            return _json(current)
        if not self.bot_permissions(guild, 0) & MANAGE_EVENTS:
            return self._refuse(rules.missing_permissions())
        body = dict(r.json or {})
        if r.method == "DELETE":
            assert current is not None
            del guild.events[int(current["id"])]
            await self.dispatch("GUILD_SCHEDULED_EVENT_DELETE", current)
            return web.Response(status=204)
        if current is None:
            if len(self.live_events(guild)) >= rules.EVENTS_MAX:
                return self._refuse(rules.too_many_events())
            new_id = snowflake()
            current = {
                "id": str(new_id),
                "guild_id": str(guild.id),
                "channel_id": None,
                "creator_id": str(self.bot_id),
                "creator": self.user(self.bot_id, "OnAir", bot=True),
                "description": None,
                "image": None,
                "scheduled_end_time": None,
                "status": rules.SCHEDULED,
                "entity_id": None,
                "user_count": 0,
                "recurrence_rule": None,
                "entity_metadata": None,
                "guild_scheduled_event_exceptions": [],
            }
            guild.events[new_id] = current
            event = "GUILD_SCHEDULED_EVENT_CREATE"
        else:
            event = "GUILD_SCHEDULED_EVENT_UPDATE"
        if body.get("image") is not None:  # a data URI in, its hash out (as Discord answers)
            body["image"] = hashlib.sha256(str(body["image"]).encode()).hexdigest()[:32]
        current.update(body)
        await self.dispatch(event, current)
        self._changed.set()
        return _json(current)

    def _known_channel(self, channel_id: int) -> bool:
        return any(channel_id in g.channels or channel_id in g.threads for g in self.guilds)

    def _channel_messages(
        self, channel_id: int, message_id: str | None, r: Recorded
    ) -> web.Response:
        if not self._known_channel(channel_id):
            return _json({"message": "Unknown Channel", "code": 10003}, 404)
        if message_id is None and r.method == "POST":
            return self._post_with_nonce(channel_id, r.json or {})
        if message_id is None and r.method == "GET":
            return self._history(channel_id, r.query)
        mid = int(message_id or 0)
        if mid not in self.messages:
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        if r.method == "PATCH":
            self._edit(mid, r.json)
            return _json(self.messages[mid])
        if r.method == "DELETE":
            self.messages.pop(mid, None)
            if mid in self.channel_messages[channel_id]:
                self.channel_messages[channel_id].remove(mid)
            return web.Response(status=204)
        if r.method == "GET":
            return _json(self.messages[mid])
        return _json({"message": "405", "code": 0}, 405)

    def _history(self, channel_id: int, query: dict[str, str]) -> web.Response:
        """GET a channel's messages as Discord answers it: newest first, without ephemeral
        replies; ``limit`` 1-100 (default 50); ``after`` takes the oldest ``limit`` newer than
        it, ``before`` (or nothing) the newest older than it."""
        try:
            limit = int(query.get("limit", "50"))
            after = int(query["after"]) if "after" in query else None
            before = int(query["before"]) if "before" in query else None
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            return _form_error("limit", "NUMBER_TYPE_MAX", "Must be between 1 and 100.")
        # Ephemeral replies belong to the one user who got them: Discord never lists them in
        # the channel (a card that is still the newest message stays so after one).
        ids = [
            i
            for i in self.channel_messages[channel_id]
            if not int(self.messages.get(i, {}).get("flags") or 0) & 64
        ]
        if after is not None:
            chosen = [i for i in ids if i > after][:limit]
        else:
            chosen = [i for i in ids if before is None or i < before][-limit:]
        return _json([self.messages[i] for i in reversed(chosen)])

    def _post_with_nonce(self, channel_id: int, body: dict[str, Any]) -> web.Response:
        """Create a message, honouring Discord's nonce: an integer or a string of at most 25
        characters (else 400, 50035); with ``enforce_nonce`` the same author sending the same
        nonce within a few minutes gets the first message back instead of a second one."""
        nonce = body.get("nonce")
        if nonce is not None and (
            isinstance(nonce, bool)
            or not isinstance(nonce, int | str)
            or (isinstance(nonce, str) and len(nonce) > 25)
        ):
            return _form_error("nonce", "BASE_TYPE_BAD_LENGTH", "Must be 25 or fewer in length.")
        key = (self.bot_id, str(nonce))
        first = self.nonces.get(key) if nonce is not None and body.get("enforce_nonce") else None
        fresh = first is not None and time.monotonic() - first[0] < self.nonce_window
        if first is not None and fresh and first[1] in self.messages:
            return _json(self.messages[first[1]])
        data = self.message(channel_id, body)
        if nonce is not None:
            self.nonces[key] = (time.monotonic(), int(data["id"]))
        return _json(data)

    def _edit(self, message_id: int, body: Any) -> None:
        editable = ("content", "embeds", "components")
        self.messages[message_id].update({k: v for k, v in (body or {}).items() if k in editable})

    def user_message(self, channel_id: int) -> dict[str, Any]:
        """Someone else writes in a channel (buries a card)."""
        data = self.message(channel_id, {"content": "chatter"})
        data["author"] = self.user(self.owner_id)
        return data

    def _callback(self, interaction_id: int, r: Recorded) -> web.Response:
        body = r.json or {}
        kind = body.get("type")
        data = body.get("data") or {}
        channel = self.guilds[0].channels[0]
        message_id = snowflake()
        resource: dict[str, Any] = {"type": kind}
        interaction = self.interactions.get(str(interaction_id))
        updated = interaction.message_id if interaction is not None else None
        if kind == 7 and updated in self.messages:
            # UPDATE_MESSAGE edits the message the component is on (only what the body names).
            assert updated is not None
            self._edit(updated, data)
            resource["message"] = self.messages[updated]
            self._originals[str(interaction_id)] = updated
            return _json(self._callback_answer(interaction_id, kind, data, updated, resource))
        if kind in (4, 7):
            resource["message"] = self.message(channel, data, message_id=message_id, webhook=True)
        elif kind == 5:
            resource["message"] = self.message(
                channel,
                {"content": "", "flags": data.get("flags", 0)},
                message_id=message_id,
                webhook=True,
                flags=128,
            )
        self._originals[str(interaction_id)] = message_id
        return _json(self._callback_answer(interaction_id, kind, data, message_id, resource))

    def _callback_answer(
        self,
        interaction_id: int,
        kind: Any,
        data: dict[str, Any],
        message_id: int,
        resource: dict[str, Any],
    ) -> dict[str, Any]:
        interaction = self.interactions.get(str(interaction_id))
        return {
            "interaction": {
                "id": str(interaction_id),
                "type": interaction.kind if interaction is not None else 2,
                "response_message_id": str(message_id),
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(int(data.get("flags", 0) or 0) & 64),
            },
            "resource": resource,
        }

    def _webhook(self, token: str, message: str | None, r: Recorded) -> web.Response:
        channel = self.guilds[0].channels[0]
        interaction_id = token.removeprefix("itoken-")
        if message is None and r.method == "POST":
            return _json(self.message(channel, r.json or {}, webhook=True))
        mid = self._originals.get(interaction_id) if message == "@original" else int(message or 0)
        if mid is None or mid not in self.messages:
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        if r.method == "PATCH":
            self._edit(mid, r.json)
        if r.method == "DELETE":
            self.messages.pop(mid, None)
            return web.Response(status=204)
        return _json(self.messages[mid])

    async def __aenter__(self) -> FakeDiscord:
        """``async with FakeDiscord(...) as fake``: started, and stopped however the block ends."""
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()


_COMMANDS = re.compile(r"^/applications/(\d+)(?:/guilds/(\d+))?/commands$")
_CALLBACK = re.compile(r"^/interactions/(\d+)/([^/]+)/callback$")
# Routes authorised by an interaction token (Discord: not bound to the global rate limit).
_INTERACTION_ROUTE = re.compile(r"^/(?:interactions/\d+/[^/]+/callback|webhooks/\d+/itoken-)")
_CHANNEL_MESSAGES = re.compile(r"^/channels/(\d+)/messages$")
_CHANNEL_MESSAGE = re.compile(r"^/channels/(\d+)/messages/(\d+)$")
_WEBHOOK = re.compile(r"^/webhooks/(\d+)/([^/]+)$")
_WEBHOOK_MESSAGE = re.compile(r"^/webhooks/(\d+)/([^/]+)/messages/(@original|\d+)$")
_MY_VOICE_STATE = re.compile(r"^/guilds/(\d+)/voice-states/@me$")
_VOICE_STATUS = re.compile(r"^/channels/(\d+)/voice-status$")
_STAGE_INSTANCES = re.compile(r"^/stage-instances$")
_STAGE_INSTANCE = re.compile(r"^/stage-instances/(\d+)$")
_EVENTS = re.compile(r"^/guilds/(\d+)/scheduled-events$")
_EVENT = re.compile(r"^/guilds/(\d+)/scheduled-events/(\d+)$")


def _option_type(command: dict[str, Any], sub: list[str] | None, name: str) -> int:
    options = command.get("options") or []
    for part in sub or []:
        options = next((o.get("options") or [] for o in options if o["name"] == part), [])
    for option in options:
        if option["name"] == name:
            return int(option["type"])
    raise AssertionError(f"option {name!r} not in command {command['name']}")
