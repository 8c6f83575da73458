"""Understand "14:32", "yesterday 22:10" or "2026-11-20 14:32" as a moment in the station's zone,
and the same in OnAir's other languages: "ontem 20:00", "gestern um 20 Uhr", "hier à 20h",
"ayer a las 20:00", "20/11/2026 14:32", "20.11.2026 14:32".

The text is a listener's: it is cut to ``MAX_TEXT`` characters before any regex looks at it,
and the pattern is one pass of bounded pieces on disjoint character classes (no nested
repetition), so no input makes it backtrack for long.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from ..errors import BadInput
from ..util.i18n import N_

MAX_TEXT = 64  # longer is no time anyone types: refused before the regex
# Day words of every language OnAir speaks -> days back from today.
DAY_WORDS = {
    "today": 0,
    "yesterday": 1,
    "hoy": 0,
    "ayer": 1,
    "anteayer": 2,
    "hoje": 0,
    "ontem": 1,
    "anteontem": 2,
    "heute": 0,
    "gestern": 1,
    "vorgestern": 2,
    "aujourd'hui": 0,
    "hier": 1,
    "avant-hier": 2,
}
# Words between the day and the time: "at", "a las", "às", "um", "à".
_LINKS = r"at|a\s+las|a\s+la|às|as|um|à|a"
_WORD = "|".join(sorted((re.escape(w) for w in DAY_WORDS), key=len, reverse=True))
_MOMENT = re.compile(
    rf"(?:(?P<word>{_WORD})|(?P<date>\d{{4}}-\d{{2}}-\d{{2}})"
    r"|(?P<dd>\d{1,2})(?P<sep>[./])(?P<mm>\d{1,2})(?P=sep)(?P<yyyy>\d{4}))?"
    rf"\s*(?:(?:{_LINKS})\s+)?"
    r"(?:(?P<h>\d{1,2})(?:\s*(?:[:.]|h)\s*(?P<m>\d{2}))?"
    r"\s*(?:(?P<ampm>[ap]\.?m\.?)|(?P<unit>uhr|h))?)?",
)
UNREADABLE = N_("I couldn't read that time. Try `14:32`, `yesterday 22:10` or `2026-11-20 14:32`.")


def parse_moment(text: str, now: datetime, *, day_first: bool = False) -> datetime:
    """``now`` is zone-aware in the station's zone; the result is in that zone too.
    ``day_first``: "20/11/2026" and "20.11.2026" are read (a reader whose language writes the
    day first; in English "11/12/2026" could be either, so only the ISO date is read)."""
    typed = " ".join((text or "").split()).lower().replace("’", "'")
    match = _MOMENT.fullmatch(typed) if len(typed) <= MAX_TEXT else None
    if not match or not (match["word"] or match["date"] or match["dd"] or match["h"]):
        raise BadInput(UNREADABLE)
    if match["h"] and not (match["m"] or match["unit"]) and not match["ampm"]:
        raise BadInput(UNREADABLE)  # a bare number: an hour needs its minutes, "h" or "Uhr"
    if match["dd"] and not day_first:
        raise BadInput(UNREADABLE)
    day = _day(match, now)
    hour, minute = 23, 59
    if match["h"]:
        hour, minute = int(match["h"]), int(match["m"] or 0)
        ampm = (match["ampm"] or "").lower()
        if ampm:
            if not 1 <= hour <= 12:
                raise BadInput(N_("With am/pm the hour must be 1 to 12."))
            hour = hour % 12 + (12 if ampm.startswith("p") else 0)
        if hour > 23 or minute > 59:
            raise BadInput(N_("That is not a time of day (hours 0-23, minutes 0-59)."))
    moment = datetime.combine(day, time(hour, minute, 59), tzinfo=now.tzinfo)
    if not (match["word"] or match["date"] or match["dd"]) and moment > now:
        moment -= timedelta(days=1)  # "22:10" at 09:00 means last night
    if moment > now + timedelta(minutes=1):
        raise BadInput(N_("That time is in the future; history only knows what already played."))
    return moment


def _day(match: re.Match[str], now: datetime) -> date:
    """The day typed: a word, an ISO date or a day-first date; today when none."""
    if match["word"]:
        return now.date() - timedelta(days=DAY_WORDS[match["word"]])
    typed = (
        match["date"] or f"{match['dd']}{match['sep']}{match['mm']}{match['sep']}{match['yyyy']}"
    )
    try:
        if match["date"]:
            return date.fromisoformat(match["date"])
        if match["dd"]:
            return date(int(match["yyyy"]), int(match["mm"]), int(match["dd"]))
    except ValueError:
        raise BadInput(N_("{date} is not a real date."), date=typed) from None
    return now.date()
