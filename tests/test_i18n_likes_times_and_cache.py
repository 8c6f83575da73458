"""In OnAir's other languages: the ❤ click answers, /join's permission names (the refusal end to
end is in test_i18n_voice_status), the words of a typed /history time, every listener command's
descriptions, and the cache of each guild's language. End to end through the real discord.py
client against the fake Discord, and the pieces alone where every form of a language is
checked."""

from __future__ import annotations

import asyncio
import re
import sqlite3
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot import errors
from bot.catalog.languages import GuildLanguages
from bot.errors import BadInput, PermissionNames
from bot.inputs.moments import MAX_TEXT, parse_moment
from bot.render.community import like_answer
from bot.runtime.commandlocale import DESCRIPTION_MAX
from bot.simulator import TRACKS
from bot.storage.models import GuildSettings
from bot.storage.sqlite import SqliteStorage
from bot.util.i18n import DISCORD_LOCALES, ENGLISH, Translator, language_of

from .support.botenv import running_bot
from .support.discord_rules import EPHEMERAL
from .test_community_bot import both_guilds, click, fake, posts, programme_sim
from .test_i18n_bot import english_left, worded_in_each

pytestmark = pytest.mark.e2e
__all__ = ["fake", "programme_sim"]  # test_community_bot's fixtures, used here too

ADMIN_COMMANDS = {"onair", "stats"}  # their texts are the admin and stats work's
LOCALES = set(DISCORD_LOCALES)


@pytest.fixture(scope="module")
def translator() -> Translator:
    return Translator.load()


# ❤ ------------------------------------------------------------------------------------------


async def test_a_german_listener_clicking_like_reads_german(programme_sim, fake, tmp_path):
    fake.callback_window = 3.0
    db = str(tmp_path / "onair.sqlite3")
    async with running_bot(programme_sim, fake=fake, extra_config=both_guilds(fake), db_path=db):
        await fake.wait_for(lambda: len(posts(fake, 0)) == 1 and len(posts(fake, 1)) == 1)
        first = int(posts(fake, 0)[0].response["id"])
        second = int(posts(fake, 1)[0].response["id"])
        title = TRACKS[0].title
        fake.user_locales[1001] = "de"
        fake.user_locales[1002] = "pt-BR"

        answer = (await click(fake, first, user_id=1001))["data"]
        assert answer["flags"] & EPHEMERAL
        assert answer["content"] == (
            f"Dir gefällt *{title}*! Zum Zurücknehmen nochmal klicken. Bisher gefällt er nur dir."
        )
        answer = (await click(fake, second, user_id=1002))["data"]
        assert answer["content"] == (
            f"Você curtiu *{title}*! Clique de novo para desfazer. Agora 2 ouvintes curtem essa."
        )
        assert english_left(answer["content"], "pt_BR", (title,)) == []
        answer = (await click(fake, first, user_id=1001))["data"]
        assert answer["content"] == f"„Gefällt mir“ für *{title}* zurückgenommen."
        assert english_left(answer["content"], "de", (title,)) == []

        # An English listener reads the English, byte for byte.
        fake.user_locales[1003] = "en-US"
        answer = (await click(fake, first, user_id=1003))["data"]
        assert answer["content"] == (
            f"Liked *{title}*: click again to undo. 2 listeners like it now."
        )


def test_like_answers_in_every_language_keep_the_title_and_the_count(translator):
    for code in ("es", "pt_BR", "de", "fr"):
        lang = translator.lang(code)
        text = like_answer(True, "Song", 1234, lang)
        assert "*Song*" in text
        assert lang.number(1234) in text
        assert lang.number(1234) != "1,234"
        assert english_left(text, code, ("Song",)) == []
        for liked, count in ((True, 1), (False, 3)):
            assert english_left(like_answer(liked, "Song", count, lang), code, ("Song",)) == []
            assert english_left(like_answer(liked, None, count, lang), code) == []
    assert like_answer(True, "Song", 1234) == (
        "Liked *Song*: click again to undo. 1,234 listeners like it now."
    )


# /join's permission names ------------------------------------------------------------------


def test_permission_names_are_discords_own_in_each_language(translator):
    both = PermissionNames([errors.VIEW_CHANNEL, errors.CONNECT])
    assert both.said_in(ENGLISH) == "**View Channel and Connect** permissions"
    assert PermissionNames([errors.SPEAK]).said_in(ENGLISH) == "**Speak** permission"
    three = PermissionNames([errors.VIEW_CHANNEL, errors.CONNECT, errors.SPEAK])
    assert three.said_in(ENGLISH) == "**View Channel, Connect and Speak** permissions"
    expected = {
        "de": "die Berechtigungen **Kanal ansehen und Verbinden**",
        "pt_BR": "as permissões **Ver canal e Conectar**",
        "es": "los permisos **Ver canal y Conectar**",
        "fr": "les permissions **Voir le salon et Se connecter**",
    }
    worded_in_each(translator, expected, both.said_in)
    assert PermissionNames([errors.SPEAK]).said_in(translator.lang("fr")) == (
        "la permission **Parler**"
    )


