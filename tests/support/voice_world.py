"""What the fake voice server's tests share: a fake Discord with a voice and a stage channel and
a listener in them, a real discord.py client on it (``voice_world``, the ``world`` fixture), a
sine FFmpeg plays, and joining and counting frames.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

import discord
import imageio_ffmpeg
import pytest

from .fakediscord import CONNECT, MUTE_MEMBERS, SPEAK, FakeDiscord, Guild
from .waiting import wait_for

LISTENER = 424242424242424242
OTHER = 434343434343434343


@dataclass
class Voice:
    """The fake, its guild, its voice channels and a connected discord.py client."""

    fake: FakeDiscord
    guild: Guild
    radio: int  # a voice channel the listener is in from GUILD_CREATE on
    lounge: int  # a second voice channel
    stage: int  # a stage where the bot may not unsuppress itself
    podium: int  # a stage where it may (Mute Members allowed)
    locked: int  # Connect denied to the bot
    mute: int  # Speak denied to the bot
    client: discord.Client

    def channel(self, channel_id: int) -> discord.VoiceChannel | discord.StageChannel:
        found = self.client.get_channel(channel_id)
        assert isinstance(found, discord.VoiceChannel | discord.StageChannel)
        return found

    @property
    def me(self) -> discord.Member:
        guild = self.client.get_guild(self.guild.id)
        assert guild is not None
        return guild.me


def sine() -> discord.FFmpegOpusAudio:
    """FFmpeg's endless sine source, encoded by FFmpeg itself (no libopus in Python)."""
    return discord.FFmpegOpusAudio(
        "sine=frequency=440:sample_rate=48000",
        executable=imageio_ffmpeg.get_ffmpeg_exe(),
        before_options="-f lavfi",
    )


@contextlib.asynccontextmanager
async def real_client(fake: FakeDiscord) -> AsyncIterator[discord.Client]:
    """discord.py with the intents voice needs (guilds | voice_states), connected to the fake."""
    intents = discord.Intents.none()
    intents.guilds = True
    intents.voice_states = True
    client = discord.Client(intents=intents, connector=fake.connector(), guild_ready_timeout=0.05)
    task: asyncio.Task[None] | None = None
    try:
        await client.login(fake.expected_token)
        task = asyncio.create_task(client.connect(reconnect=True))
        await asyncio.wait_for(client.wait_until_ready(), timeout=15)
        yield client
    finally:
        for vc in list(client.voice_clients):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(vc.disconnect(force=True), timeout=5)
        await client.close()
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=10)


@contextlib.asynccontextmanager
async def voice_world(*, dave_version: int = 1) -> AsyncIterator[Voice]:
    fake = FakeDiscord()
    fake.voice.dave_version = dave_version
    guild = fake.guilds[0]
    radio = fake.add_voice_channel(guild, "Radio")
    lounge = fake.add_voice_channel(guild, "Lounge")
    stage = fake.add_voice_channel(guild, "Stage", stage=True)
    podium = fake.add_voice_channel(guild, "Podium", stage=True, bot_allow=MUTE_MEMBERS)
    locked = fake.add_voice_channel(guild, "Locked", bot_deny=CONNECT)
    mute = fake.add_voice_channel(guild, "Quiet", bot_deny=SPEAK)
    await fake.start()
    try:
        await fake.set_member_voice(guild, LISTENER, radio, name="early-listener")
        async with real_client(fake) as client:
            yield Voice(fake, guild, radio, lounge, stage, podium, locked, mute, client)
    finally:
        await fake.stop()


@pytest.fixture(name="world")
async def world_fixture() -> AsyncIterator[Voice]:
    async with voice_world() as voice:
        yield voice


async def join_and_play(
    world: Voice, channel_id: int, cls: type[discord.VoiceClient] = discord.VoiceClient
) -> discord.VoiceClient:
    vc = await world.channel(channel_id).connect(timeout=10.0, cls=cls)
    vc.play(sine())
    return vc


async def frames_at_least(world: Voice, count: int, within: float = 15.0) -> None:
    await wait_for(lambda: world.fake.voice.stats(world.guild.id).audio >= count, within=within)
