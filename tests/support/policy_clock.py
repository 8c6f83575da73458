"""The poll policy tests' virtual clock: ``T0`` and what the station answers a given number of
seconds after it (a ``StationInfo`` with that ``fetched_at``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot.station import StationInfo

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def info(
    at: float, title: str, pos: float | None, length: float | None, **extra: Any
) -> StationInfo:
    body: dict[str, Any] = {"nowplaying": title, "live": length is None, **extra}
    if pos is not None:
        body["playback"] = {"pos": int(pos * 1000), "len": int((length or 0) * 1000)}
    return StationInfo.parse(body, UTC, T0 + timedelta(seconds=at))
