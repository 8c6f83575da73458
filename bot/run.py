"""``onair run`` and ``onair sync``: read the settings, check what can be checked before login
(each problem one line naming its setting), then run the bot built by ``bot.app.create_bot``,
retrying while Discord cannot be reached, until it stops or a signal stops it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Callable

import aiohttp
import discord

from .app import create_bot
from .config import TOKEN_ENV, ConfigError, Settings, load_settings
from .config.examples import example_ids_in
from .guard.keybox import KeyBox, KeyBoxError
from .runtime.commandsync import state_path, sync_commands
from .runtime.core import OnAirBot
from .runtime.envfile import is_placeholder, placeholder_line
from .runtime.logs import setup_logging
from .runtime.preflight import PreflightError, metrics_port_problem, prepare_database
from .runtime.startup import Backoff, announce_when_ready, connection_problem
from .runtime.stopping import Stop, run_until_signalled, stop_on_signals
from .runtime.tokenshape import RESET_WHERE, token_problem, token_problem_line
from .storage import SchemaTooNew
from .util.metrics import Metrics, MetricsServer

EXIT_UNAVAILABLE = 69
EXIT_SOFTWARE = 70
EXIT_CONFIG = 78
_LOGGER = logging.getLogger("onair")


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
    if settings.token and is_placeholder(settings.token):
        print(
            f"onair: {placeholder_line(TOKEN_ENV, 'the bot token')} (Developer Portal -> your "
            "application -> Bot -> Reset Token)",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    if not settings.token:
        print(
            f"onair: no Discord bot token: set {TOKEN_ENV} in the environment "
            "(the token never goes into the config file). Try `onair demo` to see OnAir offline.",
            file=sys.stderr,
        )
        return EXIT_CONFIG
    problem = token_problem(settings.token)
    if problem is not None:
        print(f"onair: {token_problem_line(TOKEN_ENV, problem)}", file=sys.stderr)
        return EXIT_CONFIG
    return settings


def _refused_token_line() -> str:
    """Discord refused a token of the right shape (401): it was reset, or never this bot's."""
    return (
        f"Discord refused the bot token in {TOKEN_ENV}: reset it in the Developer Portal "
        f"({RESET_WHERE}) and put the new one there"
    )


async def run_bot(
    config_path: str,
    *,
    discord_connector: Callable[[], aiohttp.BaseConnector] | None = None,
    backoff: Backoff | None = None,
) -> int:
    """``onair run`` until closed or SIGTERM/SIGINT (exit 0). Discord unreachable (DNS, refused,
    TLS, 5xx): one line and a retry with a fresh bot after a capped exponential backoff. A refused
    token: one line, exit 78. ``discord_connector`` makes the connector discord.py uses (tests
    point it at a fake Discord); by default discord.py makes its own."""
    stop = Stop()
    # First: a Ctrl+C at any later stage stops on the event loop, not as a KeyboardInterrupt.
    with stop_on_signals(stop):
        code = await _run(config_path, stop, backoff or Backoff(), discord_connector)
    stop.say("preparing")  # a signal before the first login (said once: a later stage said it)
    return code


async def _run(
    config_path: str,
    stop: Stop,
    backoff: Backoff,
    discord_connector: Callable[[], aiohttp.BaseConnector] | None,
) -> int:
    loaded = load_for_discord(config_path)
    if isinstance(loaded, int):
        return loaded
    settings = loaded
    setup_logging(
        settings.log_level,
        secrets=[settings.token, settings.secret_key, *(s.key for s in settings.stations)],
    )
    for line in example_ids_in(settings):
        _LOGGER.warning("%s", line)
    try:
        KeyBox(settings.secret_key)  # (a bad key is refused before the database is touched)
    except KeyBoxError as error:
        print(f"onair: {error.message}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        lock = await prepare_database(settings)
    except PreflightError as error:
        print(f"onair: {error.message}", file=sys.stderr)
        return EXIT_CONFIG
    try:
        return await _serve(settings, stop, backoff, discord_connector)
    finally:
        if lock is not None:
            lock.release()


async def _serve(
    settings: Settings,
    stop: Stop,
    backoff: Backoff,
    discord_connector: Callable[[], aiohttp.BaseConnector] | None,
) -> int:
    health = _Health()
    server: MetricsServer | None = None
    if settings.metrics_port:
        # Up before the first login and across retries: /healthz answers 503 while Discord
        # cannot be reached (a refused connection looks like a dead process).
        server = MetricsServer(health.metrics, health.healthy)
        try:
            await server.start(settings.metrics_host, settings.metrics_port)
        except OSError as error:
            print(f"onair: {metrics_port_problem(settings, error)}", file=sys.stderr)
            return EXIT_CONFIG
    try:
        return await _run_with_retries(
            settings, stop, backoff, health, discord_connector=discord_connector
        )
    finally:
        if server is not None:
            await server.stop()


class _Health:
    """What /healthz asks across retries: the bot of the current attempt, if any."""

    def __init__(self) -> None:
        self.metrics = Metrics()
        self.logged_once: set[str] = set()  # start-up lines logged by an earlier attempt
        self.bot: OnAirBot | None = None

    def healthy(self) -> bool:
        return self.bot is not None and self.bot.healthy()


async def _run_with_retries(
    settings: Settings,
    stop: Stop,
    backoff: Backoff,
    health: _Health,
    *,
    discord_connector: Callable[[], aiohttp.BaseConnector] | None,
) -> int:
    """One fresh bot per attempt until it stops by itself, a signal comes, or a failure that
    retrying cannot fix; the exit code."""
    while not stop.is_set():
        try:
            connector = discord_connector() if discord_connector else None
            bot = create_bot(
                settings,
                connector=connector,
                metrics=health.metrics,
                logged_once=health.logged_once,
            )
        except KeyBoxError as error:
            print(f"onair: {error.message}", file=sys.stderr)
            return EXIT_CONFIG
        health.bot = bot
        announce_when_ready(bot, backoff)
        try:
            async with bot:
                await run_until_signalled(bot, settings.token or "", stop)
            return 0
        except discord.LoginFailure:
            _LOGGER.error("%s (exit %d)", _refused_token_line(), EXIT_CONFIG)
            return EXIT_CONFIG
        except SchemaTooNew as error:
            where = "[database] url" if settings.database_url else "[database] path"
            print(f"onair: {where}: {error}", file=sys.stderr)
            return EXIT_CONFIG
        except Exception as error:
            problem = connection_problem(error)
            _LOGGER.debug("start-up failure", exc_info=error)
            if problem is None:
                _LOGGER.error("start-up failed: %s: %s", type(error).__name__, error)
                return EXIT_SOFTWARE
            delay = backoff.next()
            _LOGGER.warning("cannot reach Discord: %s; retrying in %.0f s", problem, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=delay)
            stop.say("waiting to reach Discord")
    return 0


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
        print(f"onair: {_refused_token_line()}", file=sys.stderr)
        return EXIT_CONFIG
    except Exception as error:
        _LOGGER.debug("sync failed", exc_info=error)
        problem = connection_problem(error) or f"{type(error).__name__}: {error}"
        print(f"onair: could not sync the commands: {problem}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    where = f"in guild {target} (visible at once)" if target else "globally"
    print(f"Synced {len(synced or [])} application commands {where}.")
    return 0
