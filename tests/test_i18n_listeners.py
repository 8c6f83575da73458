"""The listener commands past /nowplaying and /listen in a user's language (issue 24, second
part), end to end: the real discord.py client against the fake Discord, a user whose Discord is
in pt-BR or de, and the English-left detector of test_i18n_bot on every reply. English users
keep the exact English (the commands' own tests assert it)."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

import pytest

from bot.render.station_embeds import day_heading
from bot.util.i18n import ENGLISH, Translator, language_of

from .support.discord_rules import EPHEMERAL
from .test_i18n_bot import english_left, visible_text

pytestmark = pytest.mark.e2e


def station_words(onair: Any) -> tuple[str, ...]:
    """The station's own text (titles, artists, albums, its name): never translated."""
    info = onair.bot.registry.clients["main"].last_info
    own: list[str] = ["Main FM"]
    if info is not None:
        own += [info.description or "", info.genre or "", info.name or ""]
        for item in info.recent:
            own += [item.title or "", item.track_title or "", *item.artist_and_title]
        play = info.current_play()
        if play is not None:
            own += [play.title or "", play.artist or "", play.album or ""]
    return tuple(sorted({w for w in own if w}, key=len, reverse=True))


def test_day_lines_are_written_as_the_language_writes_a_date():
    translator = Translator.load()
    day = date(2026, 11, 24)
    assert day_heading(day) == "──\u00a0Tuesday 24 November, station time\u00a0──"
    assert day_heading(day, ENGLISH) == day_heading(day)
    assert day_heading(day, translator.lang("pt-BR")) == (
        "──\u00a0terça-feira, 24 de novembro de 2026, horário da rádio\u00a0──"
    )
    german = "──\u00a0Dienstag, 24. November 2026, Senderzeit\u00a0──"
    assert day_heading(day, translator.lang("de")) == german


@pytest.mark.parametrize(
    ("locale", "recent_title", "nothing", "bad_time"),
    [
        ("pt-BR", "Tocadas recentemente na Main FM", "Nada encontrado no histórico.", "horário"),
        ("de", "Zuletzt gespielt auf Main FM", "Im Verlauf nichts gefunden.", "Uhrzeit"),
    ],
)
async def test_recent_and_history_in_the_users_language(
    onair, locale, recent_title, nothing, bad_time
):
    fake = onair.fake
    code = language_of(locale)
    fake.user_locales[fake.owner_id] = locale

    message = await fake.final_message(await fake.slash("recent"))
    embed = message["embeds"][0]
    assert embed["title"] == recent_title
    assert "▶" in embed["footer"]["text"]
    assert "tracks" not in embed["footer"]["text"]
    assert english_left(visible_text(message), code, station_words(onair)) == []

    message = await fake.final_message(await fake.slash("history", {"search": "zzqqxx"}))
    embed = message["embeds"][0]
    assert nothing in embed["description"]
    assert embed["title"].endswith(('"zzqqxx" (Main FM)', "„zzqqxx“ (Main FM)"))
    assert english_left(visible_text(message), code, (*station_words(onair), "zzqqxx")) == []

    message = await fake.final_message(await fake.slash("history"))
    assert english_left(visible_text(message), code, station_words(onair)) == []

    reply = await fake.final_message(await fake.slash("history", {"at": "25:99"}))
    assert reply["flags"] & EPHEMERAL
    assert bad_time in reply["content"]
    assert english_left(reply["content"], code) == []

    # An English user right after reads the English, byte for byte.
    fake.user_locales[fake.owner_id] = "en-US"
    message = await fake.final_message(await fake.slash("recent"))
    assert message["embeds"][0]["title"] == "Recently played on Main FM"
    assert message["embeds"][0]["footer"]["text"].endswith(" recent tracks · ▶ on air now")


async def test_recent_and_history_descriptions_are_localised(onair):
    for name in ("recent", "history"):
        command = onair.fake._command(name)
        assert set(command["description_localizations"]) == {"es-ES", "es-419", "pt-BR", "de", "fr"}
        for option in command["options"]:
            assert option["description_localizations"]["pt-BR"], (name, option["name"])
    history = onair.fake._command("history")
    assert history["description_localizations"]["de"] == (
        "Was zu einer Uhrzeit lief, oder im Verlauf suchen"
    )


