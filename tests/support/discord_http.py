"""Raw HTTP to the fake Discord, for the tests of its routes that bypass discord.py."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from .fakediscord import FakeDiscord

API = "https://discord.com/api/v10"


def fake_http_fixture() -> Any:
    """A pytest fixture: an aiohttp session whose requests reach the module's ``fake`` Discord.
    A test module assigns it: ``http = fake_http_fixture()``."""

    @pytest.fixture(name="http")
    async def fixture(fake: FakeDiscord) -> AsyncIterator[aiohttp.ClientSession]:
        async with aiohttp.ClientSession(connector=fake.connector()) as session:
            yield session

    return fixture


async def call(
    http: aiohttp.ClientSession, method: str, path: str, body: Any = None
) -> tuple[int, Any]:
    """Status and JSON body (None when the body is empty) of ``method`` ``path`` under the API."""
    async with http.request(method, f"{API}{path}", json=body) as response:
        if not await response.read():
            return response.status, None
        return response.status, await response.json()


def all_text(fake: FakeDiscord) -> str:
    """Everything the bot sent the fake (bodies, queries, headers) as text: where a secret must
    never be."""
    return "\n".join(repr(r.json) + repr(r.query) + repr(r.headers) for r in fake.requests)
