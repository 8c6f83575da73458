"""The catalogs (issue 24): complete, nothing stale, the English placeholders, every plural form;
and the formats each language writes."""

from __future__ import annotations

import string
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from bot.runtime.commandlocale import DESCRIPTION_MAX
from bot.util.i18n import ENGLISH, LANGUAGES, LOCALES_DIR, Translator, language_of

ROOT = Path(__file__).resolve().parent.parent
KEYWORDS = {"t": None, "tn": (1, 2), "N_": None}
METHODS = [("bot/**.py", "python"), ("cogs/**.py", "python")]


def _used() -> dict[str, tuple[str, ...] | str]:
    """Every msgid in the code, as ``pybabel extract -F babel.cfg -k t -k tn:1,2`` finds it."""
    found: dict[str, tuple[str, ...] | str] = {}
    for _file, _line, message, _comments, _context in extract_from_dir(
        str(ROOT), METHODS, keywords=KEYWORDS
    ):
        key = message[0] if isinstance(message, tuple) else message
        found[key] = message
    return found


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


@pytest.fixture(scope="module")
def used() -> dict[str, tuple[str, ...] | str]:
    return _used()


@pytest.mark.parametrize("code", LANGUAGES)
def test_catalog_is_complete_current_and_keeps_placeholders(code, used):
    with (LOCALES_DIR / code / "LC_MESSAGES" / "onair.po").open("rb") as handle:
        catalog = read_po(handle, locale=code)
    entries = {m.id[0] if isinstance(m.id, tuple) else m.id: m for m in catalog if m.id}
    assert sorted(set(used) - set(entries)) == [], f"{code}: missing (run pybabel update)"
    assert sorted(set(entries) - set(used)) == [], f"{code}: stale (run pybabel update)"
    for key, message in entries.items():
        assert not message.fuzzy, f"{code}: fuzzy {key!r}"
        english = used[key]
        if isinstance(english, tuple):
            assert isinstance(message.id, tuple), f"{code}: {key!r} lost its plural"
            forms = list(message.string)
            assert len(forms) == catalog.num_plurals, f"{code}: plural forms of {key!r}"
            wanted = _fields(english[0]) | _fields(english[1])
        else:
            forms = [message.string]
            wanted = _fields(english)
        for form in forms:
            assert form, f"{code}: {key!r} untranslated"
            assert _fields(form) == wanted, f"{code}: placeholders of {key!r}: {form!r}"


def test_command_texts_fit_discords_limit(used):
    translator = Translator.load()
    command_texts = [
        "What is on air right now",
        "Every link to tune in",
        "Which station (default: this server's)",
        "This server's time zone, default station and language",
        "The language of OnAir's posts here (default: the server's own)",
    ]
    for code in LANGUAGES:
        for text in command_texts:
            assert text in used
            shown = translator.t(code, text)
            assert shown != text, (code, text)
            assert 1 <= len(shown) <= DESCRIPTION_MAX, (code, shown)


def test_languages_by_discord_locale():
    assert language_of("pt-BR") == "pt_BR"
    assert language_of("es-ES") == language_of("es-419") == "es"
    assert language_of("de") == "de"
    assert language_of("fr") == "fr"
    assert language_of("en-US") == language_of("ja") == language_of(None) == "en"


def test_formats_follow_the_language():
    translator = Translator.load()
    pt, de, fr = translator.lang("pt-BR"), translator.lang("de"), translator.lang("fr")
    one, many = "{name} · {count} listening", "{name} · {count} listening"
    assert pt.tn(one, many, 1234, name="X") == "X · 1.234 ouvintes"
    assert pt.tn(one, many, 1, name="X") == "X · 1 ouvinte"
    assert de.tn(one, many, 1234, name="X") == "X · 1.234 hören zu"
    assert fr.tn(one, many, 0, name="X") == "X · 0 auditeur"  # French: 0 is singular
    assert fr.number(1234) == "1\u202f234"
    assert ENGLISH.tn(one, many, 1234, name="X") == "X · 1,234 listening"
    assert de.ago(180) == "vor 3 Minuten"
    assert pt.ago(180) == "há 3 minutos"
    assert ENGLISH.t("Next: {title}", title="T") == "Next: T"
    assert translator.t("ja", "Next: {title}", title="T") == "Next: T"  # unknown: English
