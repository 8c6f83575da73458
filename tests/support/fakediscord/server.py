"""The fake Discord itself: its parts put together, the server's lifecycle, and the REST
entry point that rate-limits, validates and routes each request.
"""

from __future__ import annotations

import contextlib
import json
import re
import ssl
from typing import Any

import aiohttp
from aiohttp import web

from .. import discord_rules as rules
from .events import ScheduledEvents
from .gateway import Gateway
from .interactions import Interactions
from .limits import Limits
from .messages import Messages
from .objects import Recorded, snowflake
from .polls import Polls
from .recording import Recording
from .stages import StatusAndStages
from .validation import Validation
from .wire import (
    EVENT,
    EVENTS,
    HOSTS,
    MY_VOICE_STATE,
    POLL_EXPIRE,
    STAGE_INSTANCE,
    STAGE_INSTANCES,
    VOICE_STATUS,
    FakeResolver,
    json_response,
)

# Each install type's default authorization (Developer Portal -> Installation -> Default Install
# Settings): a server install adds the bot, a user install only the commands.
INSTALL_PARAMS: dict[int, dict[str, Any]] = {
    rules.GUILD_INSTALL: {"scopes": ["applications.commands", "bot"], "permissions": "0"},
    rules.USER_INSTALL: {"scopes": ["applications.commands"], "permissions": "0"},
}


class FakeDiscord(
    Gateway,
    Interactions,
    Messages,
    Polls,
    StatusAndStages,
    ScheduledEvents,
    Limits,
    Validation,
    Recording,
):
    """A wire-level Discord on loopback for the real discord.py client (see the package)."""

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

    def go_silent(self) -> None:
        """Stop answering as Discord does in an outage: connections hang, nothing comes back
        (``tests/support/outage.py``); ``answer_again`` (or ``stop``) ends it."""
        self.outage.begin()

    def answer_again(self) -> None:
        """The outage is over: what it held goes on (requests taken in are answered)."""
        self.outage.end()

    async def stop(self) -> None:
        self.outage.end()
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

    async def __aenter__(self) -> FakeDiscord:
        """``async with FakeDiscord(...) as fake``: started, and stopped however the block ends."""
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        record = await self._record(request)
        self.requests.append(record)
        self.connections.add(id(request.transport))
        try:
            await self.outage.hang()
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

    def application(self) -> dict[str, Any]:
        """The Application object as Discord documents it; ``integration_types_config`` has a
        key for each install type the application supports."""
        return {
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
            "integration_types_config": {
                str(kind): {"oauth2_install_params": INSTALL_PARAMS[kind]}
                for kind in self.app_install_types
            },
        }

    async def _route(self, r: Recorded) -> web.Response:
        route, method = r.route, r.method
        if route == "/users/@me" and method == "GET":
            if r.headers.get("Authorization", "") != f"Bot {self.expected_token}":
                return json_response({"message": "401: Unauthorized", "code": 0}, 401)
            return json_response(self.user(self.bot_id, "OnAir", bot=True))
        if route in ("/oauth2/applications/@me", "/applications/@me") and method == "GET":
            return json_response(self.application())
        if route in ("/gateway/bot", "/gateway"):
            return json_response(
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
            return json_response(out)
        if match and method == "GET":
            return json_response(self.commands)
        match = re.match(r"^/interactions/(\d+)/([^/]+)/callback$", route)
        if match and method == "POST":
            return self._callback(int(match.group(1)), r)
        match = re.match(r"^/webhooks/(\d+)/([^/]+)(?:/messages/(@original|\d+))?$", route)
        if match:
            return self._webhook(match.group(2), match.group(3), r)
        match = re.match(r"^/channels/(\d+)$", route)
        if match and method == "GET":
            channel_id = int(match.group(1))
            if channel_id in self.missing_access:
                return json_response(rules.missing_access().body, 403)
            for guild in self.guilds:
                for index, cid in enumerate(guild.channels):
                    if cid == channel_id:
                        return json_response(self._channel(guild, cid, index))
                if channel_id in guild.threads:
                    return json_response(self._thread(guild, channel_id))
                for vc in guild.voice_channels:
                    if vc.id == channel_id:
                        return json_response(self._voice_channel(guild, vc))
            return json_response({"message": "Unknown Channel", "code": 10003}, 404)
        match = re.match(r"^/channels/(\d+)/messages(?:/(\d+))?$", route)
        if match:
            return self._channel_messages(int(match.group(1)), match.group(2), r)
        match = POLL_EXPIRE.match(route)
        if match and method == "POST":
            return await self._expire_poll(int(match.group(1)), int(match.group(2)), r)
        match = MY_VOICE_STATE.match(route)
        if match and method == "PATCH":
            return await self._edit_my_voice_state(int(match.group(1)), r.json or {})
        match = VOICE_STATUS.match(route)
        if match and method == "PUT":
            return await self._put_voice_status(int(match.group(1)), r.json or {})
        if STAGE_INSTANCES.fullmatch(route) and method == "POST":
            return await self._stage_instance_op(int((r.json or {}).get("channel_id") or 0), r)
        match = STAGE_INSTANCE.match(route)
        if match and method in ("GET", "PATCH", "DELETE"):
            return await self._stage_instance_op(int(match.group(1)), r)
        match = EVENTS.match(route)
        if match and method in ("GET", "POST"):
            return await self._events(int(match.group(1)), None, r)
        match = EVENT.match(route)
        if match and method in ("GET", "PATCH", "DELETE"):
            return await self._events(int(match.group(1)), int(match.group(2)), r)
        return json_response({"message": "404: Not Found", "code": 0}, 404)
