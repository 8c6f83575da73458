"""The /onair voice reply, the reasons inside refusals (a stream address, an IP address, a
template) and the paused reasons of /onair status, said in the admin's language; the English
text is the msgid byte for byte. End to end through the real discord.py client against the fake
Discord (and real audio through the fake Icecast for /onair voice)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from bot import errors
from bot.announcer.templating import set_parts
from bot.config import StationConfig
from bot.errors import BadInput, Reason
from bot.guard.netguard import HostPolicy, UrlRefused, check_url
from bot.render.alert_embeds import alert_message
from bot.render.paused import paused_reason
from bot.render.voice_text import settings_text, spoken_seconds
from bot.scheduled.alerts import live_show
from bot.station import StationInfo
from bot.storage import GuildStation, Subscription
from bot.templates.formatter import TemplateError, parse
from bot.ui.voice import stream_url_input
from bot.util.i18n import ENGLISH, Translator

from .support.botenv import DEV_OVERRIDE, STATION_KEY
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import CONNECT, VIEW_CHANNEL
from .support.voice_bot import icecast_fixture, mp3_fixture, reply_of, voice_bot
from .test_i18n_admin import admin_english_left, everything_shown

pytestmark = pytest.mark.e2e
__all__ = ["icecast_fixture", "mp3_fixture"]  # fixtures made elsewhere


@pytest.fixture(scope="module")
def langs() -> Translator:
    return Translator.load()


# --- The voice settings, English exactly as before ----------------------------------------


def test_the_voice_settings_read_in_english_as_before():
    assert spoken_seconds(90) == "1 minute 30 seconds"
    assert spoken_seconds(86400) == "1440 minutes"
    assert spoken_seconds(1) == "1 second"
    text = settings_text(
        home="<#5>",
        leave_when_empty=300,
        station="**Main FM**",
        status_on=True,
        status_now="🎵 A - B",
        missing_permission_in="<#6>",
    )
    assert text == (
        "⚠️ I'm missing the **Set Voice Channel Status** permission in <#6>, so its status stays "
        "as it is until a server admin allows it.\n"
        "🔊 **Voice settings**\n"
        "• Home channel: <#5>. I stay there around the clock, even when nobody listens, and "
        "come back to it after a restart.\n"
        "• I leave any other channel once nobody has listened there for 5 minutes.\n"
        "• Station: **Main FM**.\n"
        "• The voice channel's status shows what I play (a status someone else set stays); "
        "now: 🎵 A - B"
    )
    text = settings_text(home=None, leave_when_empty=0, station=None, status_on=False)
    assert text == (
        "🔊 **Voice settings**\n"
        "• No home channel: I only play where someone runs `/join`.\n"
        "• I stay in a channel until someone runs `/leave`.\n"
        "• Station: this server's default station.\n"
        "• The voice channel's status is left alone (mine is cleared; "
        "`/onair voice status:True` shows what I play there)."
    )


def test_the_voice_settings_in_german_and_portuguese(langs):
    de, pt = langs.lang("de"), langs.lang("pt-BR")
    assert spoken_seconds(90, de) == "1 Minute 30 Sekunden"
    assert spoken_seconds(86400, de) == "1.440 Minuten"
    assert spoken_seconds(45, pt) == "45 segundos"
    text = settings_text(home="<#5>", leave_when_empty=90, station=None, status_on=True, lang=de)
    assert text == (
        "🔊 **Sprachkanal-Einstellungen**\n"
        "• Fester Kanal: <#5>. Da bleibe ich rund um die Uhr, auch wenn niemand zuhört, und "
        "komme nach einem Neustart dorthin zurück.\n"
        "• Jeden anderen Kanal verlasse ich, wenn dort 1 Minute 30 Sekunden lang niemand "
        "zugehört hat.\n"
        "• Sender: der Standardsender dieses Servers.\n"
        "• Der Status des Sprachkanals zeigt, was ich spiele (ein Status, den jemand anderes "
        "gesetzt hat, bleibt)."
    )
    assert admin_english_left(text, "de") == []


# --- Reasons inside refusals ---------------------------------------------------------------


def test_an_ip_reason_is_said_in_the_readers_language(langs):
    policy = HostPolicy(("*",), https_only=False)
    with pytest.raises(UrlRefused) as refused:
        check_url("http://[::ffff:127.0.0.1]", policy)
    assert refused.value.message == (
        "OnAir does not contact ::ffff:7f00:1: it is a loopback address inside an "
        "IPv4-mapped address."
    )
    assert refused.value.said_in(langs.lang("de")) == (
        "OnAir kontaktiert ::ffff:7f00:1 nicht: Das ist eine Loopback-Adresse, verpackt als "
        "eine IPv4-gemappte Adresse."
    )
    assert refused.value.said_in(langs.lang("fr")) == (
        "OnAir ne contacte pas ::ffff:7f00:1\u00a0: c’est une adresse de bouclage dans une "
        "adresse IPv4 mappée."
    )


def test_a_refused_stream_address_says_why_in_the_readers_language(langs):
    config = StationConfig("g1-mine", "Guild Radio", "https://x.radioboss.fm", 2, owner_guild=1)
    for url, english, german in (
        (
            "ftp://example.com/live",
            "the stream URL must be an http:// or https:// address",
            "die Stream-URL muss eine http://- oder https://-Adresse sein",
        ),
        (
            "http://10.0.0.1/live",
            "OnAir does not contact 10.0.0.1: it is a private address",
            "OnAir kontaktiert 10.0.0.1 nicht: Das ist eine private Adresse",
        ),
    ):
        with pytest.raises(BadInput) as refused:
            stream_url_input(config, url, HostPolicy(("*",), https_only=False))
        assert refused.value.message == errors.BAD_STREAM_URL.format(reason=english)
        said = refused.value.said_in(langs.lang("de"))
        assert said.startswith(f"Diese Stream-Adresse geht nicht: {german}. Gib die Stream-URL")
        assert admin_english_left(said, "de") == [], said


async def test_a_template_error_is_said_in_the_admins_language(langs):
    with pytest.raises(TemplateError) as refused:
        parse("{title")
    assert str(refused.value) == "a `{` is never closed; write `{{` for a literal brace"
    sub = Subscription(1, 2, 3, "main")

    class NoStorage:  # set_parts refuses before it stores anything
        async def set_templates(self, *_args: object) -> None:
            raise AssertionError("a refused template was stored")

    for text, english, german in (
        (
            "{title",
            "I did not save that: the title template: a `{` is never closed; write `{{` for a "
            "literal brace.",
            "Das habe ich nicht gespeichert: die Vorlage title: eine `{` wird nie geschlossen; "
            "schreib `{{` für eine wörtliche Klammer.",
        ),
        (
            "{title:>9}",
            "I did not save that: the title template: `{title:>9}` has a `:` after the name, and "
            "templates cannot change how a value is laid out; write `{title}` alone.",
            "Das habe ich nicht gespeichert: die Vorlage title: `{title:>9}` hat ein `:` nach dem "
            "Namen, und Vorlagen können das Format eines Werts nicht ändern; schreib nur "
            "`{title}`.",
        ),
        (
            "x" * 3000,
            "I did not save that: the title template is 3,000 characters long; at most 256.",
            "Das habe ich nicht gespeichert: die Vorlage title hat 3.000 Zeichen; höchstens 256.",
        ),
    ):
        with pytest.raises(BadInput) as bad:
            await set_parts(NoStorage(), sub, "all", {"title": text})  # type: ignore[arg-type]
        assert bad.value.message == english
        assert bad.value.said_in(langs.lang("de")) == german
    assert Reason(errors.BadInput(errors.NOT_HERE)).said_in(ENGLISH) == str(
        errors.BadInput(errors.NOT_HERE)
    ).rstrip(".")


# --- Paused reasons ------------------------------------------------------------------------


def test_stored_paused_reasons_are_translated_when_shown(langs):
    de, pt = langs.lang("de"), langs.lang("pt-BR")
    assert paused_reason("the channel no longer exists", de) == "den Kanal gibt es nicht mehr"
    assert paused_reason("OnAir may not post there (Missing Permissions)", pt) == (
        "O OnAir não pode postar lá (faltam permissões)"
    )
    assert paused_reason("Discord refused the message (400, code 50035)", de) == (
        "Discord hat die Nachricht abgelehnt (400, Code 50035)"
    )
    example = "channel 1 is config.example.toml's example id: put your own in config.toml"
    assert paused_reason(example, de).startswith("Kanal 1 ist die Beispiel-ID")
    for stored in ("the channel no longer exists", example, "an older {wording}"):
        assert paused_reason(stored, ENGLISH) == stored  # English: as stored
    assert paused_reason("an older {wording}", de) == "an older {wording}"  # unknown: as stored


async def test_a_german_admin_reads_why_a_channel_is_paused(dev_bot):
    async with dev_bot() as env:
        fake, guild = env.fake, env.guild
        channel, other = guild.channels[0], guild.channels[1]
        storage = env.bot.storage
        sub = await storage.upsert_subscription(Subscription(0, guild.id, channel, "main"))
        await storage.pause(sub.id, "the channel no longer exists")  # as every version stored it
        sub = await storage.upsert_subscription(Subscription(0, guild.id, other, "main"))
        await storage.pause(sub.id, "Discord refused the message (400, code 50035)")
        fake.user_locales[fake.owner_id] = "de"
        status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
        shown = everything_shown(status)
        assert f"🔴 <#{channel}>: den Kanal gibt es nicht mehr" in shown
        assert f"🔴 <#{other}>: Discord hat die Nachricht abgelehnt (400, Code 50035)" in shown
        assert admin_english_left(shown, "de") == []
        fake.user_locales[fake.owner_id] = "en-US"
        status = await fake.final_message(await fake.slash("onair", {}, sub=["status"]))
        shown = everything_shown(status)
        assert f"🔴 <#{channel}>: the channel no longer exists" in shown
        assert f"🔴 <#{other}>: Discord refused the message (400, code 50035)" in shown


# --- /onair voice through the real client --------------------------------------------------


async def test_a_german_admin_reads_the_voice_reply_in_german(live_simulator, icecast):
    """The settings, the join that failed (the permissions named as Discord's client names
    them) and, for an English admin, the same reply as before."""
    async with voice_bot(live_simulator, icecast, bot_deny=VIEW_CHANNEL | CONNECT) as voice:
        fake, channel = voice.fake, voice.channels[voice.guild.id]
        fake.user_locales[fake.owner_id] = "de"
        options = {"channel": str(channel), "leave_when_empty": 90}
        reply = await reply_of(voice.env, await fake.slash("onair", options, sub=["voice"]))
        assert reply["flags"] & 64
        assert reply["content"] == (
            "🔊 **Sprachkanal-Einstellungen**\n"
            f"• Fester Kanal: <#{channel}>. Da bleibe ich rund um die Uhr, auch wenn niemand "
            "zuhört, und komme nach einem Neustart dorthin zurück.\n"
            "• Jeden anderen Kanal verlasse ich, wenn dort 1 Minute 30 Sekunden lang niemand "
            "zugehört hat.\n"
            "• Sender: der Standardsender dieses Servers.\n"
            "• Der Status des Sprachkanals zeigt, was ich spiele (ein Status, den jemand "
            "anderes gesetzt hat, bleibt).\n"
            f"Ich konnte <#{channel}> gerade nicht beitreten: Ich kann in <#{channel}> nicht "
            "spielen: Dafür brauche ich dort die Berechtigungen **Kanal ansehen und Verbinden**. "
            "Bitte einen Server-Admin, das zu erlauben."
        )
        assert admin_english_left(reply["content"], "de") == []
        fake.user_locales[fake.owner_id] = "en-US"
        reply = await reply_of(voice.env, await fake.slash("onair", options, sub=["voice"]))
        assert reply["content"] == (
            "🔊 **Voice settings**\n"
            f"• Home channel: <#{channel}>. I stay there around the clock, even when nobody "
            "listens, and come back to it after a restart.\n"
            "• I leave any other channel once nobody has listened there for 1 minute 30 "
            "seconds.\n"
            "• Station: this server's default station.\n"
            "• The voice channel's status shows what I play (a status someone else set "
            "stays).\n"
            f"I could not join <#{channel}> now: I can't play in <#{channel}>: I am missing the "
            "**View Channel and Connect** permissions there. Please ask a server admin to "
            "allow it."
        )


async def test_a_portuguese_admin_turns_voice_on_for_their_station(live_simulator, icecast):
    """A station the guild added: voice on, its stream line and the rebroadcast terms, all in
    Portuguese; a refused stream address says why in Portuguese too."""
    async with voice_bot(live_simulator, icecast, bot_extra=DEV_OVERRIDE) as voice:
        env, guild, fake = voice.env, voice.guild, voice.fake
        stored = GuildStation(guild.id, "mine", "Guild Radio", live_simulator.base_url, 2, None)
        await env.bot.storage.save_guild_station(stored)
        env.bot.registry.add_guild_station(stored, STATION_KEY)
        fake.user_locales[fake.owner_id] = "pt-BR"
        options = {"station": f"g{guild.id}-mine", "stream_url": icecast.url}
        text = (await reply_of(env, await fake.slash("onair", options, sub=["voice"])))["content"]
        lines = text.split("\n")
        assert lines[0] == "🔊 **Configurações de voz**"
        assert "• Rádio: **Guild Radio**." in lines
        assert "A **Guild Radio** agora toca em canais de voz." in lines
        assert any(line.startswith("Stream da **Guild Radio**: http://") for line in lines)
        assert lines[-1].startswith("-# O OnAir toca o stream público da rádio")
        assert admin_english_left(text, "pt_BR") == []
        options = {"station": f"g{guild.id}-mine", "stream_url": "ftp://example.com/live"}
        iid = await fake.slash("onair", options, sub=["voice"])
        refused = (await fake.response(iid)).json["data"]["content"]
        assert refused.startswith(
            "Esse endereço de stream não dá para usar: a URL do stream tem que ser um endereço "
            "http:// ou https://. Informe"
        )


def test_a_staff_reasons_cause_is_said_in_the_readers_language(langs):
    from bot.render.problems import staff_reason
    from bot.station.errors import Failure, StationUnavailable

    failure = Failure(StationUnavailable, "c9.radioboss.fm", "ClientConnectorDNSError", "x")
    assert staff_reason(failure) == "no answer from c9.radioboss.fm (host name not found)"
    german = staff_reason(failure, langs.lang("de"))
    assert german.endswith("(Hostname nicht gefunden)"), german
    plain = Failure(StationUnavailable, "c9.radioboss.fm", "HTTP 503", "x")
    assert staff_reason(plain, langs.lang("de")).endswith("(HTTP 503)")  # as it is


# --- An untitled live show: named in the guild's language, its key as before ----------------


def test_an_untitled_live_show_is_named_in_the_guilds_language(langs):
    info = StationInfo(fetched_at=datetime(2026, 11, 26, tzinfo=UTC), live=True)
    assert live_show(info) == ("live|live show", "", False)  # the key it always had
    french = langs.lang("fr")
    named = french.t("Live show")
    assert named != "Live show"
    payload = {"kind": "live_start", "title": "", "station_name": "Main FM"}
    assert named in str(alert_message(payload, french).embed.title)
    assert "Live show" in str(alert_message(payload).embed.title)  # English as before


# --- /onair preview shows the post as the guild will see it ---------------------------------


async def test_the_preview_is_worded_in_the_guilds_language_not_the_admins(onair):
    """The preview is of a public post, so it is in the guild's language (fr here), whatever
    the admin's own client language (en-US); only the admin's own words ("nothing on air")
    would follow the admin."""
    fake = onair.fake
    await fake.response(await fake.slash("onair", {"language": "fr"}, sub=["settings"]))
    preview = await fake.final_message(await fake.slash("onair", {}, sub=["preview"]))
    assert preview["flags"] & EPHEMERAL
    footer = preview["embeds"][0]["footer"]["text"]
    assert re.search(r"· \d+ auditeurs?$", footer), footer
    labels = [b["label"] for row in preview["components"] for b in row["components"]]
    assert labels[:2] == ["Écouter", "Lecteur web"]


async def test_the_template_preview_is_the_post_in_the_guilds_language(onair):
    """``/onair template preview`` is built as the channel's post is (one path): its buttons and
    footer in the guild's language (de here), its card's time as the card shows it; the
    heading, the admin's own text, stays in the admin's language (en-US)."""
    fake = onair.fake
    guild = fake.guilds[0]
    channel = guild.channels[0]
    await onair.bot.storage.upsert_subscription(
        Subscription(0, guild.id, channel, "main", mode="card")
    )
    await fake.response(await fake.slash("onair", {"language": "de"}, sub=["settings"]))
    iid = await fake.slash(
        "onair",
        {"channel": str(channel)},
        sub=["template", "preview"],
        resolved=fake.resolved_channel(channel, guild),
    )
    preview = await fake.final_message(iid)
    assert preview["flags"] & EPHEMERAL
    assert preview["content"].startswith("-# Preview of the AutoDJ wording")
    embed = preview["embeds"][0]
    assert re.search(r"· \d+ hören zu$", embed["footer"]["text"]), embed["footer"]["text"]
    assert embed["timestamp"]  # a card says when the track started
    labels = [b["label"] for row in preview["components"] for b in row["components"]]
    assert labels[:2] == ["Anhören", "Webplayer"]
