"""/onair in German and Brazilian Portuguese end to end (issue 24): the real discord.py client
against the fake Discord. An admin's replies are private, so they follow the admin's own client
language: /onair status, a settings change, the station key form, an admin error and the reply
after the form. The synced /onair tree carries its localisations within Discord's limits, and
the next admin, whose Discord is in English, reads the English byte for byte."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.util.i18n import DISCORD_LOCALES, LANGUAGES, Translator, language_of

from .support.botenv import GUILD_KEY
from .support.discord_rules import EPHEMERAL, MODAL
from .test_i18n_bot import content_and_embeds, english_left

pytestmark = pytest.mark.e2e

# Besides the listener replies' allow-list: what an admin reply shows as it is, in every
# language (OnAir's option values and command words, a time zone, Discord's and RadioBOSS's names).
ADMIN_STAYS = ("Europe/Berlin", "RadioBOSS Cloud", "guild-radio", "Guild Radio", "Main FM")
_CODE = re.compile(r"`[^`]*`|<[@#][&!]?\d+>|\*\*[^*]*\*\*")  # commands, mentions, bold values


def admin_english_left(text: str, code: str) -> list[str]:
    """English words left in an admin reply: command spans (`/onair announce`), mentions and
    the bold values OnAir echoes (a station's name, a time zone) stay as they are."""
    return english_left(_CODE.sub(" ", text), code, ADMIN_STAYS)


def everything_shown(message: dict[str, Any]) -> str:
    """Content and every embed text an admin reads, fields included."""
    parts = content_and_embeds(message)
    for embed in message.get("embeds") or []:
        for field in embed.get("fields") or []:
            parts += [field["name"], field["value"]]
    return "\n".join(parts)


def test_admin_detector_catches_english_and_lets_commands_be():
    assert admin_english_left("Nowhere yet: run `/onair announce`", "de") == ["Nowhere"]
    assert admin_english_left("Noch nirgends: Führ `/onair announce` aus.", "de") == []
    assert admin_english_left("Zeitzone: **Europe/Berlin**; paused", "de") == ["paused"]


EXPECTED = {
    "de": {
        "title": "OnAir-Status",
        "settings": "Zeitzone: **Europe/Berlin**; Standardsender: **keiner**.",
        "alerts": "Wähl den `channel` für die Meldungen (oder setz `off:True`, um sie zu beenden).",
        "zone": "Die Zeitzone `Mars/Base` kenne ich nicht; nimm einen Namen wie Europe/Berlin.",
        "form": ("API-Schlüssel des Senders", "API-Schlüssel", "Leer lassen,"),
        "added": "**Guild Radio** (`guild-radio`) hinzugefügt; der Schlüssel funktioniert.",
        "on_air": "Jetzt auf Sendung:",
        "announcing": "Ansagen in",
        "day": "Montag",
    },
    "pt-BR": {
        "title": "Status do OnAir",
        "settings": "Fuso horário: **Europe/Berlin**; rádio padrão: **nenhuma**.",
        "alerts": "Escolha o `channel` dos avisos (ou use `off:True` para desligar).",
        "zone": "Não conheço o fuso horário `Mars/Base`; use um nome tipo America/Sao_Paulo.",
        "form": ("Chave da API da rádio", "Chave da API", "Deixe vazio"),
        "added": "**Guild Radio** (`guild-radio`) adicionada; a chave funciona.",
        "on_air": "No ar agora:",
        "announcing": "Anunciando em",
        "day": "segunda-feira",
    },
}


@pytest.mark.parametrize("locale", sorted(EXPECTED))
async def test_an_admin_sets_up_onair_in_their_language(dev_bot, guild_sim, locale):
    want = EXPECTED[locale]
    code = language_of(locale)
    async with dev_bot() as env:
        fake = env.fake
        fake.user_locales[fake.owner_id] = locale

        # /onair status with nothing set up: the whole embed in the admin's language.
        status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
        assert status["flags"] & EPHEMERAL
        assert status["embeds"][0]["title"] == want["title"]
        assert admin_english_left(everything_shown(status), code) == []

        # A settings change, confirmed in their language.
        iid = await fake.slash("onair", {"timezone": "Europe/Berlin"}, sub=["settings"])
        assert (await fake.final_message(iid))["content"] == want["settings"]

        # An admin error: alerts without a channel.
        iid = await fake.slash("onair", {}, sub=["alerts"])
        error = (await fake.response(iid)).json["data"]
        assert error["flags"] & EPHEMERAL
        assert error["content"] == want["alerts"]
        iid = await fake.slash("onair", {"timezone": "Mars/Base"}, sub=["settings"])
        assert (await fake.response(iid)).json["data"]["content"] == want["zone"]

        # The station key form: title, label and placeholder, accepted by the strict fake.
        options = {"name": "Guild Radio", "base_url": guild_sim.base_url, "station_id": 5}
        callback = (
            await fake.response(await fake.slash("onair", options, sub=["station", "add"]))
        ).json
        assert callback["type"] == MODAL, callback
        modal = callback["data"]
        field = modal["components"][0]["components"][0]
        title, label, placeholder = want["form"]
        assert (modal["title"], field["label"]) == (title, label)
        assert field["placeholder"].startswith(placeholder)
        submit = await fake.submit_modal(modal["custom_id"], {field["custom_id"]: GUILD_KEY})
        added = await fake.final_message(submit)
        assert added["content"].startswith(want["added"])
        built_in, on_air, _play = added["content"].partition(want["on_air"])  # play: station's
        assert on_air
        assert admin_english_left(built_in, code) == []

        # Announcing, then the status again: the fields and their lines in the language too.
        channel = env.guild.channels[1]
        iid = await fake.slash(
            "onair",
            {"channel": str(channel), "station": "guild-radio", "title": "{title}"},
            sub=["template", "set"],
            resolved=fake.resolved_channel(channel),
        )
        refused = (await fake.response(iid)).json["data"]["content"]
        assert "`/onair announce`" in refused
        assert admin_english_left(refused, code) == []
        iid = await fake.slash(
            "onair",
            {"channel": str(channel), "station": "guild-radio"},
            sub=["announce"],
            resolved=fake.resolved_channel(channel),
        )
        announced = await fake.final_message(iid)
        assert admin_english_left(announced["content"], code) == []
        iid = await fake.slash(
            "onair",
            {"channel": str(channel), "day": "Monday", "station": "guild-radio"},
            sub=["recap"],
            resolved=fake.resolved_channel(channel),
        )
        recap = await fake.final_message(iid)
        assert want["day"] in recap["content"]
        assert admin_english_left(recap["content"], code) == []
        status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
        fields = {f["name"]: f["value"] for f in status["embeds"][0]["fields"]}
        assert want["announcing"] in fields
        assert admin_english_left(everything_shown(status), code) == []

        # The next admin's Discord is in English: the English, byte for byte.
        fake.user_locales[fake.owner_id] = "en-US"
        iid = await fake.slash("onair", {"timezone": "Europe/Berlin"}, sub=["settings"])
        assert (await fake.final_message(iid))["content"] == (
            "Time zone: **Europe/Berlin**; default station: **none**."
        )
        status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
        assert status["embeds"][0]["title"] == "OnAir status"
        assert "Announcing in" in {f["name"] for f in status["embeds"][0]["fields"]}


def _described(node: dict[str, Any], path: str) -> list[tuple[str, dict[str, Any]]]:
    """Every command, group and option of ``node`` with a description, by path."""
    found = [(path, node)]
    for option in node.get("options") or []:
        found += _described(option, f"{path} {option['name']}")
    return found


async def test_the_onair_tree_carries_its_localisations_within_limits(onair):
    onair_command = onair.fake._command("onair")
    assert onair_command["description_localizations"]["de"] == "OnAir für diesen Server einrichten"
    localised = 0
    for path, node in _described(onair_command, "/onair"):
        assert not node.get("name_localizations"), path  # names stay English
        description = node.get("description") or ""
        if description in ("", "…"):  # an option discord.py describes as "…"
            continue
        assert set(node.get("description_localizations") or {}) == set(DISCORD_LOCALES), path
        for text in node["description_localizations"].values():
            assert 1 <= len(text) <= 100, (path, text)
            assert text != description, (path, text)
        localised += 1
        for choice in node.get("choices") or []:
            for text in (choice.get("name_localizations") or {}).values():
                assert 1 <= len(text) <= 100, (path, text)
    assert localised > 60  # every group, subcommand and option of /onair
    recap = next(o for o in onair_command["options"] if o["name"] == "recap")
    day = next(o for o in recap["options"] if o["name"] == "day")
    monday = day["choices"][0]
    assert (monday["name"], monday["value"]) == ("Monday", "Monday")
    assert monday["name_localizations"]["de"] == "Montag"
    assert monday["name_localizations"]["pt-BR"] == "segunda-feira"


def test_the_key_form_fits_discord_in_every_language():
    """Discord's limits for a modal: title and label 45, placeholder 100 (the fake refuses
    more, as Discord does; the e2e test above sends two of the languages through it)."""
    translator = Translator.load()
    for code in LANGUAGES:
        lang = translator.lang(code)
        title, label = lang.t("Station API key"), lang.t("API key")
        placeholder = lang.t("Leave empty if the station needs no key")
        assert title != "Station API key", code
        assert placeholder != "Leave empty if the station needs no key", code
        assert len(title) <= 45, code
        assert len(label) <= 45, code
        assert len(placeholder) <= 100, code
