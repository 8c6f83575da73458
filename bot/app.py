"""Build everything in one place (settings, session, clients, scheduler, bot) and run it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from datetime import UTC
from typing import Any

import aiohttp
import discord
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from .announcer import WatchScheduler
from .announcer.service import AnnouncerService, PollObserver
from .catalog.onboarding import StationOnboarding
from .catalog.registry import StationRegistry
from .config import TOKEN_ENV, ConfigError, Settings, load_settings
from .delivery.announcements import DiscordDeliverer, RateGate
from .delivery.scheduled import DiscordPostSender
from .guard.keybox import KeyBox, KeyBoxError
from .guard.netguard import GuardedResolver, literal_guard, policy_for, trusted_hosts
from .history.likes import LikeService
from .requests.service import RequestService
from .runtime.commandsync import state_path, sync_commands
from .runtime.core import OnAirBot
from .runtime.logs import setup_logging
from .runtime.startup import Backoff, announce_when_ready, connection_problem
from .scheduled.alert_service import AlertService
from .scheduled.outbox import PostOutbox
from .scheduled.recap_service import RecapService
from .shows.service import ShowsService
from .station import StationError, StationInfo
from .storage import create_storage
from .util.metrics import Metrics, MetricsServer
from .voice import FFMPEG_ENV, Broadcasts, StreamUnreachable, VoiceSender, find_ffmpeg
from .voice.players import Probe, StreamDown
from .voice.service import VoiceService
from .voice.stream import OpenedStream, StreamGuard, open_probed

EXIT_UNAVAILABLE = 69
EXIT_SOFTWARE = 70
EXIT_CONFIG = 78
STOP_TIMEOUT = 8.0  # seconds the gateway may take to close after the services have stopped
VOICE_LINGER = 5.0  # seconds a station's decoder runs on after its last guild left
_LOGGER = logging.getLogger("onair")


def create_bot(
    settings: Settings,
    *,
    connector: aiohttp.BaseConnector | None = None,
    metrics: Metrics | None = None,
    said: set[str] | None = None,
    **options: Any,
) -> OnAirBot:
    """The bot and every service it runs (the composition root: nothing else builds them).
    ``connector`` lets tests point discord.py at a fake Discord; ``metrics`` and ``said`` (the
    start-up lines already logged) outlive one attempt of ``onair run``. A bad ``ONAIR_SECRET_KEY``
    raises :class:`KeyBoxError` before anything that needs closing (the session) is made."""
    keybox = KeyBox(settings.secret_key)
    policy = policy_for(
        settings.allowed_station_hosts,
        allow_http=settings.allow_http_station_urls,
        allow_private=settings.allow_private_station_urls,
        allowed_ports=settings.allowed_station_ports,
    )
    # The owner's config stations' hosts, their own stream_url hosts included (voice).
    trusted = trusted_hosts(
        [s.base_url for s in settings.stations] + [s.stream_url for s in settings.stations]
    )
    # The one session for every station request; its resolver refuses internal addresses
    # for any host but the owner's own config stations (checked at connect time).
    resolver = GuardedResolver(policy, trusted_hosts=trusted)
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(resolver=resolver, limit=200, ttl_dns_cache=60),
        trace_configs=[literal_guard(resolver)],  # IP literals, which no resolver sees
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
    # Tests drive the scheduled posts (alerts, recaps) on a clock of their own.
    clock: Callable[[], float] = options.pop("clock", time.time)
    if connector is not None:
        options["connector"] = connector
    if settings.shard_count:
        options.setdefault("shard_count", settings.shard_count)
        if settings.shard_ids:
            options.setdefault("shard_ids", list(settings.shard_ids))
    bot = OnAirBot(
        settings,
        session=session,
        registry=registry,
        storage=storage,
        scheduler=scheduler,
        keybox=keybox,
        metrics=metrics,
        **options,
    )
    # The announcer posts through the bot's own client; the announcer cog starts and stops it.
    # One pace under Discord's global limit for announcements and the shows' requests.
    gate = RateGate()
    bot.likes = LikeService(storage, wall=clock)
    bot.announcer = AnnouncerService(
        settings,
        registry,
        storage,
        WatchScheduler(scheduler),
        DiscordDeliverer(bot, gate=gate, likes=bot.likes),
    )
    bot.announcer.metrics = bot.metrics
    # Alerts and recaps: recorded, then sent once through one outbox (the scheduled cog runs it).
    bot.posts = PostOutbox(
        storage,
        DiscordPostSender(bot),
        owner=bot.announcer.owner,
        lease=settings.delivery_lease,
        clock=clock,
    )
    bot.alerts = AlertService(settings, registry, storage, bot.posts, clock=clock)
    bot.recaps = RecapService(settings, registry, storage, bot.posts, clock=clock)
    hub, probe = (None, None) if options.get("commands_only") else _voice_engine(session, said)
    bot.voice = VoiceService(
        bot,
        settings,
        registry,
        storage,
        hub=hub,
        probe=probe,
        sender=VoiceSender() if hub is not None else None,
    )
    # Voice channel status and live-show events: told of each station's new plays by the
    # announcer's watch (once per station), and where players start and stop by voice.
    bot.shows = ShowsService(
        bot,
        storage,
        registry,
        bot.voice,
        refresh_watches=bot.announcer.refresh,
        handles_guild=settings.handles_guild,
        pace=gate.acquire,
        guild_configs=settings.guilds,
        offline_after=settings.offline_after,
        clock=clock,
    )
    # Each poll: the alerts judge it, and the shows end a live show's events in an outage.
    bot.announcer.poll_observer = _both(bot.alerts.observe, bot.shows.observe)
    bot.announcer.change_listeners.append(bot.shows.station_changed)
    bot.announcer.also_watch = _followed_stations(bot.alerts, bot.recaps, bot.shows)
    bot.voice.listener = bot.shows
    # Song requests: the credit is decided where plays are fanned out.
    bot.requests = RequestService(settings, registry, storage)
    bot.requests.lister = _request_lister(bot, gate)
    bot.announcer.credit_requests(bot.requests.credits_for)
    bot.onboarding = StationOnboarding(
        settings,
        registry,
        storage,
        bot.keybox,
        is_member=lambda guild: bot.get_guild(guild) is not None,
    )
    return bot


def _request_lister(bot: OnAirBot, gate: RateGate) -> Callable[[int, str], Awaitable[None]]:
    """Posts a line in a guild's request channel (no mention can ping)."""

    async def post(channel_id: int, text: str) -> None:
        channel = bot.get_channel(channel_id)
        if channel is None:
            await gate.acquire()
            channel = await bot.fetch_channel(channel_id)
        if not isinstance(channel, discord.abc.Messageable):
            return
        await gate.acquire()
        await channel.send(text, allowed_mentions=discord.AllowedMentions.none())

    return post


