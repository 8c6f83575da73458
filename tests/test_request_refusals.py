"""A station's refusal of a song request in the reader's language: the reasons the field notes
list, with what to do; any other quoted as the station's own words."""

from __future__ import annotations

import re

import pytest

from bot.errors import request_refused
from bot.util.i18n import ENGLISH, LANGUAGES, Translator
from bot.util.text import safe

# What stations send (field notes: already requested, played too recently, limit reached,
# requests off) and what a listener reads in English.
KNOWN = {
    "This song was played recently": (
        "**Main FM** played this song recently, so it can't be requested yet. Try another song."
    ),
    "This song has already been requested": (
        "This song is already waiting in **Main FM**'s requests. Try another song."
    ),
    "You can request 1 song per hour": (
        "**Main FM** has taken all the requests it allows for now. Try again later."
    ),
    "Request limit reached, please wait 15 minutes": (
        "**Main FM** has taken all the requests it allows for now. Try again in 15 minutes."
    ),
    "Song requests are disabled": "**Main FM** is not taking song requests right now.",
}
LANGS = Translator.load()


@pytest.mark.parametrize(("reason", "english"), KNOWN.items())
def test_a_reason_the_field_notes_list_is_said_in_english_with_a_next_step(reason, english):
    assert request_refused("Main FM", reason).said_in(ENGLISH) == english


@pytest.mark.parametrize("code", LANGUAGES)
@pytest.mark.parametrize("reason", list(KNOWN))
def test_a_known_reason_is_said_in_the_readers_language_not_the_stations(code, reason):
    said = request_refused("Main FM", reason).said_in(LANGS.lang(code))
    assert reason not in said
    assert said.endswith("."), said
    assert "**Main FM**" in said
    english = KNOWN[reason]
    assert said != english


@pytest.mark.parametrize("code", ["en", *LANGUAGES])
def test_any_other_reason_is_quoted_as_the_stations_own_words_escaped_and_bounded(code):
    lang = LANGS.lang(code)
    hostile = "Requests from this *region* are paused until Friday @everyone " + "x" * 400
    reason = safe(hostile, limit=200)
    said = request_refused("Main FM", reason).said_in(lang)
    assert reason in said  # as the station put it, markdown escaped
    assert "\\*region\\*" in said
    assert "@everyone" not in said
    assert len(said) < 400
    assert re.search(r"[“«„]\s?" + re.escape(reason[:20]), said), said  # in quotes
    no_reason = request_refused("Main FM", None).said_in(lang)
    assert no_reason.endswith(".")
