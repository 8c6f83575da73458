"""Short dates, ranges, weekdays and percentages as each language writes them (CLDR through
Babel), for /stats, its chart and the weekly recap. English keeps OnAir's own formats, byte for
byte ("24 Nov 2026", "Fri 20 Nov, 19:01"); the others use CLDR's skeletons ("24. Nov. 2026",
"sex., 20 de nov., 19:01"), never an English pattern with translated words."""

from __future__ import annotations

from datetime import date, datetime

from babel.dates import format_interval, format_skeleton, get_day_names
from babel.numbers import format_compact_decimal, format_decimal, format_percent

from ..util.i18n import Lang


def full_date(lang: Lang, day: date) -> str:
    """``24 Nov 2026`` / ``24 de nov. de 2026``."""
    if lang.is_english:
        return f"{day:%d %b %Y}"
    return format_skeleton("yMMMd", day, locale=lang.locale)


def date_range(lang: Lang, first: date, last: date) -> str:
    """``19 Nov – 25 Nov 2026`` / ``19.–25. Nov. 2026`` (CLDR's interval: no repeated month)."""
    if lang.is_english:
        return f"{first:%d %b} – {last:%d %b %Y}"
    return format_interval(first, last, "yMMMd", locale=lang.locale)


def weekday_date(lang: Lang, day: date) -> str:
    """``Fri 20 Nov`` / ``Fr., 20. Nov.``."""
    if lang.is_english:
        return f"{day:%a} {day.day} {day:%b}"
    return format_skeleton("MMMEd", day, locale=lang.locale)


def weekday_date_padded(lang: Lang, day: date) -> str:
    """/stats' busiest day: ``Fri 06 Nov`` in English (as it always was), else CLDR's."""
    if lang.is_english:
        return f"{day:%a %d %b}"
    return weekday_date(lang, day)


def weekday_time(lang: Lang, moment: datetime) -> str:
    """``Fri 20 Nov, 19:01``: short enough for a phone's inline field."""
    return f"{weekday_date(lang, moment)}, {moment:%H:%M}"


def chart_day(lang: Lang, day: date) -> str:
    """A chart's day label, short enough for five under a phone-sized chart: ``Nov 20`` /
    ``20.11.`` / ``20/11`` (CLDR's numeric day and month)."""
    if lang.is_english:
        return f"{day:%b} {day.day}"
    return format_skeleton("Md", day, locale=lang.locale)


def country(lang: Lang, iso: str | None, named: str | None) -> str | None:
    """A country's name in the language (CLDR's, by ISO code); English keeps the station's."""
    if lang.is_english or not iso:
        return named
    return lang.locale.territories.get(iso.upper()) or named


def weekday_name(lang: Lang, weekday: int, english: str) -> str:
    """The whole weekday (0 = Monday); ``english`` is OnAir's own word for it."""
    if lang.is_english:
        return english
    return str(get_day_names("wide", locale=lang.locale)[weekday])


def percent(lang: Lang, share: float) -> str:
    """``42%`` / ``42 %``."""
    if lang.is_english:
        return f"{share:.0%}"
    return format_percent(share, locale=lang.locale)


def axis_number(lang: Lang, value: float) -> str:
    """A chart's y tick: ``1.5k`` / ``1,5 mil`` / ``1.500`` (German writes thousands out)."""
    if lang.is_english:
        return f"{value / 1000:g}k" if value >= 1000 else f"{value:g}"
    if value >= 1000:
        short = format_compact_decimal(value, locale=lang.locale, fraction_digits=1)
        if any(c.isalpha() for c in short):
            return short
    return format_decimal(value, locale=lang.locale)
