"""Client and models of the RadioBOSS Cloud station API. Imports nothing from discord."""

from .client import CacheTimes, RetryPolicy, StationClient
from .errors import (
    AddressRefused,
    Problem,
    RequestRefused,
    RequestsOff,
    StationAuthError,
    StationError,
    StationNotFound,
    StationRefused,
    StationResponseError,
    StationUnavailable,
)
from .info import Links, Mount, Playback, RecentItem, StationInfo, Track
from .play import Play, normalise_title
from .playlist import Playlist, PlaylistItem
from .redact import redact, redact_url
from .requests import QueuedSong, RequestsClient, RequestTrack, SearchAnswer
from .schedule import ScheduledShow
from .stats import CountryCount, DayStats, Stats

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
    "Problem",
    "QueuedSong",
    "RecentItem",
    "RequestRefused",
    "RequestTrack",
    "RequestsClient",
    "RequestsOff",
    "RetryPolicy",
    "ScheduledShow",
    "SearchAnswer",
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
