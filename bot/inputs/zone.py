"""A time zone a guild admin types."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from ..config import time_zone
from ..errors import BadInput


def zone_input(name: str) -> ZoneInfo:
    """The zone, or a polite BadInput naming the problem."""
    try:
        return time_zone(name.strip())
    except ValueError:
        raise BadInput(
            f"`{name[:60]}` is not a time zone I know; use a name like Europe/Berlin."
        ) from None