def _both(first: PollObserver, second: PollObserver) -> PollObserver:
    """One poll observer that hands each poll to two (both run; an error is raised after)."""

    def observe(
        slugs: list[str], info: StationInfo | None, error: StationError | None
    ) -> Coroutine[Any, Any, None]:
        works = (first(slugs, info, error), second(slugs, info, error))

        async def run() -> None:
            for result in await asyncio.gather(*works, return_exceptions=True):
                if isinstance(result, BaseException):
                    raise result

        return run()

    return observe


def _followed_stations(
    alerts: AlertService, recaps: RecapService, shows: ShowsService
) -> Callable[[], Awaitable[set[str]]]:
    """The stations watched though no channel announces them."""

    async def stations() -> set[str]:
        return await alerts.stations() | await recaps.stations() | shows.wanted_stations()

    return stations


def _voice_engine(
    session: aiohttp.ClientSession, said: set[str] | None
) -> tuple[Broadcasts | None, Probe | None]:
    """The decoders (one FFmpeg per station) and the stream check on the shared session; with no
    FFmpeg, one line now and voice answers "not available" (not a traceback on the first /join)."""
    binary = find_ffmpeg()
    if binary is None:
        _say(
            logging.WARNING,
            f"voice is off: no FFmpeg found (set {FFMPEG_ENV} to its path, or install the "
            "imageio-ffmpeg package or Debian's ffmpeg)",
            said,
        )
        return None, None
    _say(logging.INFO, f"voice: FFmpeg from {binary.origin}", said)

    # A decoder outlives its last guild by a few seconds: a rejoin or a quick /join again
    # finds it running (no new connection to the stream, no silence while FFmpeg starts).
    hub = Broadcasts(binary.path, session=session, linger=VOICE_LINGER)

    async def probe(url: str, guard: StreamGuard) -> OpenedStream:
        # The open stream becomes the decoder's first connection: its reads get the watchdog.
        try:
            return await open_probed(session, url, read_timeout=hub.watchdog, guard=guard)
        except StreamUnreachable as error:
            raise StreamDown(error.message) from None

    return hub, probe


