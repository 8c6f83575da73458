"""The same-play rule: when two observations of a station are one play (announced once).

Kept apart from the wire models (``info``, ``playlist``, ``stats``): this is OnAir's rule, not
the station's format.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta


def normalise_title(value: str | None) -> str:
    """Case-, width- and whitespace-insensitive form used to compare titles."""
    if not value:
        return ""
    folded = unicodedata.normalize("NFKC", value).casefold()
    return " ".join(folded.split())


# How far apart two *estimated* start times may be and still be the same play. Estimates come
# from "fetched_at - pos" and move with request latency; an exact ``started`` is compared as is.
ESTIMATE_TOLERANCE = timedelta(seconds=20)


@dataclass(frozen=True, slots=True)
class Play:
    """One play of one item: what the announcer announces once.

    The "same play" rule (see :meth:`same_as`): two observations are the same play when
    artist and title match (after normalising case and whitespace), the file matches when both
    know it, and the start time matches when both know it: exactly when the station reported it
    (``recent[0].started`` or ``LASTPLAYED``), within ``ESTIMATE_TOLERANCE`` when it was
    estimated from the playback position. A song played again later is therefore a new play, and
    polling the same play again is not.
    """

    title: str
    artist: str | None = None
    album: str | None = None
    year: str | None = None
    started: datetime | None = None
    started_exact: bool = False
    file: str | None = None
    duration: timedelta | None = None
    live: bool = False
    item_type: str | None = None

    @property
    def display(self) -> str:
        return f"{self.artist} - {self.title}" if self.artist else self.title

    @property
    def claim_key(self) -> str:
        """A stable text key for "this play" shared by processes that observed it separately.

        Exact starts are used as they are; estimated ones are rounded to 5 minutes (estimates
        from different processes differ by the request latency).
        """
        started = ""
        if self.started is not None:
            stamp = int(self.started.timestamp())
            started = str(stamp if self.started_exact else stamp - stamp % 300)
        parts = (
            normalise_title(self.artist),
            normalise_title(self.title),
            started,
            self.file or "",
        )
        return "|".join(parts)

    def same_as(self, other: Play) -> bool:
        if normalise_title(self.title) != normalise_title(other.title):
            return False
        if normalise_title(self.artist) != normalise_title(other.artist):
            return False
        if self.file and other.file and self.file != other.file:
            return False
        if self.started and other.started:
            gap = abs(self.started - other.started)
            if self.started_exact and other.started_exact:
                return gap < timedelta(seconds=1)
            return gap <= ESTIMATE_TOLERANCE
        return True