# Command descriptions ----------------------------------------------------------------------


async def test_every_listener_command_carries_its_localisations(onair):
    """Every description and choice name of every non-admin command, in every locale OnAir
    sends, within Discord's 100; names stay English."""
    seen = 0

    def check(path: str, node: dict) -> None:
        nonlocal seen
        localised = node.get("description_localizations") or {}
        assert set(localised) == LOCALES, path
        for locale, text in localised.items():
            assert 1 <= len(text) <= DESCRIPTION_MAX, (path, locale)
            assert text != node["description"], (path, locale)
        assert not node.get("name_localizations"), path
        seen += 1
        for choice in node.get("choices") or []:
            names = choice.get("name_localizations") or {}
            assert set(names) == LOCALES, (path, choice["name"])
            assert all(1 <= len(n) <= DESCRIPTION_MAX for n in names.values())
        for option in node.get("options") or []:
            check(f"{path} {option['name']}", option)

    commands = [c for c in onair.fake.commands if c["name"] not in ADMIN_COMMANDS]
    assert {c["name"] for c in commands} >= {"nowplaying", "listen", "join", "history", "top"}
    for command in commands:
        check(command["name"], command)
    assert seen >= 2 * len(commands)
    at = next(o for o in onair.fake._command("history")["options"] if o["name"] == "at")
    assert "ontem 22:10" in at["description_localizations"]["pt-BR"]
    assert "gestern 22:10" in at["description_localizations"]["de"]


# Typed /history times ----------------------------------------------------------------------

ZONE = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 11, 25, 21, 0, tzinfo=ZONE)
YESTERDAY_20 = datetime(2026, 11, 24, 20, 0, 59, tzinfo=ZONE)


@pytest.mark.parametrize(
    "typed",
    [
        "yesterday 20:00",
        "ayer 20:00",
        "ayer a las 20:00",
        "Ontem 20:00",
        "ontem às 20:00",
        "ontem 20h",
        "gestern 20:00",
        "gestern um 20 Uhr",
        "gestern 20.00 Uhr",
        "hier 20h",
        "hier à 20h00",
        "HIER 20 h 00",
        "24/11/2026 20:00",
        "24.11.2026 20:00",
        "2026-11-24 20:00",
        "yesterday 8:00 pm",
    ],
)
def test_a_typed_time_is_read_in_each_language(typed):
    assert parse_moment(typed, NOW, day_first=True) == YESTERDAY_20


def test_other_days_and_words():
    assert parse_moment("anteontem 9h30", NOW).date() == NOW.date() - timedelta(days=2)
    assert parse_moment("avant-hier 9h", NOW).date() == NOW.date() - timedelta(days=2)
    assert parse_moment("aujourd’hui 14h", NOW) == NOW.replace(hour=14, minute=0, second=59)
    assert parse_moment("heute 14:32", NOW) == NOW.replace(hour=14, minute=32, second=59)
    assert parse_moment("hoy 14.32", NOW) == NOW.replace(hour=14, minute=32, second=59)


@pytest.mark.parametrize(
    "typed",
    ["20", "ontem às", "amanhã 20:00", "24/11/2026 20:00", "x" * (MAX_TEXT + 1), "gestern 20:00x"],
)
def test_what_is_not_a_time_is_refused_politely(typed):
    """Unreadable (a day-first date only for a reader whose language writes one)."""
    with pytest.raises(BadInput) as caught:
        parse_moment(typed, NOW)
    assert "couldn't read that time" in caught.value.message


def test_a_day_first_date_that_does_not_exist_is_said_so(translator):
    with pytest.raises(BadInput) as caught:
        parse_moment("31/02/2026 20:00", NOW, day_first=True)
    assert caught.value.message == "31/02/2026 is not a real date."
    assert caught.value.said_in(translator.lang("de")) == "Den 31/02/2026 gibt es nicht."


def test_hostile_input_is_refused_before_any_regex_work():
    """Inputs that make a careless pattern backtrack: refused (or read) at once; the text is
    cut to MAX_TEXT before the one pass of bounded pieces."""
    for evil in ("1" * 64, "a " * 32, "ayer " * 12, "12:" * 21, "à " * 32, "9" * 10_000):
        with pytest.raises(BadInput):
            parse_moment(evil, NOW, day_first=True)


