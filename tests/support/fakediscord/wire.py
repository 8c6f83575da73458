"""The fake's HTTP surface below the routes: Discord's answers (JSON, 400 form errors, 429s),
the route patterns the rules and routes share, and the DNS that sends Discord's hosts here.
"""

from __future__ import annotations

import json
import math
import re
import socket
from typing import Any

from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from .. import discord_rules as rules

HOSTS = ("discord.com", "gateway.discord.gg", "cdn.discordapp.com")
JSON = "application/json"


def json_response(
    body: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    # Exactly application/json: discord.py treats "; charset=utf-8" as text.
    return web.Response(
        body=json.dumps(body).encode(),
        status=status,
        headers={"Content-Type": JSON, **(headers or {})},
    )


def form_error(field_name: str, code: str, message: str) -> web.Response:
    """Discord's 400 Invalid Form Body (50035) for one field."""
    errors = rules.FormErrors()
    errors.add((field_name,), code, message)
    return json_response(errors.body(), 400)


def too_many(
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
    return json_response(body, 429, headers)


def refuse(rejection: rules.Rejection) -> web.Response:
    """What Discord answers for ``rejection`` (its status and JSON body)."""
    return json_response(rejection.body, rejection.status)


CALLBACK = re.compile(r"^/interactions/(\d+)/([^/]+)/callback$")
# Routes authorised by an interaction token (Discord: not bound to the global rate limit).
INTERACTION_ROUTE = re.compile(r"^/(?:interactions/\d+/[^/]+/callback|webhooks/\d+/itoken-)")
MY_VOICE_STATE = re.compile(r"^/guilds/(\d+)/voice-states/@me$")
VOICE_STATUS = re.compile(r"^/channels/(\d+)/voice-status$")
STAGE_INSTANCES = re.compile(r"^/stage-instances$")
STAGE_INSTANCE = re.compile(r"^/stage-instances/(\d+)$")
EVENTS = re.compile(r"^/guilds/(\d+)/scheduled-events$")
EVENT = re.compile(r"^/guilds/(\d+)/scheduled-events/(\d+)$")
POLL_EXPIRE = re.compile(r"^/channels/(\d+)/polls/(\d+)/expire$")


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
