"""Answers above ~256 KiB are parsed (json.loads and models) in a worker thread, not on the loop."""

from __future__ import annotations

import json
import threading

import pytest

from bot.station import StationClient, StationResponseError
from bot.station.client import INLINE_PARSE_BYTES

from .fixtures import responses
from .support.stations import make_client


def _big_info(size: int) -> str:
    body = responses.full_info()
    recent = body["recent"]
    while (missing := size - len(json.dumps(body))) > 0:
        # Enough copies at once (one copy per loop made this quadratic: 2 s for 320 KiB).
        body["recent"] = body["recent"] + recent * (missing // len(json.dumps(recent)) + 1)
    return json.dumps(body)


async def test_large_body_is_parsed_off_the_loop_small_one_inline(simulator, session):
    client: StationClient = make_client(simulator, session)
    loop_thread = threading.get_ident()

    small = await client.info(max_age=0)
    assert client.last_parse_thread == loop_thread
    assert small.name

    big_body = _big_info(INLINE_PARSE_BYTES + 64 * 1024)
    assert INLINE_PARSE_BYTES < len(big_body) < client.max_bytes
    simulator.inject("status", status=200, body=big_body, endpoint="info", times=1)
    big = await client.info(max_age=0)
    assert client.last_parse_thread not in (None, loop_thread)
    assert big.name == "Radio Example"
    assert len(big.recent) > len(responses.full_info()["recent"])


async def test_large_unreadable_body_is_still_a_response_error(simulator, session):
    client = make_client(simulator, session)
    body = '{"pad": "' + "x" * (INLINE_PARSE_BYTES * 2) + '", "cut'
    simulator.inject("status", status=200, body=body, endpoint="info", times=1)
    with pytest.raises(StationResponseError) as raised:
        await client.info(max_age=0)
    assert "not valid JSON" in raised.value.message
    assert client.last_parse_thread != threading.get_ident()
