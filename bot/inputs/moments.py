"""Understand "14:32", "yesterday 22:10" or "2026-11-20 14:32" as a moment in the station's zone."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from ..errors import BadInput
from ..util.i18n import N_

_MOMENT = re.compile(
    r"^\s*(?:(?P<word>today|yesterday)|(?P<date>\d{4}-\d{2}-\d{2}))?\s*"
    r"(?:(?P<h>\d{1,2})[:.](?P<m>\d{2})\s*(?P<ampm>[ap]\.?m\.?)?)?\s*$",
    re.IGNORECASE,
)


def parse_moment(text: str, now: datetime) -> datetime:
    """``now`` is zone-aware in the station's zone; the result is in that zone too."""
    match = _MOMENT.match(text or "")
    if not match or not (match.group("word") or match.group("date") or match.group("h")):
        raise BadInput(
            N_("I couldn't read that time. Try `14:32`, `yesterday 22:10` or `2026-11-20 14:32`.")
        )
    day: date = now.date()
    if match.group("word") and match.group("word").lower() == "yesterday":
        day -= timedelta(days=1)
    if match.group("date"):
        try:
            day = date.fromisoformat(match.group("date"))
        except ValueError:
            raise BadInput(f"{match.group('date')} is not a real date.") from None
    hour, minute = 23, 59
    if match.group("h"):
        hour, minute = int(match.group("h")), int(match.group("m"))
        ampm = (match.group("ampm") or "").lower()
        if ampm:
            if not 1 <= hour <= 12:
                raise BadInput(N_("With am/pm the hour must be 1 to 12."))
            hour = hour % 12 + (12 if ampm.startswith("p") else 0)
        if hour > 23 or minute > 59:
            raise BadInput(N_("That is not a time of day (hours 0-23, minutes 0-59)."))
    moment = datetime.combine(day, time(hour, minute, 59), tzinfo=now.tzinfo)
    if not match.group("word") and not match.group("date") and moment > now:
        moment -= timedelta(days=1)  # "22:10" at 09:00 means last night
    if moment > now + timedelta(minutes=1):
        raise BadInput(N_("That time is in the future; history only knows what already played."))
    return moment
