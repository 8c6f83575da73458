"""Build everything in one place (settings, session, clients, scheduler, bot) and run it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import Callable
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
STOP_TIMEOUT = 8.0  # seconds the gateway may take to close after the services have stopped
_LOGGER = logging.getLogger("onair.app")


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
    storage = create_storage(
        settings.database_url or settings.database_path,
        lock_timeout=settings.database_lock_timeout,
    )
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


async def run_bot(
    config_path: str, *, discord_connector: Callable[[], aiohttp.BaseConnector] | None = None
) -> int:
    """``onair run``. ``discord_connector`` makes the connector discord.py uses (tests point it
    at a fake Discord); by default discord.py makes its own."""
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
        bot = create_bot(
            settings, connector=discord_connector() if discord_connector is not None else None
        )
    except KeyBoxError as error:
        print(f"onair: {error.message}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        async with bot:
            await run_until_signalled(bot, settings.token)
    except discord.LoginFailure:
        print(f"onair: Discord refused the bot token in {TOKEN_ENV}.", file=sys.stderr)
        return EXIT_CONFIG
    return 0


async def run_until_signalled(bot: OnAirBot, token: str) -> None:
    """Run until the bot stops or SIGTERM/SIGINT arrives (``docker stop``, ``systemctl stop``,
    Ctrl+C); then stop gracefully: polling stops, sends in flight finish or give their
    delivery back (it stays pending for the next run), the gateway and sessions close."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    signals = (signal.SIGTERM, signal.SIGINT)
    for signum in signals:
        loop.add_signal_handler(signum, stop.set)
    runner = asyncio.create_task(bot.start(token))
    waiter = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({runner, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if runner.done():
            runner.result()  # the bot stopped by itself (or failed to log in: raise that)
            return
        started = time.monotonic()
        _LOGGER.info("signal received: stopping")
        await bot.close()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(runner, timeout=STOP_TIMEOUT)
        _LOGGER.info("stopped in %.2fs", time.monotonic() - started)
    finally:
        waiter.cancel()
        for signum in signals:
            loop.remove_signal_handler(signum)
