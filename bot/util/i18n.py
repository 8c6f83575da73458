"""Translations: gettext catalogs (``bot/locales/<lang>/LC_MESSAGES/onair.po``) and CLDR formats.

English is the source text and the fallback: a message missing from a catalog reads as the
English. The ``.po`` files are read with Babel's ``read_po`` when the bot starts (in a worker
thread: :meth:`Translator.load`), so there is no compiled ``.mo`` to forget to rebuild. Plural
rules are the catalog's ``Plural-Forms`` (written by Babel from CLDR); numbers, dates and
durations come from Babel's CLDR data ("1.234", "vor 3 Minuten").

Text is looked up by its English msgid with *named* placeholders (``{title}``), formatted after
translation: a translator moves a placeholder, and never sees a sentence built from fragments.
Extraction (``pybabel extract``, babel.cfg) finds ``t("…")``, ``tn("…", "…", n)`` and ``N_("…")``.
"""

from __future__ import annotations

import gettext
from collections.abc import Callable, Mapping
from datetime import date, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

from babel import Locale
from babel.dates import format_date, format_timedelta
from babel.messages.pofile import read_po
from babel.numbers import format_decimal

DOMAIN = "onair"
LOCALES_DIR = Path(__file__).resolve().parent.parent / "locales"
ENGLISH_CODE = "en"
# Catalog languages (English is the source). Spanish serves both of Discord's Spanish locales.
LANGUAGES = ("es", "pt_BR", "de", "fr")
# Discord locale -> catalog language (the locales a command's localisations are sent for).
DISCORD_LOCALES: Mapping[str, str] = {
    "es-ES": "es",
    "es-419": "es",
    "pt-BR": "pt_BR",
    "de": "de",
    "fr": "fr",
}
# What /onair settings language: offers: code -> the language's own name.
LANGUAGE_NAMES: Mapping[str, str] = {
    "en": "English",
    "es": "Español",
    "pt_BR": "Português (Brasil)",
    "de": "Deutsch",
    "fr": "Français",
}

# The CLDR locale a language's numbers, dates and lists are written in, where it is not the
# language's own code: OnAir's English writes them as British English does ("24 Nov 2026",
# "Fri 20 Nov", "A, B and C").
FORMAT_LOCALES: Mapping[str, str] = {ENGLISH_CODE: "en_GB"}

Entry = str | tuple[str, ...]


def N_(message: str) -> str:
    """Marks a constant for extraction; it is translated where it is shown."""
    return message


# Messages that are CLDR patterns, so that each catalog (English's are the msgids) gives its
# language's own: the full date of /recent's day lines (letters are fields, quoted text is
# literal), and how a count in a sentence is written (``#,##0`` groups the thousands).
DAY_PATTERN = N_("EEEE d MMMM")
COUNT_PATTERN = N_("#0")


def language_of(locale: object) -> str:
    """The catalog language for a Discord locale ("pt-BR", a ``discord.Locale``), a catalog code
    ("pt_BR") or None: English when OnAir does not speak it."""
    text = str(getattr(locale, "value", locale) or "")
    if text in DISCORD_LOCALES:
        return DISCORD_LOCALES[text]
    if text in LANGUAGES:
        return text
    base = text.replace("_", "-").split("-")[0]
    return base if base in LANGUAGES else ENGLISH_CODE


def _english_plural(n: int) -> int:
    return 0 if n == 1 else 1


