"""Turn the /stats options into a date range, or say exactly what is wrong with them."""

from __future__ import annotations

from datetime import date, timedelta

from ..errors import RANGE_TOO_LONG, BadInput
from ..util.i18n import N_

PERIODS = {"today": 1, "7d": 7, "30d": 30, "90d": 90}
MAX_SPAN_DAYS = 366
WORD_JOINER = "\u2060"


def unbroken(day: date) -> str:
    """``2026-03-01`` as a reply suggests it: a word joiner after each hyphen, so a line
    never breaks inside the date (browsers break after a hyphen, and the pt-BR sentence put
    ``from:2025-`` at one line's end), while it still shows and copies as the ASCII date:
    :func:`_parse` drops the joiners of a pasted suggestion."""
    return day.isoformat().replace("-", "-" + WORD_JOINER)


def _parse(value: str, label: str) -> date:
    typed = value.replace(WORD_JOINER, "").replace("\u2011", "-").strip()
    try:
        return date.fromisoformat(typed)
    except ValueError:
        raise BadInput(
            N_("`{option}` must be a date written YYYY-MM-DD (for example 2026-03-01)."),
            option=label,
        ) from None


def stats_range(
    period: str | None, date_from: str | None, date_to: str | None, *, today: date
) -> tuple[date, date]:
    """``today`` is today's date in the station's zone."""
    if date_from or date_to:
        if period:
            raise BadInput(N_("Use either `period` or `from`/`to`, not both."))
        first = _parse(date_from, "from") if date_from else None
        last = _parse(date_to, "to") if date_to else today
        if first is None:
            first = last
        if first > last:
            raise BadInput(
                N_("`from` ({first}) is after `to` ({last}); swap them."), first=first, last=last
            )
        if last > today:
            raise BadInput(
                N_("{last} is in the future for this station (today is {today} there)."),
                last=last,
                today=today,
            )
        if (last - first).days + 1 > MAX_SPAN_DAYS:
            raise BadInput(
                RANGE_TOO_LONG,
                days=(last - first).days + 1,
                most=MAX_SPAN_DAYS,
                first=unbroken(last - timedelta(days=MAX_SPAN_DAYS - 1)),
                last=unbroken(last),
            )
        return first, last
    days = PERIODS.get(period or "7d")
    if days is None:
        raise BadInput(N_("`period` must be one of {periods}."), periods=", ".join(PERIODS))
    return today - timedelta(days=days - 1), today
