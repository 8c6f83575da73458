"""Voice against a fake Icecast 2 that serves each mount as the real one does (issue 27): a 64
KiB burst starting mid-frame or mid-page, then real-time pacing in MP3 frames, ADTS frames or
Ogg pages of about 1 s. Through the real discord.py client; frames are counted where Discord
would receive them, at the fake voice server.

Each test asserts the order of events, never how long something took: the burst alone is enough
to hear the station (the fake sends nothing more until the first audio frame arrives), before any
no-audio timer restarted the decoder; an upstream drop (Icecast's killclient) is followed by audio
from the new connection, and a second guild plays too; and every frame the fake sent is heard
once: the frames counted at the voice server are the seconds of sound the fake sent x 50 (less
what a reconnect's burst replaced, which the bot reports), within a few frames of decoder start
and end.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.voice import find_ffmpeg
from bot.voice.broadcasts import Broadcasts

from .support.fakediscord import Guild
from .support.fakeicecast import FakeIcecast
from .support.icecast_media import FORMATS, Media, make_media
from .support.voice_bot import Voice, voice_bot
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e  # the fake Discord and its voice server

# Frames a decoder run may add or lose at its start (a cut frame, the resampler, the encoder's
# look-ahead) and end (its last partial frame): measured 0-6 by piping the fake's bytes through
# the bot's FFmpeg command line.
PER_CONNECTION = 8


@pytest.fixture(scope="session")
def media_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("icecast")


def hub_of(voice: Voice) -> Broadcasts:
    hub = voice.env.bot.voice.hub
    assert hub is not None
    return hub


def stats_of(voice: Voice) -> tuple[int, int, int]:
    """The station's decoder restarts, and the frames its pacer dropped and replaced."""
    stats = hub_of(voice).stats()["main"]
    return stats.restarts, stats.frames_dropped, stats.frames_replaced


async def media_for(name: str, folder: Path) -> Media:
    binary = find_ffmpeg()
    assert binary is not None, "no FFmpeg: install the imageio-ffmpeg wheel (pip install -e .)"
    return await asyncio.to_thread(make_media, binary.path, name, folder)


@pytest.mark.parametrize("mount", sorted(FORMATS))
async def test_a_mount_plays_from_its_burst_through_a_drop_and_drops_no_frame(
    live_simulator, media_folder: Path, mount: str
) -> None:
    media = await media_for(mount, media_folder)
    async with (
        FakeIcecast(media) as icecast,
        voice_bot(live_simulator, icecast, guilds=2) as voice,
    ):
        first, second = voice.fake.guilds

        def audio(guild: Guild = first) -> int:
            return voice.fake.voice.stats(guild.id).audio

        # 1. The burst alone plays: the fake sends nothing after it until audio is heard, and
        #    no no-audio timer restarted the decoder before (it would have opened a connection).
        icecast.hold()
        message = await voice.join(first)
        assert message["content"].startswith("▶ Playing **Main FM**")
        await wait_for(lambda: audio() >= 1, within=30)
        assert (icecast.connections, icecast.open_connections) == (1, 1)
        assert stats_of(voice) == (0, 0, 0)
        icecast.release()

        # 2. It goes on in real time with no restart.
        await wait_for(lambda: audio() >= 200, within=30)
        assert (icecast.connections, stats_of(voice)[0]) == (1, 0)

        # 3. An upstream drop (killclient): the decoder reconnects once, and audio the first
        #    connection could not have carried arrives: the new connection's.
        supplied = icecast.listeners[0].seconds * 50 + PER_CONNECTION
        assert icecast.drop_all() == 1
        await wait_for(lambda: audio() > supplied, within=30)
        assert icecast.connections == 2
        assert stats_of(voice)[0] == 1
        # A second guild on the same station plays too, from the same decoder.
        await voice.join(second)
        await wait_for(lambda: audio(second) >= 50, within=30)
        assert icecast.connections == 2

        # 4. The station goes away: the decoder ends its audio (its stdin closes) and every
        #    frame sent is heard by the first guild exactly once.
        icecast.refuse_new = True
        assert icecast.drop_all() == 1
        _, dropped, replaced = stats_of(voice)
        expected = icecast.sent_seconds * 50 - replaced
        slack = PER_CONNECTION * icecast.connections
        await wait_for(lambda: audio() >= expected - slack, within=30)
        assert dropped == 0
        stats = voice.fake.voice.stats(first.id)
        assert stats.audio <= expected + slack, (stats.audio, expected)
        assert stats.gaps == 0
        assert voice.fake.voice.stats(second.id).gaps == 0