@pytest.mark.parametrize(
    ("locale", "typed", "lead"),
    [("pt-BR", "ontem às 20:00", "Em "), ("de", "gestern um 20 Uhr", "Am ")],
)
async def test_history_reads_a_time_typed_in_the_users_language(onair, locale, typed, lead):
    fake = onair.fake
    fake.user_locales[fake.owner_id] = locale
    station = onair.bot.registry.station("main")
    assert station is not None
    zone = station.timezone
    before = datetime.now(zone)
    message = await fake.final_message(await fake.slash("history", {"at": typed}))
    after = datetime.now(zone)
    assert not (message.get("flags") or 0) & EPHEMERAL  # an answer, not the "can't read" error
    description = message["embeds"][0]["description"]
    found = re.search(rf"^{lead}<t:(\d+):f>:", description)
    assert found, description
    expected = {
        datetime.combine(day.date() - timedelta(days=1), YESTERDAY_20.time(), tzinfo=zone)
        for day in (before, after)  # the same day unless the call spans midnight
    }
    assert int(found[1]) in {int(e.timestamp()) for e in expected}
    assert english_left(description, language_of(locale), ("Main FM",)) == []


# The guild's language, cached ---------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_a_guilds_language_is_read_once_per_ttl_and_forgotten_on_change(storage):
    clock = Clock()
    languages = GuildLanguages(storage, clock=clock, ttl=60.0, size=3)
    await storage.save_guild_settings(GuildSettings(1, language="pt_BR"))
    assert await languages.stored(1) == "pt_BR"
    assert await languages.stored(1) == "pt_BR"
    assert languages.reads == 1
    # Another process changes it: seen once the TTL has passed.
    await storage.save_guild_settings(GuildSettings(1, language="de"))
    clock.now += 59.0
    assert await languages.stored(1) == "pt_BR"
    clock.now += 1.0
    assert await languages.stored(1) == "de"
    assert languages.reads == 2
    # Changed here: forgotten at once.
    await storage.save_guild_settings(GuildSettings(1, language="fr"))
    languages.forget(1)
    assert await languages.stored(1) == "fr"
    # Bounded: the least recently used guild goes first.
    for guild in (2, 3, 4):
        assert await languages.stored(guild) == ""
    assert len(languages) == 3
    reads = languages.reads
    assert await languages.stored(4) == ""
    assert languages.reads == reads
    assert await languages.stored(1) == "fr"
    assert languages.reads == reads + 1


async def test_a_read_that_began_before_a_change_is_not_kept(storage):
    """A post reads the language while /onair settings changes it: the old value read is used
    once, not cached for the TTL."""
    languages = GuildLanguages(storage, clock=Clock())
    await storage.save_guild_settings(GuildSettings(1, language="pt_BR"))
    reading = asyncio.create_task(languages.stored(1))
    await asyncio.sleep(0)  # one turn of the loop: the task runs to its storage read, and waits
    assert languages.reads == 1
    assert not reading.done()
    languages.forget(1)  # (what /onair settings does once it has saved)
    assert await reading == "pt_BR"
    assert len(languages) == 0
    await storage.save_guild_settings(GuildSettings(1, language="de"))
    assert await languages.stored(1) == "de"


async def test_settings_language_is_seen_by_the_next_public_post_at_once(onair):
    fake = onair.fake
    guild_id = fake.guilds[0].id
    bot = onair.bot
    assert (await bot.guild_lang(guild_id)).code == "en"
    reads = bot.languages.reads
    for _ in range(5):
        assert (await bot.guild_lang(guild_id)).code == "en"
    assert bot.languages.reads == reads  # one post after another: no storage read each
    await fake.response(await fake.slash("onair", {"language": "pt_BR"}, sub=["settings"]))
    assert (await bot.guild_lang(guild_id)).code == "pt_BR"


async def test_a_storage_fault_during_the_lookup_gives_the_last_known_language_or_none(tmp_path):
    """The database fails while a post asks for its guild's language (the table is gone to
    this connection: SQLite's 'no such table', a storage error): the post goes on in the
    language last read, or Discord's / English for a guild never read; nothing is raised (an
    event claimed before the lookup would otherwise never be created)."""
    storage = await SqliteStorage(str(tmp_path / "onair.sqlite3")).open()
    try:
        clock = Clock()
        languages = GuildLanguages(storage, clock=clock, ttl=60.0)
        await storage.save_guild_settings(GuildSettings(1, language="de"))
        assert await languages.stored(1) == "de"
        clock.now += 61.0  # past the TTL: the next lookup reads storage again
        outside = sqlite3.connect(tmp_path / "onair.sqlite3")
        outside.execute("ALTER TABLE guild_settings RENAME TO guild_settings_away")
        outside.commit()
        assert await languages.stored(1) == "de"
        assert await languages.stored(2) == ""
        outside.execute("ALTER TABLE guild_settings_away RENAME TO guild_settings")
        outside.commit()
        outside.close()
        await storage.save_guild_settings(GuildSettings(1, language="fr"))
        assert await languages.stored(1) == "fr"  # back: read again, not the stale one kept
    finally:
        await storage.close()
