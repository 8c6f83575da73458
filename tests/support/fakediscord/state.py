"""What the fake Discord remembers, and the waits and scripted faults tests use on it; the
gateway dispatch every part sends its events through.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from typing import Any

import trustme
from aiohttp import web

from ..fakevoice import FakeVoiceServer
from ..outage import Outage
from .objects import (
    GUILD_VOICE_STATES,
    Failure,
    Guild,
    Interaction,
    PresenceSent,
    Recorded,
    Throttle,
    snowflake,
)


class FakeDiscordState:
    """The fake's state: its guilds, messages, interactions, requests and sockets."""

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
        # The install types ticked in the Developer Portal (Installation -> Installation
        # Contexts): both for an application made since mid-2024 with User Install on; an
        # older one, or one whose owner never ticked it, has Guild Install alone.
        self.app_install_types: tuple[int, ...] = (0, 1)
        self.owner_id = snowflake()
        self.token: str | None = None
        # Shaped as Discord's bot tokens are (OnAir refuses one that cannot be a token): the
        # bot's id in base64, a timestamp part, and the secret part.
        bot_id_part = base64.b64encode(str(self.bot_id).encode()).decode().rstrip("=")
        self.expected_token = f"{bot_id_part}.GfAkEd.fake-secret-part-of-the-bot-token"
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
        # message id → member id → the answers they voted for (Discord counts them)
        self.poll_votes: dict[int, dict[int, set[int]]] = {}
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
        self.session_id = "fake-session"  # the bot's voice session (its voice states)
        # Each shard's gateway session, as READY names it: a RESUME of it keeps the shard's
        # guilds, as Discord's does (a resumed connection gets no other shard's events).
        self.gateway_sessions: dict[str, tuple[int, int]] = {}
        self.sequence = 0
        self.commands: list[dict[str, Any]] = []
        # Channels the bot cannot see (DMs of others, channels of guilds it is not in): REST on
        # them answers 403 Missing Access, as Discord does.
        self.missing_access: set[int] = set()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._changed = asyncio.Event()
        self._originals: dict[str, int] = {}
        self.connections: set[int] = set()  # distinct client connections seen (keep-alive check)
        # The voice server (started with the first op 4) and what the fake refused on the gateway.
        # Set by ``go_silent``: the gateway, REST and voice servers stop answering.
        self.outage = Outage()
        self.voice = FakeVoiceServer(self.ca, outage=self.outage)
        self.voice_rejections: list[str] = []
        # Members' VOICE_STATE_UPDATEs held back (``hold_voice_states``), in order.
        self.held_voice_states: list[dict[str, Any]] | None = None
        self.intents = 0  # of the last IDENTIFY: voice states reach only GUILD_VOICE_STATES
        # Awaited with each op 4 before Discord answers it: a test acts mid-connect.
        self.before_voice_op: Callable[[Any], Awaitable[None]] | None = None
        # Every valid op 3 (presence) in arrival order, and what the fake refused (then 4002).
        self.presences: list[PresenceSent] = []
        self.presence_rejections: list[str] = []
        self._shard_of: dict[int, int] = {}  # id(gateway websocket) → its IDENTIFY's shard
        self._shard_count_of: dict[int, int] = {}  # ... and the shard count it gave

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

    async def dispatch(
        self, event: str, data: dict[str, Any], *, guild_id: int | None = None
    ) -> None:
        """Send ``event`` to the shard of its guild (``data``'s guild_id, or ``guild_id`` for
        an event whose payload is the guild itself), else to every connection."""
        if event == "VOICE_STATE_UPDATE" and not self.intents & GUILD_VOICE_STATES:
            return  # Discord sends none without the intent (then voice connects time out)
        self.sequence += 1
        payload = {"op": 0, "t": event, "s": self.sequence, "d": data}
        if guild_id is None and isinstance(data, dict):
            guild_id = data.get("guild_id")
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
