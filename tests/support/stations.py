"""The simulator stations the shared fixtures start: their keys (test values, never real
keys) and a station client with fast retries for them."""

from __future__ import annotations

from typing import Any

import aiohttp

from bot.simulator import StationSimulator
from bot.station import RetryPolicy, StationClient

KEY = "sekrit-KEY-0123456789"  # the ``simulator`` fixture's station 1 (manual clock)


def make_client(sim: StationSimulator, session: aiohttp.ClientSession, **kw: Any) -> StationClient:
    """A client for station 1 of ``sim`` that retries fast (tests wait on failures)."""
    kw.setdefault("retry", RetryPolicy(tries=3, base_delay=0.01, budget=3.0))
    kw.setdefault("timeout", aiohttp.ClientTimeout(total=1.0, connect=1.0))
    return StationClient(sim.base_url, 1, kw.pop("key", KEY), session=session, **kw)
