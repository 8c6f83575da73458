"""/onair status names the announcement modes in the reader's language, and German says
"Ansage" for an announcement everywhere (one term per idea)."""

from __future__ import annotations

import re

import pytest

from bot.render import admin_embeds
from bot.storage import Subscription
from bot.util.i18n import LANGUAGES, Translator

LANGS = Translator.load()


def _status_line(mode: str, code: str) -> str:
    sub = Subscription(1, 7, 42, "main", mode=mode)
    embed = admin_embeds.status([], lambda _s: None, [sub], {}, lang=LANGS.lang(code))
    (field,) = [f for f in embed.fields if f.value and "<#42>" in f.value]
    return str(field.value)


@pytest.mark.parametrize("code", LANGUAGES)
def test_status_names_the_announcement_modes_in_the_readers_language(code):
    lang = LANGS.lang(code)
    for mode in ("post", "card"):
        line = _status_line(mode, code)
        assert line == f"🟢 <#42> ({lang.t(mode)})"
        assert lang.t(mode) != mode or (code == "fr" and mode == "post"), line
    assert _status_line("post", "en") == "🟢 <#42> (post)"  # English as before


def test_german_says_ansage_for_an_announcement_everywhere():
    with open("bot/locales/de/LC_MESSAGES/onair.po", encoding="utf-8") as catalog:
        text = catalog.read()
    assert not re.search(r"[Aa]nkündig|angekündigt", text)
    assert "Ansage" in text
