"""OnAir in Spanish, Brazilian Portuguese, German and French end to end (issue 24): the real
discord.py client against the fake Discord. A user's private replies follow their client's
language; a guild's public posts follow the guild's language; the synced commands carry the
localisations; and no English is left in a localised reply."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from babel.messages.pofile import read_po

from bot.simulator import LIVE_SHOW
from bot.util.i18n import LANGUAGES, LOCALES_DIR, Lang, Translator, language_of

from .support.botenv import STATION_KEY, running_bot
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import FakeDiscord
from .support.stations import programme_simulator
from .support.waiting import wait_for
from .test_alerts_bot import SLOTS, poll, turn_on

pytestmark = pytest.mark.e2e

# Words that stay the same in every language: names, formats and the radio words the
# communities use as they are.
STAYS = {
    "HTTP",
    "AutoDJ",
    "Stream",
    "Streams",
    "OnAir",
    "VLC",
    "foobar2000",
    "Winamp",
    "LIVE",
    "Main",
}
_WORD = re.compile(r"[A-Za-z][A-Za-z']{3,}")


def _english_words(code: str) -> set[str]:
    """Words of the English messages that the language's catalog does not use: one of them in a
    localised reply is English left behind."""
    with (LOCALES_DIR / code / "LC_MESSAGES" / "onair.po").open("rb") as handle:
        catalog = read_po(handle, locale=code)
    english: set[str] = set()
    theirs: set[str] = set()
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        english |= {w for text in ids for w in _WORD.findall(re.sub(r"\{\w+\}", "", text))}
        theirs |= {w for text in strings for w in _WORD.findall(text)}
    return english - theirs - STAYS


def english_left(text: str, code: str, station_text: tuple[str, ...] = ()) -> list[str]:
    """English words in ``text`` (a reply in ``code``), leaving out the station's own text."""
    for own in station_text:
        if own:
            text = text.replace(own, " ")
    text = re.sub(r"<t:\d+(:\w)?>|https?://\S+", " ", text)  # Discord timestamps, links
    return sorted(set(_WORD.findall(text)) & _english_words(code))


def worded_in_each(
    translator: Translator, expected: dict[str, str], word: Callable[[Lang], str | None]
) -> None:
    """``word`` says its text in each catalog's language (``expected``: catalog code -> text)."""
    for code, text in expected.items():
        assert word(translator.lang(code)) == text


def content_and_embeds(message: dict[str, Any]) -> list[str]:
    """A message's content and each embed's title, description and footer: the texts every
    reader sees, whatever else (buttons, fields) a test reads next to them."""
    parts = [message.get("content") or ""]
    for embed in message.get("embeds") or []:
        parts += [embed.get("title") or "", embed.get("description") or ""]
        parts.append((embed.get("footer") or {}).get("text") or "")
    return parts


def visible_text(message: dict[str, Any]) -> str:
    """Everything a reader sees of a message: content, embed texts, buttons, menu options."""
    parts = content_and_embeds(message)
    for row in message.get("components") or []:
        for item in row.get("components") or []:
            parts += [item.get("label") or "", item.get("placeholder") or ""]
            for option in item.get("options") or []:
                parts += [option.get("label") or "", option.get("description") or ""]
    return "\n".join(parts)


def test_english_left_is_caught():
    assert english_left("Main FM · 3 listening", "pt_BR") == ["listening"]
    assert english_left("Main FM · 3 ouvintes", "pt_BR") == []
    assert english_left("Nothing on air right now", "de") != []


async def test_synced_commands_carry_the_localisations(onair):
    nowplaying = onair.fake._command("nowplaying")
    assert nowplaying["description"] == "What is on air right now"
    localised = nowplaying["description_localizations"]
    assert set(localised) == {"es-ES", "es-419", "pt-BR", "de", "fr"}
    assert localised["pt-BR"] == "O que está tocando agora"
    assert localised["de"] == "Was gerade läuft"
    assert localised["es-ES"] == localised["es-419"] == "Lo que suena ahora mismo"
    assert not nowplaying.get("name_localizations")  # names stay English
    (station,) = nowplaying["options"]
    assert station["name"] == "station"
    assert station["description_localizations"]["fr"].startswith("Quelle radio")
    assert not station.get("name_localizations")
    onair_command = onair.fake._command("onair")
    settings = next(o for o in onair_command["options"] if o["name"] == "settings")
    language = next(o for o in settings["options"] if o["name"] == "language")
    assert [c["value"] for c in language["choices"]] == ["en", *LANGUAGES]
    assert language["description_localizations"]["de"].startswith("Sprache")


EXPECTED = {
    "pt-BR": ("ouvintes", ["Ouvir", "Player no site", "Curtir"], "Sintonize a **Main FM**:"),
    "de": ("hören zu", ["Anhören", "Webplayer", "Gefällt mir"], "**Main FM** hören:"),
    "es-ES": ("oyentes", ["Escuchar", "Reproductor web", "Me gusta"], "Sintoniza **Main FM**:"),
}


