"""Build everything in one place (settings, session, clients, scheduler, bot) and run it."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from datetime import UTC
from typing import Any

import aiohttp
import discord
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from yarl import URL

from .commandsync import state_path, sync_commands
from .config import TOKEN_ENV, ConfigError, Settings, load_settings
from .core import OnAirBot
from .keybox import KeyBox, KeyBoxError
from .logs import setup_logging
from .netguard import GuardedResolver, policy_for
from .startup import Backoff, announce_when_ready, connection_problem
from .stations import StationRegistry
from .storage import create_storage

EXIT_UNAVAILABLE = 69
EXIT_SOFTWARE = 70
EXIT_CONFIG = 78
_LOGGER = logging.getLogger("onair")


def create_bot(
    settings: Settings, *, connector: aiohttp.BaseConnector | None = None, **options: Any
) -> OnAirBot:
    """The bot and its services. ``connector`` lets tests point discord.py at a fake Discord."""
    policy = policy_for(
        settings.allowed_station_hosts,
        allow_http=settings.allow_http_station_urls,
        allow_private=settings.allow_private_station_urls,
    )
    trusted = frozenset(URL(s.base_url).host or "" for s in settings.stations)
    # The one session for every station request; its resolver refuses internal addresses
    # for any host but the owner's own config stations (checked at connect time).
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(
            resolver=GuardedResolver(policy, trusted_hosts=trusted), limit=200, ttl_dns_cache=60
        ),
        timeout=aiohttp.ClientTimeout(total=15, connect=5),
        headers={"User-Agent": "OnAir/0.1 (Discord bot; +https://github.com/onair-bot)"},
    )
    registry = StationRegistry(settings, session)
    storage = create_storage(settings.database_url or settings.database_path)
    scheduler = AsyncIOScheduler(
        timezone=UTC, job_defaults={"misfire_grace_time": None, "coalesce": True}
    )
    if connector is not None:
        options["connector"] = connector
    # OnAir has no voice feature: discord.py's "PyNaCl/davey is not installed" warnings are noise.
    discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
    if settings.shard_count:
        options.setdefault("shard_count", settings.shard_count)
        if settings.shard_ids:
            options.setdefault("shard_ids", list(settings.shard_ids))
    return OnAirBot(
        settings,
        session=session,
        registry=registry,
        storage=storage,
        scheduler=scheduler,
        keybox=KeyBox(settings.secret_key),
        **options,
    )


def _config_problems(error: ConfigError) -> int:
    for problem in error.problems:
        print(f"onair: {problem}", file=sys.stderr)
    return EXIT_CONFIG


def load_for_discord(config_path: str) -> Settings | int:
    """Settings with a token, or the exit code after saying (one line each) what is wrong."""
    try:
        settings = load_settings(config_path)
    except ConfigError as error:
        return _config_problems(error)
    if not settings.token:
        print(
            f"onair: no Discord bot token: set {TOKEN_ENV} in the environment "
            "(the token never goes into the config file). Try `onair demo` to see OnAir offline.",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    return settings


async def run_bot(
    config_path: str,
    *,
    discord_connector: Callable[[], aiohttp.BaseConnector] | None = None,
    backoff: Backoff | None = None,
) -> int:
    """Run until closed. Discord unreachable (DNS, refused, TLS, 5xx): one line and a retry with
    a fresh bot after a capped exponential backoff. A refused token: one line, exit 78."""
    loaded = load_for_discord(config_path)
    if isinstance(loaded, int):
        return loaded
    settings = loaded
    setup_logging(
        settings.log_level,
        secrets=[settings.token, settings.secret_key, *(s.key for s in settings.stations)],
    )
    backoff = backoff or Backoff()
    while True:
        try:
            bot = create_bot(settings, connector=discord_connector() if discord_connector else None)
        except KeyBoxError as error:
            print(f"onair: {error.message}", file=sys.stderr)
            return EXIT_CONFIG
        announce_when_ready(bot, backoff)
        try:
            async with bot:
                await bot.start(settings.token or "")
            return 0
        except discord.LoginFailure:
            _LOGGER.error("Discord refused the bot token in %s (exit %d)", TOKEN_ENV, EXIT_CONFIG)
            return EXIT_CONFIG
        except Exception as error:
            problem = connection_problem(error)
            _LOGGER.debug("start-up failure", exc_info=error)
            if problem is None:
                _LOGGER.error("start-up failed: %s: %s", type(error).__name__, error)
                return EXIT_SOFTWARE
            delay = backoff.next()
            _LOGGER.warning("cannot reach Discord: %s; retrying in %.0f s", problem, delay)
            await asyncio.sleep(delay)


async def sync_once(
    config_path: str, guild_id: int | None, *, connector: aiohttp.BaseConnector | None = None
) -> int:
    """`onair sync`: register the slash commands (globally, or in one guild) and exit; records
    the tree's hash so the next `run` does not sync again."""
    loaded = load_for_discord(config_path)
    if isinstance(loaded, int):
        return loaded
    settings = loaded
    setup_logging(settings.log_level, secrets=[settings.token, settings.secret_key])
    target = settings.dev_guild if guild_id is None else guild_id
    try:
        bot = create_bot(settings, connector=connector, commands_only=True)
    except KeyBoxError as error:
        print(f"onair: {error.message}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        async with bot:
            await bot.login(settings.token or "")
            synced = await sync_commands(
                bot, bot.tree, target, state=state_path(settings), force=True
            )
    except discord.LoginFailure:
        print(f"onair: Discord refused the bot token in {TOKEN_ENV}.", file=sys.stderr)
        return EXIT_CONFIG
    except Exception as error:
        _LOGGER.debug("sync failed", exc_info=error)
        problem = connection_problem(error) or f"{type(error).__name__}: {error}"
        print(f"onair: could not sync the commands: {problem}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    where = f"in guild {target} (visible at once)" if target else "globally"
    print(f"Synced {len(synced or [])} application commands {where}.")
    return 0
