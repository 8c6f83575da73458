"""What the voice tests through the real bot share: the bot with a voice channel per guild and
the main station's stream on a fake Icecast (``voice_bot``), the listener in it, and the
checks of an ephemeral reply.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from bot.simulator import StationSimulator
from bot.voice import find_ffmpeg

from .botenv import BotEnv, running_bot
from .discord_rules import EPHEMERAL
from .fakediscord import (
    FakeDiscord,
    Guild,
)
from .fakeicecast import FakeIcecast, make_mp3
from .fakevoice import FrameStats
from .waiting import wait_for


def no_sessions(env: BotEnv) -> Any:
    async def check() -> bool:
        return await env.bot.storage.voice_sessions() == []

    return check


async def reply_of(env: BotEnv, iid: str) -> dict[str, Any]:
    """The command's final message, checked to be ephemeral (every voice error is)."""
    message = await env.fake.final_message(iid)
    callback = (await env.fake.response(iid)).json
    flags = (callback.get("data") or {}).get("flags", 0) | message.get("flags", 0)
    assert flags & EPHEMERAL, message
    return message


LISTENER = 700000000000000001
SECOND = 700000000000000002
MANAGE_GUILD = 1 << 5  # Discord's Manage Server permission


@pytest.fixture(scope="session", name="mp3")
def mp3_fixture(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    binary = find_ffmpeg()
    assert binary is not None, "no FFmpeg: install the imageio-ffmpeg wheel (pip install -e .)"
    return make_mp3(binary.path, tmp_path_factory.mktemp("voice") / "sine.mp3").read_bytes()


@pytest.fixture(name="icecast")
async def icecast_fixture(mp3: bytes) -> AsyncIterator[FakeIcecast]:
    async with FakeIcecast(mp3) as server:
        yield server


@dataclass
class Voice:
    env: BotEnv
    fake: FakeDiscord
    icecast: FakeIcecast
    channels: dict[int, int]  # guild id → its voice channel

    @property
    def guild(self) -> Guild:
        return self.fake.guilds[0]

    async def join(self, guild: Guild | None = None, **options: str) -> dict[str, Any]:
        guild = guild or self.guild
        iid = await self.fake.slash("join", options, guild=guild, user_id=LISTENER)
        return await reply_of(self.env, iid)

    async def playing(self, guild: Guild | None = None, frames: int = 100) -> FrameStats:
        """Wait until ``frames`` audio frames from the guild's player reached the voice server."""
        guild = guild or self.guild
        await wait_for(lambda: self.fake.voice.stats(guild.id).audio >= frames, within=20)
        return self.fake.voice.stats(guild.id)


@contextlib.asynccontextmanager
async def voice_bot(
    sim: StationSimulator,
    icecast: FakeIcecast,
    *,
    fake: FakeDiscord | None = None,
    guilds: int = 1,
    stage: bool = False,
    bot_allow: int = 0,
    bot_deny: int = 0,
    station_extra: str = "",
    stream_url: str | None = None,
    **options: Any,
) -> AsyncIterator[Voice]:
    """The bot with a voice channel per guild (the listener in it), the main station's stream on
    the fake Icecast, short voice timeouts."""
    own = fake is None
    fake = fake or FakeDiscord(guild_count=guilds)
    channels: dict[int, int] = {}
    if own:
        for guild in fake.guilds:
            channels[guild.id] = fake.add_voice_channel(
                guild, "Radio", stage=stage, bot_allow=bot_allow, bot_deny=bot_deny
            )
        await fake.start()
        for guild in fake.guilds:
            await fake.set_member_voice(guild, LISTENER, channels[guild.id])
    else:
        channels = {g.id: g.voice_channels[0].id for g in fake.guilds}
    try:
        # stream_url="": the station's own best listen link, as a config without one plays.
        stream = icecast.url if stream_url is None else stream_url
        extra = f'stream_url = "{stream}"\n{station_extra}' + options.pop("extra_config", "")
        async with running_bot(sim, fake=fake, extra_config=extra, **options) as env:
            env.bot.voice.connect_timeout = 5.0
            env.bot.voice.rejoins.delays = (0.2, 0.5, 1.0)
            yield Voice(env, fake, icecast, channels)
    finally:
        if own:
            await fake.stop()


def radio_and_lounge() -> tuple[FakeDiscord, Guild, int, int]:
    """A fake Discord whose first guild has two voice channels: (fake, guild, Radio, Lounge)."""
    fake = FakeDiscord()
    guild = fake.guilds[0]
    return (
        fake,
        guild,
        fake.add_voice_channel(guild, "Radio"),
        fake.add_voice_channel(guild, "Lounge"),
    )
