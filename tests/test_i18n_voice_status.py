"""Voice in the guild's and the listener's language, end to end with real audio (the
setup of test_shows_bot and test_voice_bot): the voice channel status of a live show in the
guild's language, and /join naming the permissions it lacks as Discord's client names them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.shows.text import voice_status
from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, StationSimulator
from bot.station import Play
from bot.util.i18n import Translator

from .support.fakediscord import CONNECT, SET_VOICE_CHANNEL_STATUS, VIEW_CHANNEL
from .support.fakeicecast import FakeIcecast
from .support.shows_bot import advance, channel_of, poll, shown, status_puts
from .support.voice_bot import LISTENER, Voice, icecast_fixture, mp3_fixture, voice_bot
from .support.waiting import wait_for
from .test_announcer_bot import programme_sim
from .test_i18n_bot import english_left, worded_in_each

pytestmark = pytest.mark.e2e
__all__ = ["icecast_fixture", "mp3_fixture", "programme_sim"]  # fixtures made elsewhere


def test_the_live_status_and_stage_topic_in_each_language():
    translator = Translator.load()
    live = Play(title="Friday Mix", artist="DJ", live=True)
    expected = {
        "pt_BR": "🔴 AO VIVO: DJ - Friday Mix",
        "es": "🔴 EN VIVO: DJ - Friday Mix",
        "de": "🔴 LIVE: DJ - Friday Mix",
        "fr": "🔴 EN DIRECT : DJ - Friday Mix",
    }
    worded_in_each(translator, expected, lambda lang: voice_status(live, lang))
    assert voice_status(live) == "🔴 LIVE: DJ - Friday Mix"  # English as before
    music = Play(title="Title", artist="Artist")
    assert voice_status(music, translator.lang("pt_BR")) == "🎵 Artist - Title"  # no words
    # The longer prefix leaves less room for the station's text: the line still fits.
    long = Play(title="x" * 5000, artist="A", live=True)
    for code in expected:
        status = voice_status(long, translator.lang(code))
        assert status is not None
        assert len(status) <= 500
        assert status.startswith(expected[code].split("DJ")[0])


@contextlib.asynccontextmanager
async def joined_in(
    locale: str, simulator: StationSimulator, icecast: FakeIcecast, **options: Any
) -> AsyncIterator[tuple[Voice, dict[str, Any], int]]:
    """The listener (Discord in ``locale``) used /join on a voice bot set up with ``options``:
    (the voice bot, the join's reply, the guild's voice channel)."""
    async with voice_bot(simulator, icecast, **options) as voice:
        voice.fake.user_locales[LISTENER] = locale
        message = await voice.join()
        yield voice, message, voice.channels[voice.guild.id]


async def test_a_portuguese_guild_gets_its_voice_status_in_portuguese(programme_sim, icecast):
    async with voice_bot(programme_sim, icecast, bot_allow=SET_VOICE_CHANNEL_STATUS) as voice:
        fake, guild = voice.fake, voice.guild
        iid = await fake.slash("onair", {"language": "pt_BR"}, sub=["settings"], guild=guild)
        assert "Português (Brasil)" in (await fake.response(iid)).json["data"]["content"]
        vc = channel_of(fake, guild, voice.channels[guild.id])
        await voice.join()
        await wait_for(lambda: vc.status == shown(TRACKS[0]))  # music: no words to translate
        advance(programme_sim, 21)  # the jingle
        await poll(voice.env)
        await wait_for(lambda: vc.status == shown(JINGLES[0]))
        advance(programme_sim, 25)  # the live show
        await poll(voice.env)
        live = f"🔴 AO VIVO: {LIVE_SHOW.artist} - {LIVE_SHOW.title}"
        await wait_for(lambda: vc.status == live)
        assert status_puts(fake, vc.id)[-1] == live
        own = (LIVE_SHOW.artist or "", LIVE_SHOW.title)
        assert english_left(live, "pt_BR", own) == []


async def test_join_names_the_missing_permissions_in_the_listeners_language(
    live_simulator, icecast
):
    deny = VIEW_CHANNEL | CONNECT
    async with joined_in("de", live_simulator, icecast, bot_deny=deny) as (voice, message, channel):
        assert message["content"] == (
            f"Ich kann in <#{channel}> nicht spielen: Dafür brauche ich dort die Berechtigungen "
            "**Kanal ansehen und Verbinden**. Bitte einen Server-Admin, das zu erlauben."
        )
        assert english_left(message["content"], "de") == []
        assert voice.fake.bot_voice == {}


async def test_the_stage_note_after_a_join_is_in_the_listeners_language(live_simulator, icecast):
    async with joined_in("pt-BR", live_simulator, icecast, stage=True) as (_, message, channel):
        assert message["content"] == (
            f"▶ Tocando a **Main FM** em <#{channel}>.\nPedi para falar no palco <#{channel}>: "
            "um moderador do palco pode me convidar para subir e ser ouvido."
        )
        assert english_left(message["content"], "pt_BR", ("Main FM",)) == []
