"""/join and /leave in a listener's language (issue 24), end to end with real audio: the setup
of test_voice_bot (FFmpeg, the fake Icecast, a listener in a voice channel)."""

from __future__ import annotations

import pytest

from .support.voice_bot import LISTENER, icecast_fixture, mp3_fixture, reply_of, voice_bot
from .test_i18n_bot import english_left

pytestmark = pytest.mark.e2e
__all__ = ["icecast_fixture", "mp3_fixture"]  # the voice fixtures, used here too


async def test_join_and_leave_in_the_listeners_language(live_simulator, icecast):
    async with voice_bot(live_simulator, icecast) as voice:
        voice.fake.user_locales[LISTENER] = "de"
        channel = voice.channels[voice.guild.id]
        message = await voice.join()
        assert message["content"] == f"▶ **Main FM** läuft jetzt in <#{channel}>."
        await voice.playing()
        iid = await voice.fake.slash("leave", {}, user_id=LISTENER)
        message = await reply_of(voice.env, iid)
        assert message["content"] == "⏹ Gestoppt und den Sprachkanal verlassen."
        assert english_left(message["content"], "de", ("Main FM",)) == []