@pytest.mark.parametrize(
    ("locale", "top_title", "most_played", "website", "month"),
    [
        ("pt-BR", "As mais da Main FM", "Mais tocadas", "Site", "mês"),
        ("de", "Charts · Main FM", "Meistgespielt", "Website", "Monat"),
    ],
)
async def test_station_and_top_in_the_users_language(
    onair, locale, top_title, most_played, website, month
):
    fake = onair.fake
    code = language_of(locale)
    fake.user_locales[fake.owner_id] = locale

    message = await fake.final_message(await fake.slash("station"))
    description = message["embeds"][0]["description"]
    assert f"[{website}](" in description
    assert english_left(visible_text(message), code, station_words(onair)) == []

    message = await fake.final_message(await fake.slash("top", {"period": "month"}))
    embed = message["embeds"][0]
    assert embed["title"] == top_title
    assert [f["name"] for f in embed["fields"]][1] == most_played
    fields = "\n".join(f["name"] + "\n" + f["value"] for f in embed["fields"])
    text = visible_text(message) + "\n" + fields
    assert english_left(text, code, station_words(onair)) == []

    period = next(o for o in onair.fake._command("top")["options"] if o["name"] == "period")
    assert [c["value"] for c in period["choices"]] == ["day", "week", "month"]
    assert [c["name"] for c in period["choices"]] == ["day", "week", "month"]
    assert period["choices"][2]["name_localizations"][locale] == month
    assert onair.fake._command("station")["description_localizations"][locale]

    fake.user_locales[fake.owner_id] = "en-US"
    message = await fake.final_message(await fake.slash("top"))
    assert message["embeds"][0]["title"] == "Top tracks · Main FM"
    assert message["embeds"][0]["description"].startswith(
        "Listeners' favourites of the last 7 days"
    )


async def test_playlist_pages_and_jingle_toggle_in_the_users_language(onair):
    fake = onair.fake
    onair.sim.playlist_size = 1000
    fake.user_locales[fake.owner_id] = "de"
    playlist = await onair.bot.registry.clients["main"].playlist()
    own = (*station_words(onair), *(item.display for item in playlist.items))
    iid = await fake.slash("playlist")
    message = await fake.final_message(iid)
    embed = message["embeds"][0]
    assert embed["title"] == "Playlist von Main FM"
    footer = embed["footer"]["text"]
    assert re.fullmatch(r"Seite \d+/\d+ · \d+ Einträge · \d+ Jingles ausgeblendet", footer)
    assert "**Auf Sendung**" in embed["description"]
    (toggle,) = message["components"][1]["components"]
    assert toggle["label"].startswith("Jingles zeigen (")
    assert english_left(visible_text(message), "de", own) == []

    target = fake.original(iid)
    update = await fake.response(await fake.click(target, "pg:jingles"))
    data = update.json["data"]
    assert data["embeds"][0]["footer"]["text"].endswith(" · 1.000 Einträge")
    assert data["components"][1]["components"][0]["label"] == "Jingles ausblenden"
    assert english_left(visible_text(data), "de", own) == []

    # Someone else, whose Discord is in Portuguese, is told in Portuguese.
    stranger = 4242424242424242
    fake.user_locales[stranger] = "pt-BR"
    refused = await fake.response(await fake.click(target, "pg:last", user_id=stranger))
    assert refused.json["data"]["flags"] & EPHEMERAL
    assert refused.json["data"]["content"].startswith("Só quem usou o comando")


async def test_join_and_leave_refusals_in_the_users_language(onair):
    fake = onair.fake
    fake.user_locales[fake.owner_id] = "pt-BR"
    join = await fake.final_message(await fake.slash("join", {}))
    assert join["flags"] & EPHEMERAL
    assert join["content"] == (
        "Entre em um canal de voz ou palco primeiro e depois use `/join` "
        "(eu toco onde você estiver)."
    )
    leave = await fake.final_message(await fake.slash("leave", {}))
    assert leave["content"] == "Não estou tocando em nenhum canal de voz aqui."
    for message in (join, leave):
        assert english_left(message["content"], "pt_BR") == []
    for name in ("join", "leave"):
        assert onair.fake._command(name)["description_localizations"]["de"]
