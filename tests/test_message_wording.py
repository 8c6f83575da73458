"""Wording that read wrong once the values were in (issue 32): the German /history search title,
the recap's live show aired once, and a suggested date that broke across lines."""

from __future__ import annotations

import re
from datetime import date

import pytest

from bot.errors import BadInput
from bot.inputs.ranges import stats_range
from bot.render.ranking import counted
from bot.util.i18n import Translator


@pytest.fixture(scope="module")
def langs() -> Translator:
    return Translator.load()


def test_the_german_search_title_says_matches_not_played_with(langs):
    title = langs.lang("de").t('Plays matching "{words}" ({name})', words="castell", name="X")
    assert title == "Gespielte Titel zu „castell“ (X)"


def test_a_live_show_aired_once_reads_as_german_writes_it(langs):
    german = langs.lang("de")
    assert counted("airings", 1, german) == "1× gesendet"
    assert counted("airings", 3, german) == "3× gesendet"
    assert counted("plays", 1, german) == "1× gespielt"  # the same form as the tracks'


def test_a_suggested_range_cannot_break_inside_a_date_and_pastes_back(langs):
    with pytest.raises(BadInput) as refused:
        stats_range(None, "2021-01-01", None, today=date(2026, 11, 29))
    for code in ("en", "pt_BR", "de", "es", "fr"):
        text = refused.value.said_in(langs.lang(code))
        (example,) = re.findall(r"`from:[^`]+`", text)
        # After every hyphen a word joiner: no line break opportunity inside a date.
        assert re.fullmatch(r"`from:(\d+(-\u2060\d+){2}) to:(\d+(-\u2060\d+){2})`", example)
    # What a reader copies from the suggestion is read as the date it shows.
    pasted = "2025-\u206011-\u206030"
    assert stats_range(None, pasted, None, today=date(2026, 11, 29))[0] == date(2025, 11, 30)
