"""The fake Discord, the station simulator and the real OnAirBot, wired as `onair run` does."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from cryptography.fernet import Fernet

from bot.app import create_bot
from bot.config import parse_settings
from bot.runtime.core import OnAirBot
from bot.simulator import StationSimulator

from .fakediscord import FakeDiscord

STATION_KEY = "station-key-SECRET-42"
GUILD_KEY = "guild-typed-KEY-77777"  # the key a guild admin types for station 5 of ``guild_sim``
SECRET = Fernet.generate_key().decode()  # ONAIR_SECRET_KEY: encrypts guild keys at rest
# The development override (off by default) that lets guild stations live on loopback.
DEV_OVERRIDE = "allow_private_station_urls = true\n"


def fake_discord_fixture(
    name: str = "fake", *, prepare: Callable[[FakeDiscord], None] | None = None, **options: Any
) -> Any:
    """A pytest fixture called ``name`` that yields a started ``FakeDiscord(**options)`` and
    stops it after the test; ``prepare`` edits it (guild ids, ...) before it starts. A test module
    assigns it: ``fake = fake_discord_fixture(channels_per_guild=3)``."""

    @pytest.fixture(name=name)
    async def fixture() -> AsyncIterator[FakeDiscord]:
        server = FakeDiscord(**options)
        if prepare is not None:
            prepare(server)
        async with server:
            yield server

    return fixture


def subscription_config(guild: int, channel: int, station: str = "main", **options: object) -> str:
    """One ``[[subscriptions]]`` table of the config file (options as TOML values)."""
    lines = [
        "[[subscriptions]]",
        f"guild = {guild}",
        f"channel = {channel}",
        f"station = {json.dumps(station)}",
    ]
    for key, value in options.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {str(value).lower()}")
        elif isinstance(value, str):
            lines.append(f"{key} = {json.dumps(value)}")
        else:
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def channel_subscription(fake: FakeDiscord, channel_index: int = 0, **options: Any) -> str:
    """The subscription of channel ``channel_index`` of the fake's first guild."""
    guild = fake.guilds[0]
    return subscription_config(guild.id, guild.channels[channel_index], **options)


def config_text(
    sim: StationSimulator,
    fake: FakeDiscord,
    *,
    extra: str = "",
    stations: int = 1,
    db_path: str = ":memory:",
    bot_extra: str = "",
    database_extra: str = "",
    cache_seconds: float = 5.0,
    station_options: str = "",
    links_extra: str = "enabled = false",
) -> str:
    """The bot's config on ``sim`` and ``fake``. "Find this song" is off unless a test gives
    ``links_extra`` (e.g. ``lookup_url`` at the simulator's search): Apple's is never asked."""
    guild = fake.guilds[0]
    parts = [
        "[bot]",
        'default_station = "main"',
        f"cache_seconds = {cache_seconds:g}",
        bot_extra,
        "",
        "[database]",
        f'path = "{db_path}"',
        database_extra,
        "",
        "[links]",
        links_extra,
        "",
    ]
    for index in range(stations):
        slug = "main" if index == 0 else f"second{index}"
        parts += [
            "[[stations]]",
            f'id = "{slug}"',
            f'name = "{"Main FM" if index == 0 else f"Second {index} FM"}"',
            f'base_url = "{sim.base_url}"',
            f"station_id = {index + 1}",
            'key_env = "ONAIR_TEST_STATION_KEY"',
            'timezone = "Europe/Berlin"',
            f"guilds = [{guild.id}]" if index else "guilds = []",
            station_options,
            "",
        ]
    return "\n".join(parts) + extra


@dataclass
class BotEnv:
    fake: FakeDiscord
    sim: StationSimulator
    bot: OnAirBot
    task: asyncio.Task[None]

    @property
    def guild(self) -> Any:
        return self.fake.guilds[0]


@contextlib.asynccontextmanager
async def running_bot(
    sim: StationSimulator,
    *,
    fake: FakeDiscord | None = None,
    extra_config: str = "",
    env_extra: dict[str, str] | None = None,
    **options: Any,
) -> AsyncIterator[BotEnv]:
    """The bot on the fake Discord and ``sim``. ``options`` named like ``config_text``'s
    (stations, db_path, cache_seconds, ...) go to the config file, the rest to ``create_bot``:
    the config's options and their defaults are written once, in ``config_text``."""
    own_fake = fake is None
    fake = fake or FakeDiscord()
    if own_fake:
        await fake.start()
    env = {"ONAIR_TEST_STATION_KEY": STATION_KEY, "ONAIR_DISCORD_TOKEN": fake.expected_token}
    env.update(env_extra or {})
    config_names = inspect.signature(config_text).parameters.keys() - {"sim", "fake", "extra"}
    config = {name: options.pop(name) for name in config_names & options.keys()}
    settings = parse_settings(config_text(sim, fake, extra=extra_config, **config), env)
    options.setdefault("guild_ready_timeout", 0.05)
    bot = create_bot(settings, connector=fake.connector(), **options)
    task: asyncio.Task[None] | None = None
    try:
        await bot.login(settings.token or "")
        task = asyncio.create_task(bot.connect(reconnect=True))
        await asyncio.wait_for(bot.wait_until_ready(), timeout=15)
        yield BotEnv(fake, sim, bot, task)
    finally:
        await bot.close()
        if task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(task, timeout=10)
        if own_fake:
            await fake.stop()


@contextlib.asynccontextmanager
async def command_reply(
    sim: StationSimulator, command: str
) -> AsyncIterator[tuple[BotEnv, dict[str, Any]]]:
    """OnAir running (its own fake Discord) and its final reply to ``/command``: (env, message)."""
    async with running_bot(sim) as env:
        yield env, await env.fake.final_message(await env.fake.slash(command))
