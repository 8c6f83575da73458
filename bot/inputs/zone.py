"""A time zone a guild admin types."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from ..config import time_zone
from ..errors import BadInput
from ..util.i18n import N_


def zone_input(name: str) -> ZoneInfo:
    """The zone, or a polite BadInput naming the problem."""
    try:
        return time_zone(name.strip())
    except ValueError:
        raise BadInput(
            N_("`{name}` is not a time zone I know; use a name like Europe/Berlin."),
            name=name[:60],
        ) from None
