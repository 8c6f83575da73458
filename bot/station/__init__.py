"""Client and models of the RadioBOSS Cloud station API. Imports nothing from discord."""

from .client import CacheTimes, RetryPolicy, StationClient
from .errors import (
    StationAuthError,
    StationError,
    StationNotFound,
    StationResponseError,
    StationUnavailable,
)
from .models import (
    CountryCount,
    DayStats,
    Links,
    Mount,
    Play,
    Playback,
    Playlist,
    PlaylistItem,
    RecentItem,
    StationInfo,
    Stats,
    Track,
)
from .redact import redact, redact_url

__all__ = [
    "CacheTimes",
    "CountryCount",
    "DayStats",
    "Links",
    "Mount",
    "Play",
    "Playback",
    "Playlist",
    "PlaylistItem",
    "RecentItem",
    "RetryPolicy",
    "StationAuthError",
    "StationClient",
    "StationError",
    "StationInfo",
    "StationNotFound",
    "StationResponseError",
    "StationUnavailable",
    "Stats",
    "Track",
    "redact",
    "redact_url",
]
