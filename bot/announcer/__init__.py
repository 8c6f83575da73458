"""Track announcer core: change detection, poll scheduling, station watches. No Discord here."""

from .detector import PlayDetector, is_placeholder
from .policy import PollPolicy, PollSettings
from .watcher import Announcement, StationStatus, StationWatch, WatchScheduler, job_id_for

__all__ = [
    "Announcement",
    "PlayDetector",
    "PollPolicy",
    "PollSettings",
    "StationStatus",
    "StationWatch",
    "WatchScheduler",
    "is_placeholder",
    "job_id_for",
]
