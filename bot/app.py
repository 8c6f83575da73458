"""Build everything in one place (settings, session, clients, scheduler, bot) and run it."""

from __future__ import annotations

import sys
from datetime import UTC
from typing import Any

import aiohttp
import discord
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from .config import TOKEN_ENV, ConfigError, Settings, load_settings
from .core import OnAirBot
from .keybox import KeyBox, KeyBoxError
from .logs import setup_logging
from .netguard import GuardedResolver, policy_for, trusted_hosts
from .stations import StationRegistry
from .storage import create_storage

EXIT_CONFIG = 78


def create_bot(
    settings: Settings, *, connector: aiohttp.BaseConnector | None = None, **options: Any
) -> OnAirBot:
    """The bot and its services. ``connector`` lets tests point discord.py at a fake Discord."""
    policy = policy_for(
        settings.allowed_station_hosts,
        allow_http=settings.allow_http_station_urls,
        allow_private=settings.allow_private_station_urls,
        allowed_ports=settings.allowed_station_ports,
    )
    trusted = trusted_hosts([s.base_url for s in settings.stations])
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


async def run_bot(config_path: str) -> int:
    try:
        settings = load_settings(config_path)
    except ConfigError as error:
        print(f"onair: {error}", file=sys.stderr)
        return EXIT_CONFIG
    if not settings.token:
        print(
            f"onair: no Discord bot token: set {TOKEN_ENV} in the environment "
            "(the token never goes into the config file). Try `onair demo` to see OnAir offline.",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    setup_logging(
        settings.log_level,
        secrets=[settings.token, settings.secret_key, *(s.key for s in settings.stations)],
    )
    try:
        bot = create_bot(settings)
    except KeyBoxError as error:
        print(f"onair: {error.message}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        async with bot:
            await bot.start(settings.token)
    except discord.LoginFailure:
        print(f"onair: Discord refused the bot token in {TOKEN_ENV}.", file=sys.stderr)
        return EXIT_CONFIG
    return 0
