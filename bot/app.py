"""Build everything in one place (settings, session, clients, scheduler, bot) and run it."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC
from typing import Any

import aiohttp
import discord
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from .announcer import WatchScheduler
from .announcer.service import AnnouncerService, PollObserver
from .catalog.languages import GuildLanguages
from .catalog.onboarding import StationOnboarding
from .catalog.registry import StationRegistry
from .config import Settings
from .delivery.announcements import DiscordDeliverer, RateGate
from .delivery.scheduled import DiscordPostSender
from .errors import Note
from .guard.keybox import KeyBox
from .guard.netguard import GuardedResolver, literal_guard, policy_for, trusted_hosts
from .history.likes import LikeService
from .requests.service import RequestService
from .runtime.core import OnAirBot
from .scheduled.alert_service import AlertService
from .scheduled.outbox import PostOutbox
from .scheduled.recap_service import RecapService
from .shows.service import ShowsService
from .station import StationError, StationInfo
from .storage import create_storage
from .util.metrics import Metrics
from .voice import FFMPEG_ENV, Broadcasts, StreamUnreachable, VoiceSender, find_ffmpeg
from .voice.players import Probe, StreamDown
from .voice.service import VoiceService
from .voice.stream import OpenedStream, StreamGuard, open_probed

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
    bot.announcer.outbox.metrics = bot.metrics  # the outbox observes the sends
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
    bot.requests.languages = bot.guild_lang
    bot.announcer.credit_requests(bot.requests.credits_for)
    if not options.get("commands_only"):
        bot.add_listener(bot.shows.report_missing_permissions, "on_ready")
    bot.languages = GuildLanguages(storage)  # monotonic: a TTL, not a time of day
    bot.onboarding = StationOnboarding(
        settings,
        registry,
        storage,
        bot.keybox,
        is_member=lambda guild: bot.get_guild(guild) is not None,
        languages=bot.languages,
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
            raise StreamDown(error.message, Note(error.text, **error.values)) from None

    return hub, probe


def _say(level: int, line: str, said: set[str] | None) -> None:
    """Log a start-up fact, once per ``said`` when given: ``onair run`` builds a fresh bot on
    each retry, and a retry is to cost one line."""
    if said is None or line not in said:
        _LOGGER.log(level, "%s", line)
    if said is not None:
        said.add(line)
