"""Short dates, ranges, weekdays and percentages as each language writes them (CLDR through
Babel, in the language's format locale: ``Lang.locale``), for /stats, its chart and the weekly
recap: "24 Nov 2026", "24. Nov. 2026", "24 de nov. de 2026"; never an English pattern with
translated words."""

from __future__ import annotations

from datetime import date, datetime

from babel.dates import format_date, format_interval, format_skeleton, get_day_names
from babel.numbers import format_compact_decimal, format_decimal, format_percent

from ..util.i18n import N_, Lang

# A chart's day label as a CLDR pattern each catalog gives (its language's numeric day and
# month: "d.M.", "dd/MM"); OnAir's English names the month.
CHART_DAY_PATTERN = N_("MMM d")


def full_date(lang: Lang, day: date) -> str:
    """``24 Nov 2026`` / ``24 de nov. de 2026``."""
    return format_skeleton("yMMMd", day, locale=lang.locale)


def date_range(lang: Lang, first: date, last: date) -> str:
    """``19–25 Nov 2026`` / ``19.–25. Nov. 2026`` (CLDR's interval: no repeated month)."""
    return format_interval(first, last, "yMMMd", locale=lang.locale)


def weekday_date(lang: Lang, day: date) -> str:
    """``Fri 20 Nov`` / ``Fr., 20. Nov.``."""
    return format_skeleton("MMMEd", day, locale=lang.locale)


def weekday_time(lang: Lang, moment: datetime) -> str:
    """``Fri 20 Nov, 19:01``: short enough for a phone's inline field."""
    return f"{weekday_date(lang, moment)}, {moment:%H:%M}"


def chart_day(lang: Lang, day: date) -> str:
    """A chart's day label, short enough for five under a phone-sized chart: ``Nov 20`` /
    ``20.11.`` / ``20/11``."""
    return format_date(day, lang.t(CHART_DAY_PATTERN), locale=lang.locale)


def country(lang: Lang, iso: str | None, named: str | None) -> str | None:
    """A country's name in the language (CLDR's, by ISO code); else the station's own."""
    if not iso:
        return named
    return lang.locale.territories.get(iso.upper()) or named


def weekday_name(lang: Lang, weekday: int) -> str:
    """The whole weekday (0 = Monday)."""
    return str(get_day_names("wide", locale=lang.locale)[weekday])


def percent(lang: Lang, share: float) -> str:
    """``42%`` / ``42 %``."""
    return format_percent(share, locale=lang.locale)


def axis_number(lang: Lang, value: float) -> str:
    """A chart's y tick: ``1.5K`` / ``1,5 mil`` / ``1.500`` (German writes thousands out)."""
    if value >= 1000:
        short = format_compact_decimal(value, locale=lang.locale, fraction_digits=1)
        if any(c.isalpha() for c in short):
            return short
    return format_decimal(value, locale=lang.locale)
