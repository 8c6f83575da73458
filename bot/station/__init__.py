"""Client and models of the RadioBOSS Cloud station API. Imports nothing from discord."""

from .client import CacheTimes, RetryPolicy, StationClient
from .errors import (
    AddressRefused,
    StationAuthError,
    StationError,
    StationNotFound,
    StationRefused,
    StationResponseError,
    StationUnavailable,
)
from .models import (
    CountryCount,
    DayStats,
    Links,
    Mount,
    Playback,
    Playlist,
    PlaylistItem,
    RecentItem,
    StationInfo,
    Stats,
    Track,
)
from .play import Play, normalise_title
from .redact import redact, redact_url

__all__ = [
    "AddressRefused",
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
    "StationRefused",
    "StationResponseError",
    "StationUnavailable",
    "Stats",
    "Track",
    "normalise_title",
    "redact",
    "redact_url",
]
