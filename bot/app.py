"""Build everything in one place (settings, session, clients, scheduler, bot) and run it."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import aiohttp
import discord
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from .announcer import WatchScheduler
from .announcer.followers import Followers
from .announcer.service import AnnouncerService, SharedInfo, process_owner
from .catalog.languages import GuildLanguages
from .catalog.onboarding import StationOnboarding
from .catalog.registry import StationRegistry
from .config import Settings
from .delivery.announcements import DiscordDeliverer, RateGate
from .delivery.scheduled import DiscordPostSender
from .delivery.votes import DiscordPollSender
from .errors import Note
from .guard.keybox import KeyBox
from .guard.netguard import GuardedResolver, literal_guard, policy_for, trusted_hosts
from .history.likes import LikeService
from .requests.service import RequestService
from .runtime.core import OnAirBot
from .runtime.services import Services
from .scheduled.alert_service import AlertService
from .scheduled.outbox import PostOutbox
from .scheduled.recap_service import RecapService
from .shows.service import ShowsService
from .songlinks import SongLinks
from .songsearch import SongSearch
from .storage import Storage, create_storage
from .util.hooks import Hook
from .util.metrics import Metrics
from .voice import FFMPEG_ENV, Broadcasts, StreamUnreachable, VoiceSender, find_ffmpeg
from .voice.players import PlayerListener, Probe, StreamDown
from .voice.service import VoiceService
from .voice.stream import OpenedStream, StreamGuard, open_probed
from .votes.service import VoteService

VOICE_LINGER = 5.0  # seconds a station's decoder runs on after its last guild left
_LOGGER = logging.getLogger("onair")


def create_bot(
    settings: Settings,
    *,
    connector: aiohttp.BaseConnector | None = None,
    metrics: Metrics | None = None,
    logged_once: set[str] | None = None,
    clock: Callable[[], float] = time.time,
    commands_only: bool = False,
    **options: Any,
) -> OnAirBot:
    """The bot and every service it runs (the composition root: nothing else builds them).
    ``connector`` lets tests point discord.py at a fake Discord; ``metrics`` and ``logged_once``
    (the start-up lines already logged) are kept across the attempts of ``onair run``;
    ``clock`` is the wall clock of the scheduled posts (tests drive alerts and recaps on their
    own); ``commands_only`` builds no voice engine (`onair sync`). ``options`` go to discord.py.
    A bad ``ONAIR_SECRET_KEY`` raises :class:`KeyBoxError` before anything that needs closing
    (the session) is made."""
    keybox = KeyBox(settings.secret_key)
    policy = policy_for(
        settings.allowed_station_hosts,
        allow_http=settings.allow_http_station_urls,
        allow_private=settings.allow_private_station_urls,
        allowed_ports=settings.allowed_station_ports,
    )
    # The owner's config stations' hosts, their own stream_url hosts included (voice).
    trusted = trusted_hosts(
        [s.base_url for s in settings.stations]
        + [s.stream_url for s in settings.stations]
        + [settings.links_lookup_url]
    )
    # The one session for every station request; its resolver refuses internal addresses
    # for any host but the owner's own config stations (checked at connect time). No cap on
    # its connections: a pushing host's stream (AzuraCast's SSE, Icecast's ICY) holds one for
    # good, and a cap would leave the polls, commands and requests of every other station
    # waiting once that many stations push. What it opens is bounded by the stations
    # themselves: one stream per pushing station watched here, one request in flight per
    # station and kind of answer (single-flight), the request and search rates.
    resolver = GuardedResolver(policy, trusted_hosts=trusted)
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(resolver=resolver, limit=0, ttl_dns_cache=60),
        trace_configs=[literal_guard(resolver)],  # IP literals, which no resolver sees
        timeout=aiohttp.ClientTimeout(total=15, connect=5),
        headers={"User-Agent": "OnAir/0.1 (Discord bot; +https://github.com/onair-bot)"},
    )
    # In a fleet the announcer binds it: commands read what another process polled.
    shared_info: Hook[SharedInfo] = Hook("shared station info")
    registry = StationRegistry(settings, session, shared_info=shared_info)
    storage = create_storage(
        settings.database_url or settings.database_path,
        lock_timeout=settings.database_lock_timeout,
    )
    scheduler = AsyncIOScheduler(
        timezone=UTC, job_defaults={"misfire_grace_time": None, "coalesce": True}
    )
    parts = _Parts(
        settings=settings,
        session=session,
        registry=registry,
        storage=storage,
        scheduler=scheduler,
        keybox=keybox,
        metrics=metrics or Metrics(),
        shared_info=shared_info,
        clock=clock,
        voice_engine=(None, None) if commands_only else _voice_engine(session, logged_once),
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
        keybox=keybox,
        metrics=parts.metrics,
        serve_metrics=metrics is None,
        services=parts.services,
        commands_only=commands_only,
        **options,
    )


@dataclass(frozen=True)
class _Parts:
    """What the services are built from, beside the bot they send through."""

    settings: Settings
    session: aiohttp.ClientSession
    registry: StationRegistry
    storage: Storage
    scheduler: AsyncIOScheduler
    keybox: KeyBox
    metrics: Metrics
    shared_info: Hook[SharedInfo]
    clock: Callable[[], float]
    voice_engine: tuple[Broadcasts | None, Probe | None]

    def services(self, bot: OnAirBot) -> Services:
        """Every service, each built with its collaborators, in dependency order. Two pairs
        need each other and meet through a :class:`Hook`: the voice service tells the shows
        where players start and stop, and the shows ask the announcer (built last, as it
        reports to the others) to plan its watches again."""
        settings, registry, storage, clock = self.settings, self.registry, self.storage, self.clock
        # One pace under Discord's global limit for announcements, the shows' requests and
        # the request channel's lines.
        gate = RateGate()
        likes = LikeService(storage, wall=clock)
        owner = process_owner()
        # Alerts and recaps: recorded, then sent once through one outbox (the scheduled cog).
        posts = PostOutbox(
            storage,
            DiscordPostSender(bot),
            owner=owner,
            lease=settings.delivery_lease,
            clock=clock,
        )
        alerts = AlertService(settings, registry, storage, posts, clock=clock)
        recaps = RecapService(settings, registry, storage, posts, clock=clock)
        hub, probe = self.voice_engine
        player_events: Hook[PlayerListener] = Hook("voice players")
        voice = VoiceService(
            bot,
            settings,
            registry,
            storage,
            hub=hub,
            probe=probe,
            sender=VoiceSender() if hub is not None else None,
            listener=player_events,
        )
        refresh_watches: Hook[Callable[[], Awaitable[None]]] = Hook("refresh watches")
        # Voice channel status and live-show events: told of each station's new plays by the
        # announcer's watch (once per station), and where players start and stop by voice.
        shows = ShowsService(
            bot,
            storage,
            registry,
            voice,
            refresh_watches=refresh_watches,
            player_events=player_events,
            handles_guild=settings.handles_guild,
            pace=gate.acquire,
            guild_configs=settings.guilds,
            offline_after=settings.offline_after,
            clock=clock,
        )
        requests = RequestService(
            settings,
            registry,
            storage,
            post_to_channel=_request_channel_poster(bot, gate),
            languages=bot.guild_lang,
        )
        votes = VoteService(
            settings,
            registry,
            storage,
            requests,
            DiscordPollSender(bot, gate=gate),
            languages=bot.guild_lang,
            clock=clock,
        )

        async def shows_stations() -> set[str]:
            return shows.wanted_stations()

        languages = GuildLanguages(storage)  # monotonic: a TTL, not a time of day
        # "Find this song": one search per song for the fleet, on the one session.
        links = SongLinks(
            SongSearch(self.session, settings.links_lookup_url) if settings.links_enabled else None,
            storage,
            owner=owner,
        )
        # Each poll: the alerts judge it, and the shows end a live show's events in an
        # outage; the credit of a play is decided where plays are fanned out.
        announcer = AnnouncerService(
            settings,
            registry,
            storage,
            WatchScheduler(self.scheduler),
            DiscordDeliverer(
                bot, gate=gate, likes=likes, links=links, links_shown=languages.song_links_shown
            ),
            followers=Followers(
                poll_observers=(alerts.observe, shows.observe),
                change_listeners=(shows.station_changed,),
                followed=(alerts.stations, recaps.stations, votes.stations, shows_stations),
                credit=requests.credit_new_play,
            ),
            owner=owner,
            metrics=self.metrics,
            shared_info=self.shared_info,
            refresh_hook=refresh_watches,
        )
        onboarding = StationOnboarding(
            settings,
            registry,
            storage,
            self.keybox,
            is_member=lambda guild: bot.get_guild(guild) is not None,
            languages=languages,
        )
        return Services(
            announcer=announcer,
            onboarding=onboarding,
            voice=voice,
            posts=posts,
            alerts=alerts,
            recaps=recaps,
            shows=shows,
            likes=likes,
            requests=requests,
            languages=languages,
            votes=votes,
            links=links,
        )


def _request_channel_poster(bot: OnAirBot, gate: RateGate) -> Callable[[int, str], Awaitable[None]]:
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


def _voice_engine(
    session: aiohttp.ClientSession, logged_once: set[str] | None
) -> tuple[Broadcasts | None, Probe | None]:
    """The decoders (one FFmpeg per station) and the stream check on the shared session; with no
    FFmpeg, one line now and voice answers "not available" (not a traceback on the first /join)."""
    binary = find_ffmpeg()
    if binary is None:
        _log_once(
            logging.WARNING,
            f"voice is off: no FFmpeg found (set {FFMPEG_ENV} to its path, or install the "
            "imageio-ffmpeg package or Debian's ffmpeg)",
            logged_once,
        )
        return None, None
    _log_once(logging.INFO, f"voice: FFmpeg from {binary.origin}", logged_once)

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


def _log_once(level: int, line: str, logged_once: set[str] | None) -> None:
    """Log a start-up fact, once per ``logged_once`` when given: ``onair run`` builds a fresh
    bot on each retry, and a retry is to cost one line."""
    if logged_once is None or line not in logged_once:
        _LOGGER.log(level, "%s", line)
    if logged_once is not None:
        logged_once.add(line)