def _say(level: int, line: str, said: set[str] | None) -> None:
    """Log a start-up fact, once per ``said`` when given: ``onair run`` builds a fresh bot on
    each retry, and a retry is to cost one line."""
    if said is None or line not in said:
        _LOGGER.log(level, "%s", line)
    if said is not None:
        said.add(line)


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
    """``onair run`` until closed or SIGTERM/SIGINT (exit 0). Discord unreachable (DNS, refused,
    TLS, 5xx): one line and a retry with a fresh bot after a capped exponential backoff. A refused
    token: one line, exit 78. ``discord_connector`` makes the connector discord.py uses (tests
    point it at a fake Discord); by default discord.py makes its own."""
    loaded = load_for_discord(config_path)
    if isinstance(loaded, int):
        return loaded
    settings = loaded
    setup_logging(
        settings.log_level,
        secrets=[settings.token, settings.secret_key, *(s.key for s in settings.stations)],
    )
    backoff = backoff or Backoff()
    stop = asyncio.Event()
    health = _Health()
    server: MetricsServer | None = None
    if settings.metrics_port:
        # Up before the first login and across retries: /healthz answers 503 while Discord
        # cannot be reached (a refused connection looks like a dead process).
        server = MetricsServer(health.metrics, health.healthy)
        try:
            await server.start(settings.metrics_host, settings.metrics_port)
        except OSError as error:
            print(
                f"onair: cannot serve /metrics and /healthz on {settings.metrics_host}:"
                f"{settings.metrics_port}: {error.strerror or error}",
                file=sys.stderr,
            )
            return EXIT_SOFTWARE
    try:
        with _stop_on_signals(stop):
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
        self.said: set[str] = set()  # start-up lines logged by an earlier attempt
        self.bot: OnAirBot | None = None

    def healthy(self) -> bool:
        return self.bot is not None and self.bot.healthy()


async def _run_with_retries(
    settings: Settings,
    stop: asyncio.Event,
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
                settings, connector=connector, metrics=health.metrics, said=health.said
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
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=delay)
    return 0


@contextlib.contextmanager
def _stop_on_signals(stop: asyncio.Event) -> Iterator[None]:
    """SIGTERM (``docker stop``, ``systemctl stop``) and SIGINT (Ctrl+C) set ``stop``."""
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for signum in signals:
        loop.add_signal_handler(signum, stop.set)
    try:
        yield
    finally:
        for signum in signals:
            loop.remove_signal_handler(signum)


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


async def run_until_signalled(bot: OnAirBot, token: str, stop: asyncio.Event) -> None:
    """Run until the bot stops or ``stop`` is set (a signal); then stop gracefully: polling
    stops, sends in flight finish or give their delivery back (it stays pending for the next
    run), the gateway and sessions close."""
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
