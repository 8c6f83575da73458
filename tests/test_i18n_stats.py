"""/stats with its chart, the weekly recap and live-show events in a community's language (issue
24), end to end: the real discord.py client against the fake Discord. /stats answers in the
viewer's client language (chart included: the words the chart drew are read back from the PNG);
the recap and a live show's event are public, in the guild's language. The English-left
detector of test_i18n_bot runs on each; English users keep the exact English (the commands' own
tests assert it, and the en-US run here checks the chart's words)."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from bot.config.schema import WEEKDAYS
from bot.render.chart import ChartText, chart_words, render_stats_chart
from bot.render.recap_embeds import recap_embed
from bot.shows.text import event_description, event_location, event_name
from bot.simulator import LIVE_SHOW, TRACKS
from bot.station import DayStats, Play
from bot.util.i18n import ENGLISH, Translator, language_of

from .support.botenv import fake_discord_fixture, running_bot
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import CREATE_EVENTS, FakeDiscord
from .support.shows_bot import advance
from .support.shows_bot import poll as shows_poll
from .support.voice_bot import icecast_fixture, mp3_fixture
from .support.waiting import wait_for
from .test_alerts_bot import poll
from .test_announcer_bot import programme_sim
from .test_i18n_bot import english_left, visible_text
from .test_recap_bot import recap_sim
from .test_shows_bot import showing_first_track

pytestmark = pytest.mark.e2e
fake = fake_discord_fixture()
__all__ = [
    "icecast_fixture",
    "mp3_fixture",
    "programme_sim",
    "recap_sim",
]  # other tests' fixtures, used here too


def chart_of(body_files: list[Any]) -> list[str]:
    (_, filename, data) = body_files[0]
    assert filename == "stats.png"
    return chart_words(data)


async def stats_for(onair: Any, locale: str, options: dict[str, Any]) -> tuple[dict, list[str]]:
    """/stats as a user whose Discord is in ``locale``: (the embed, the chart's words)."""
    fake = onair.fake
    fake.user_locales[fake.owner_id] = locale
    iid = await fake.slash("stats", options)
    # The chart renders in a worker process, which starts on the first /stats.
    follow = await fake.wait_request("POST", rf"^/webhooks/\d+/itoken-{iid}", within=60)
    body = follow[0]
    return body.json, chart_of(body.files)


@pytest.mark.parametrize(
    ("locale", "title", "words", "legend", "per_day", "busiest"),
    [
        (
            "pt-BR",
            "Ouvintes da Main FM",
            ("sessões", "ouvintes únicos", "h ouvidas", "dia de maior audiência", "30 dias"),
            ["sessões", "ouvintes únicos"],
            "por dia",
            "pico: ",
        ),
        (
            "de",
            "Hörer · Main FM",
            ("Sessions", "verschiedene Hörer", "Std. gehört", "stärkster Tag", "30 Tage"),
            ["Sessions", "verschiedene Hörer"],
            "pro Tag",
            "Spitze: ",
        ),
    ],
)
async def test_stats_and_its_chart_in_the_viewers_language(
    onair, locale, title, words, legend, per_day, busiest
):
    code = language_of(locale)
    lang = Translator.load().lang(locale)
    body, drawn = await stats_for(onair, locale, {"period": "30d"})
    embed = body["embeds"][0]
    assert embed["title"] == title
    text = embed["description"]
    for word in words:
        assert word in text
    if code == "de":  # "28. Okt. – …" escaped: Discord would draw a list numbered from 28
        assert re.match(r"\d{1,2}\\\. \w", text), text
    assert "-# " + lang.t("Today so far (station time): lower than a whole day.") in text
    # Country names as the language says them (CLDR, by ISO code), not the station's English.
    assert ("🇩🇪 Alemanha" if code == "pt_BR" else "🇩🇪 Deutschland") in text
    countries = text.split("**" + lang.t("Top countries") + "**\n")[1].splitlines()
    assert countries[-1].startswith("-# " + ("e mais " if code == "pt_BR" else "und "))
    assert english_left(visible_text(body), code, ("Main FM",)) == []

    # The chart: its legend, axis title, "today, so far" and busiest-day label, and the days
    # on its x axis as the language writes them ("24 de nov." / "24. Nov."), no English month.
    assert drawn[0] == per_day
    assert drawn[1:3] == legend
    assert lang.t("today, so far") in drawn
    assert any(w.startswith(busiest) for w in drawn)
    day = re.compile(r"\d\d/\d\d" if code == "pt_BR" else r"\d{1,2}\.\d{1,2}\.")
    assert len([w for w in drawn if day.fullmatch(w)]) >= 2, drawn
    assert not [w for w in drawn if re.fullmatch(r"[A-Z][a-z]{2} \d{1,2}", w)], drawn
    assert english_left("\n".join(drawn), code) == []

    # The command's description, its options' and the period choices are localised.
    command = onair.fake._command("stats")
    assert command["description_localizations"][locale] == lang.t(
        "Listener statistics for a period or dates"
    )
    options = {o["name"]: o for o in command["options"]}
    for name in ("period", "from", "to", "station"):
        assert options[name]["description_localizations"][locale], name
    period = options["period"]
    assert [c["value"] for c in period["choices"]] == ["today", "7d", "30d", "90d"]
    assert [c["name"] for c in period["choices"]] == ["today", "7d", "30d", "90d"]
    assert period["choices"][2]["name_localizations"][locale] == lang.t("30d")

    # A bad range is refused in the language, privately.
    onair.fake.user_locales[onair.fake.owner_id] = locale
    iid = await onair.fake.slash("stats", {"from": "2026-03-10", "to": "2026-03-01"})
    reply = (await onair.fake.response(iid)).json["data"]
    assert reply["flags"] & EPHEMERAL
    assert reply["content"].startswith("`from` (2026-03-10)")
    assert english_left(reply["content"], code) == []

    # An English user right after reads the English, chart included.
    body, drawn = await stats_for(onair, "en-US", {"period": "7d"})
    assert body["embeds"][0]["title"] == "Listeners of Main FM"
    assert drawn[:3] == ["per day", "sessions", "unique listeners"]
    assert "today, so far" in drawn


def test_the_chart_draws_the_words_it_is_given():
    translator = Translator.load()
    days = [
        DayStats(date(2026, 11, 1) + timedelta(days=i), 900 + 400 * i, 300 + i) for i in range(8)
    ]
    english = chart_words(render_stats_chart(days))
    assert english[:3] == ["per day", "sessions", "unique listeners"]
    assert "busiest: Nov 8" in english
    assert english[-4:] == ["1.5K", "3K", "4.5K", "6K"]  # CLDR's English compact numbers
    french = chart_words(render_stats_chart(days, False, ChartText.of(translator.lang("fr"))))
    assert french[:3] == ["par jour", "sessions", "auditeurs uniques"]
    assert "pic : 08/11" in french
    assert "3\xa0k" in french  # as French writes thousands
    german = chart_words(render_stats_chart(days, False, ChartText.of(translator.lang("de"))))
    assert "Spitze: 8.11." in german
    assert "3.000" in german  # German writes thousands out


def recap_summary() -> dict[str, Any]:
    start = datetime(2026, 11, 19, 17, tzinfo=UTC)
    return {
        "station_name": "Main FM",
        "start": start.timestamp(),
        "end": (start + timedelta(days=7)).timestamp(),
        "plays": 1234,
        "played": [[TRACKS[0].title, TRACKS[0].artist, 3], [TRACKS[1].title, None, 1]],
        "liked": [[TRACKS[0].title, TRACKS[0].artist, 2]],
        "peak": [1500, (start + timedelta(days=1, hours=2)).timestamp()],
        "live": [[LIVE_SHOW.title, LIVE_SHOW.artist, 1]],
        "busiest": [4, 19, 300],
        "zone": "Europe/Berlin",
    }


def test_the_recap_is_written_as_each_language_writes_it():
    translator = Translator.load()
    english = recap_embed(recap_summary())
    assert english == recap_embed(recap_summary(), ENGLISH)
    assert english.title == "📊 The week on Main FM"
    assert english.description.startswith("Thu 19 Nov, 18:00 – Thu 26 Nov, 18:00 · **1,234** plays")
    fields = {f.name: f.value for f in english.fields}
    assert fields["Peak listeners"] == "1,500 · Fri 20 Nov, 20:00"
    assert fields["Busiest hour"] == "Friday 19:00–20:00"
    assert fields["Live shows"].endswith(" · on air once")

    german = recap_embed(recap_summary(), translator.lang("de"))
    assert german.title == "📊 Die Woche bei Main FM"
    assert german.description.startswith(
        "Do., 19. Nov., 18:00 – Do., 26. Nov., 18:00 · **1.234** Titel gespielt"
    )
    fields = {f.name: f.value for f in german.fields}
    assert fields["Hörerspitze"] == "1.500 · Fr., 20. Nov., 20:00"
    assert fields["Stärkste Stunde"] == "Freitag 19:00–20:00"
    assert fields["Live-Sendungen"].endswith(" · 1× gesendet")
    assert fields["Meistgespielt"].splitlines()[1].endswith(" · 1× gespielt")

    brazil = recap_embed(recap_summary(), translator.lang("pt-BR"))
    assert brazil.title == "📊 A semana na Main FM"
    fields = {f.name: f.value for f in brazil.fields}
    assert fields["Pico de ouvintes"] == "1.500 · sex., 20 de nov., 20:00"
    assert fields["Horário de maior audiência"] == "sexta-feira 19:00–20:00"


def test_event_texts_in_the_guilds_language():
    translator = Translator.load()
    play = Play(title="Friday Mix", artist="DJ Nova", live=True)
    french = translator.lang("fr")
    assert event_description("Main FM", play, french) == (
        "DJ Nova - Friday Mix en direct sur Main FM. Écoutez avec `/join` ou `/listen`."
    )
    assert event_description(None, play, french).endswith(
        " sur la radio. Écoutez avec `/join` ou `/listen`."
    )
    assert event_location(None, None, french) == "Radio en ligne"
    assert event_name(Play(title="", live=True), french) == "Émission en direct"
    # English as before.
    assert event_description("Main FM", play) == (
        "DJ Nova - Friday Mix live on Main FM. Tune in with `/join` or `/listen`."
    )
    assert event_location(None, None, ENGLISH) == "Online radio"
    assert event_name(Play(title="", live=True)) == "Live show"


async def set_language(fake: FakeDiscord, code: str, guild: Any = None) -> None:
    extra = {"guild": guild} if guild is not None else {}
    iid = await fake.slash("onair", {"language": code}, sub=["settings"], **extra)
    reply = (await fake.response(iid)).json["data"]
    assert reply["flags"] & EPHEMERAL


async def test_a_french_guild_gets_its_recap_in_french(recap_sim, fake):
    clock = recap_sim.clock
    guild = fake.guilds[0]
    channel = guild.channels[1]
    async with running_bot(recap_sim, fake=fake, clock=clock) as env:
        await set_language(fake, "fr")
        iid = await fake.slash("onair", {"timezone": "Europe/Paris"}, sub=["settings"])
        await fake.response(iid)
        soon = datetime.fromtimestamp(clock(), UTC) + timedelta(hours=2)
        options = {"channel": str(channel), "day": WEEKDAYS[soon.weekday()], "hour": soon.hour}
        iid = await fake.slash(
            "onair", options, sub=["recap"], resolved=fake.resolved_channel(channel)
        )
        await fake.response(iid)
        for step in (0, 201, 200, 200, 600, 200):
            clock.advance(step)
            await poll(env)
        clock.now = soon.timestamp() + 60
        await env.bot.recaps.tick()
        await env.bot.posts.idle()
        posts = [
            fake.messages[m]
            for m in fake.channel_messages[channel]
            if (fake.messages[m].get("embeds") or [{}])[0].get("title", "").startswith("📊")
        ]
    (recap,) = posts
    embed = recap["embeds"][0]
    assert embed["title"] == "📊 La semaine sur Main FM"
    assert "diffusions" in embed["description"]
    assert "Heures du fuseau Europe/Paris." in embed["description"]
    fields = {f["name"]: f["value"] for f in embed["fields"]}
    assert set(fields) >= {"Les plus diffusés", "Émissions en direct", "Pic d'auditeurs"}
    assert fields["Émissions en direct"].endswith(" · 1 fois à l'antenne")
    own = tuple(w for item in (*TRACKS, LIVE_SHOW) for w in (item.title, item.artist or ""))
    text = visible_text(recap) + "\n" + "\n".join(f"{k}\n{v}" for k, v in fields.items())
    assert english_left(text, "fr", ("Main FM", "Europe/Paris", *own)) == []


@pytest.fixture
async def events_fake() -> Any:
    fake = FakeDiscord(guild_count=2)
    for guild in fake.guilds:
        guild.bot_role_permissions = CREATE_EVENTS
    async with fake:
        yield fake


async def test_a_french_guild_gets_its_live_show_event_in_french(programme_sim, events_fake):
    fake = events_fake
    french, english = fake.guilds
    async with running_bot(programme_sim, fake=fake) as env:
        await set_language(fake, "fr", french)
        for guild in (french, english):
            iid = await fake.slash("onair", {"enabled": True}, sub=["events"], guild=guild)
            await fake.final_message(iid)
        await shows_poll(env)
        advance(programme_sim, 46)  # the live show
        await shows_poll(env)
        await wait_for(lambda: len(french.events) == 1 and len(english.events) == 1)
        info = env.bot.registry.clients["main"].last_info
        assert info is not None
        station = info.name
    (event,) = french.events.values()
    show = f"{LIVE_SHOW.artist} - {LIVE_SHOW.title}"
    assert event["description"] == (
        f"{show} en direct sur {station}. Écoutez avec `/join` ou `/listen`."
    )
    assert english_left(event["description"], "fr", (show, station)) == []
    (other,) = english.events.values()
    assert other["description"] == f"{show} live on {station}. Tune in with `/join` or `/listen`."


async def test_a_french_guilds_voice_status_says_a_live_show_in_french(programme_sim, icecast):
    async with showing_first_track(programme_sim, icecast) as (voice, vc):
        await set_language(voice.fake, "fr", voice.guild)
        advance(programme_sim, 46)  # the live show
        await shows_poll(voice.env)
        show = f"{LIVE_SHOW.artist} - {LIVE_SHOW.title}"
        await wait_for(lambda: vc.status == f"🔴 EN DIRECT : {show}")
        assert vc.status_by == "bot"
        assert english_left(vc.status, "fr", (show,)) == []
