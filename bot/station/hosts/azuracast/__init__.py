"""AzuraCast (https://www.azuracast.com): now playing, recent plays, artwork, the schedule,
song requests, and each change pushed through its Centrifugo SSE stream."""

from __future__ import annotations

from .client import AzuraCastClient
from .requests import AzuraCastRequests

__all__ = ["AzuraCastClient", "AzuraCastRequests"]