class Lang:
    """One language: its messages and its formats. Immutable once built; shared by every
    render in that language."""

    def __init__(
        self,
        code: str,
        messages: Mapping[object, Entry] | None = None,
        plural: Callable[[int], int] = _english_plural,
    ) -> None:
        self.code = code
        self._messages = dict(messages or {})
        self._plural = plural

    @cached_property
    def locale(self) -> Locale:
        """Where Babel reads the language's formats (CLDR): numbers, dates, lists, names."""
        return Locale.parse(FORMAT_LOCALES.get(self.code, self.code))

    @cached_property
    def reads_day_first(self) -> bool:
        """Whether a date typed as "20/11" is unambiguous: the language writes the day before
        the month (CLDR's short date of the language itself: English's "M/d/yy" is not)."""
        pattern = str(Locale.parse(self.code).date_formats["short"].pattern)
        return pattern.find("d") < pattern.find("M")

    def t(self, msgid: str, /, **values: object) -> str:
        """The message in this language (English when missing), its placeholders filled."""
        found = self._messages.get(msgid)
        text = found if isinstance(found, str) and found else msgid
        return text.format(**values) if values else text

    def tn(self, singular: str, plural: str, n: int, /, **values: object) -> str:
        """The plural form for ``n``; ``{count}`` is ``n`` formatted for the language."""
        values.setdefault("count", self.number(n))
        found = self._messages.get(singular)
        if isinstance(found, tuple) and all(found):
            index = min(self._plural(n), len(found) - 1)
            text = found[index]
        else:
            text = singular if _english_plural(n) == 0 else plural
        return text.format(**values)

    def number(self, n: int | float) -> str:
        """1,234 / 1.234 / 1 234, as the language writes it."""
        return format_decimal(n, locale=self.locale)

    def count(self, n: int) -> str:
        """A count in a sentence, in the language's pattern for counts: "1440 minutes" (OnAir's
        English groups no digits there), "1.440 Minuten"."""
        return format_decimal(n, self.t(COUNT_PATTERN), locale=self.locale)

    def ago(self, seconds: float) -> str:
        """How long ago, in words: "3 minutes ago", "vor 3 Minuten", "há 3 minutos"."""
        return format_timedelta(
            timedelta(seconds=-abs(seconds)), add_direction=True, locale=self.locale
        )

    def day(self, value: date) -> str:
        """A date as the language writes it in full ("Tuesday 25 November", "terça-feira, 25 de
        novembro de 2026"): a CLDR pattern that is itself a message, so each catalog words it."""
        return format_date(value, self.t(DAY_PATTERN), locale=self.locale)


ENGLISH = Lang(ENGLISH_CODE)


def read_catalog(path: Path, code: str) -> Lang:
    """One ``.po`` file as a :class:`Lang` (blocking: file and parse; run it in a worker)."""
    with path.open("rb") as handle:
        catalog = read_po(handle, locale=code, domain=DOMAIN)
    messages: dict[object, Entry] = {}
    for message in catalog:
        if not message.id or message.fuzzy:
            continue
        key = message.id[0] if isinstance(message.id, tuple) else message.id
        value = message.string
        messages[key] = tuple(value) if isinstance(value, list | tuple) else str(value or "")
    plural = gettext.c2py(catalog.plural_expr)
    return Lang(code, messages, plural)


class Translator:
    """Every language OnAir speaks, looked up by Discord locale or catalog code. Built once at
    start (:meth:`load`) and handed to whatever renders text: no global state."""

    def __init__(self, languages: Mapping[str, Lang] | None = None) -> None:
        self._languages = dict(languages or {})

    @classmethod
    def load(cls, directory: Path = LOCALES_DIR) -> Translator:
        """Read every catalog (blocking: call it with ``asyncio.to_thread``)."""
        found: dict[str, Lang] = {}
        for code in LANGUAGES:
            path = directory / code / "LC_MESSAGES" / f"{DOMAIN}.po"
            if path.is_file():
                found[code] = read_catalog(path, code)
        return cls(found)

    def lang(self, locale: object) -> Lang:
        return self._languages.get(language_of(locale), ENGLISH)

    def t(self, locale: object, msgid: str, /, **values: object) -> str:
        return self.lang(locale).t(msgid, **values)

    def tn(self, locale: object, singular: str, plural: str, n: int, /, **values: object) -> str:
        return self.lang(locale).tn(singular, plural, n, **values)

    def number(self, locale: object, n: int | float) -> str:
        return self.lang(locale).number(n)

    def ago(self, locale: object, seconds: float) -> str:
        return self.lang(locale).ago(seconds)


async def guild_lang(client: Any, guild_id: int) -> Lang:
    """The guild's language for public text (``OnAirBot.guild_lang``); English for a client
    that keeps none (a bare discord.py client)."""
    lookup = getattr(client, "guild_lang", None)
    return await lookup(guild_id) if lookup is not None else ENGLISH
