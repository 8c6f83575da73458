"""/stats never crowns a day counted so far, and its chart's labels never pile up: in every
language, with today (1.5 hours old, or with whole-day figures that read highest) last."""

from __future__ import annotations

from datetime import date, timedelta
from itertools import combinations

import pytest

from bot.render.chart import ChartText, busiest, chart_labels, render_stats_chart
from bot.render.lang_dates import chart_day, weekday_date
from bot.render.stats_embeds import stats_embed
from bot.station import DayStats, Stats
from bot.util.i18n import LANGUAGES, Translator

TODAY = date(2026, 11, 29)
YESTERDAY = TODAY - timedelta(days=1)


def week(*sessions: int) -> list[DayStats]:
    first = TODAY - timedelta(days=len(sessions) - 1)
    return [DayStats(first + timedelta(days=i), n, n // 2) for i, n in enumerate(sessions)]


def test_the_busiest_day_is_a_whole_one():
    assert busiest(week(300, 280, 350, 320, 310, 480, 520), today_last=True) == 5
    assert busiest(week(300, 280, 350, 320, 310, 480, 20), today_last=True) == 5
    assert busiest(week(300, 280, 350, 320, 310, 480, 520)) == 6  # a past range: all whole
    assert busiest(week(300, 520), today_last=True) is None  # one whole day: nothing to compare
    assert busiest(week(0, 0, 40), today_last=True) is None  # no sessions on a whole day
    assert busiest(week(500)) is None


@pytest.mark.parametrize("code", ["en", *LANGUAGES])
@pytest.mark.parametrize("today_count", [520, 20])  # reads highest / 1.5 hours old
def test_stats_names_yesterday_not_today_and_no_chart_label_overlaps(code, today_count):
    lang = Translator.load().lang(code)
    days = week(300, 280, 350, 320, 310, 480, today_count)
    first = days[0].day
    embed = stats_embed(
        Stats(days=tuple(days)), first, TODAY, "Main FM", chart_name=None, today=TODAY, lang=lang
    )
    assert lang.t("busiest day {day}", day=weekday_date(lang, YESTERDAY)) in str(embed.description)
    assert weekday_date(lang, TODAY) not in str(embed.description)
    labels = chart_labels(render_stats_chart(days, True, ChartText.of(lang)))
    texts = [text for _box, text in labels]
    assert lang.t("busiest: {day}").format(day=chart_day(lang, YESTERDAY)) in texts
    assert lang.t("today, so far") in texts
    for (one, a), (other, b) in combinations(labels, 2):
        apart = one[2] <= other[0] or other[2] <= one[0] or one[3] <= other[1] or other[3] <= one[1]
        assert apart, (a, one, b, other)
    for (x0, y0, x1, y1), text in labels:  # inside the 800 x 400 image
        assert 0 <= x0 < x1 <= 800, text
        assert 0 <= y0 < y1 <= 400, text