@pytest.mark.parametrize("locale", sorted(EXPECTED))
async def test_a_user_gets_nowplaying_listen_and_an_error_in_their_language(onair, locale):
    fake = onair.fake
    listeners, buttons, tune_in = EXPECTED[locale]
    code = language_of(locale)
    fake.user_locales[fake.owner_id] = locale
    info_client = onair.bot.registry.clients["main"]

    message = await fake.final_message(await fake.slash("nowplaying"))
    embed = message["embeds"][0]
    info = info_client.last_info
    count = info.listener_count
    assert embed["footer"]["text"].startswith("Main FM · ")
    assert listeners in embed["footer"]["text"] or count == 1
    labels = [b["label"] for row in message["components"] for b in row["components"]]
    assert labels == buttons
    play = info.current_play()
    own = (play.title, play.artist, play.album, info.next_display, info.current.genre, "Main FM")
    assert english_left(visible_text(message), code, own) == []

    message = await fake.final_message(await fake.slash("listen"))
    assert message["content"] == tune_in
    assert english_left(visible_text(message), code, ("Main FM", "lofi")) == []

    iid = await fake.slash("nowplaying", {"station": "no-such-station"})
    error = (await fake.response(iid)).json["data"]
    assert error["flags"] & EPHEMERAL
    assert "Pick one from the list" not in error["content"]
    assert english_left(error["content"], code) == []

    # The next user, whose Discord is in English, still reads English, byte for byte.
    fake.user_locales[fake.owner_id] = "en-US"
    message = await fake.final_message(await fake.slash("listen"))
    assert message["content"] == "Tune in to **Main FM**:"


async def test_a_french_guild_gets_its_alerts_and_announcements_in_french(tmp_path):
    async with programme_simulator(SLOTS, key=STATION_KEY) as sim:
        clock = sim.clock
        fake = FakeDiscord()
        await fake.start()
        try:
            guild = fake.guilds[0]
            channel, posts = guild.channels[0], guild.channels[1]
            async with running_bot(
                sim, fake=fake, db_path=str(tmp_path / "o.sqlite3"), clock=clock
            ) as env:
                iid = await fake.slash("onair", {"language": "fr"}, sub=["settings"])
                reply = (await fake.response(iid)).json["data"]
                assert "Français" in reply["content"]
                await turn_on(env, channel, None)
                iid = await fake.slash(
                    "onair",
                    {"channel": str(posts)},
                    sub=["announce"],
                    resolved=fake.resolved_channel(posts),
                )
                await fake.response(iid)
                await wait_for(lambda: bool(env.bot.announcer.watched()))
                await poll(env)
                post = await fake.wait_request("POST", rf"^/channels/{posts}/messages$")
                embed = post[0].json["embeds"][0]
                assert re.search(r"· \d+ auditeurs?$", embed["footer"]["text"])
                labels = [b["label"] for r in post[0].json["components"] for b in r["components"]]
                assert labels[:2] == ["Écouter", "Lecteur web"]

                clock.advance(21)  # the live show starts
                await poll(env)
                (start,) = alerts_in_fr(fake, channel)
                assert start["embeds"][0]["title"] == (
                    f"🔴 EN DIRECT\u00a0: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"
                )
                assert "est en direct" in start["embeds"][0]["description"]
                clock.advance(60)  # the show ends
                await poll(env)
                ended = alerts_in_fr(fake, channel)[1]["embeds"][0]
                assert ended["title"].startswith("Fin du direct\u00a0: ")
                assert "reprend sa programmation après 1 min" in ended["description"]

                sim.inject("status", status=404)
                await poll(env)
                clock.advance(130)
                await poll(env)
                await poll(env)
                down = alerts_in_fr(fake, channel)[2]["embeds"][0]
                assert down["title"] == "⚠️ Main FM ne répond plus"
                assert "OnAir vous prévient ici dès son retour." in down["description"]
                sim.faults.clear()
                clock.advance(20)
                await poll(env)
                back = alerts_in_fr(fake, channel)[3]["embeds"][0]
                assert back["title"] == "✅ Main FM est de retour"
                assert back["description"].startswith("Coupure de **")
                for message in alerts_in_fr(fake, channel):
                    text = visible_text(message)
                    own = (LIVE_SHOW.artist, LIVE_SHOW.title)
                    assert english_left(text, "fr", own) == [], text
        finally:
            await fake.stop()


def alerts_in_fr(fake: FakeDiscord, channel: int) -> list[dict[str, Any]]:
    out = []
    for mid in fake.channel_messages[channel]:
        embeds = fake.messages[mid].get("embeds") or []
        title = (embeds[0].get("title") or "") if embeds else ""
        if title.startswith(("🔴 EN DIRECT", "Fin du direct", "⚠️ ", "✅ ")):
            out.append(fake.messages[mid])
    return out
