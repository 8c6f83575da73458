"""The listener statistics answer: totals, days and countries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from . import coerce as c
from .parsing import require_object


@dataclass(frozen=True, slots=True)
class CountryCount:
    country: str | None
    iso: str | None
    value: int


@dataclass(frozen=True, slots=True)
class DayStats:
    day: date
    sessions: int = 0
    unique: int = 0


def _countries(value: Any, count_key: str) -> tuple[CountryCount, ...]:
    out: list[CountryCount] = []
    for entry in c.as_list(value):
        raw = c.mapping(entry)
        amount = c.integer(raw.get(count_key))
        if amount is None:
            continue
        iso = c.text(raw.get("country_iso"))
        out.append(CountryCount(c.text(raw.get("country")), iso.lower() if iso else None, amount))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Stats:
    """Listener statistics. ``days`` is kept as sent; use :meth:`days_between` for a range."""

    countries: tuple[CountryCount, ...] = ()
    countries_tlh: tuple[CountryCount, ...] = ()
    unique: tuple[CountryCount, ...] = ()
    days: tuple[DayStats, ...] = ()
    total_sessions: int | None = None
    total_unique: int | None = None
    total_tlh: int | None = None

    def days_between(self, first: date, last: date) -> tuple[DayStats, ...]:
        """Every day of the range once: days outside are dropped, missing days count as zero."""
        by_day: dict[date, DayStats] = {}
        for entry in self.days:
            if first <= entry.day <= last:
                seen = by_day.get(entry.day)
                if seen is None:
                    by_day[entry.day] = entry
                else:
                    by_day[entry.day] = DayStats(
                        entry.day, seen.sessions + entry.sessions, seen.unique + entry.unique
                    )
        span = (last - first).days
        return tuple(
            by_day.get(first + timedelta(days=i), DayStats(first + timedelta(days=i)))
            for i in range(span + 1)
        )

    @classmethod
    def parse(cls, payload: Any) -> Stats:
        raw = require_object(payload, "statistics")
        days: list[DayStats] = []
        for entry in c.as_list(raw.get("days")):
            item = c.mapping(entry)
            day = c.iso_date(item.get("date"))
            if day is None:
                continue
            days.append(
                DayStats(
                    day,
                    max(0, c.integer(item.get("cnt")) or 0),
                    max(0, c.integer(item.get("cnt_unique")) or 0),
                )
            )
        return cls(
            countries=_countries(raw.get("countries"), "cnt"),
            countries_tlh=_countries(raw.get("countries_tlh"), "tlh"),
            unique=_countries(raw.get("unique"), "uniq"),
            days=tuple(days),
            total_sessions=c.integer(raw.get("total_sessions")),
            total_unique=c.integer(raw.get("total_unique")),
            total_tlh=c.integer(raw.get("total_tlh")),
        )
