"""``OnAirBot``: the discord.py bot, wired with services built elsewhere and passed in."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

import aiohttp
import discord
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from discord import app_commands
from discord.ext import commands

from .. import errors
from ..catalog.registry import StationRegistry
from ..config import Settings
from ..errors import OnAirError
from ..guard.keybox import KeyBox
from ..station import StationError
from ..storage import Storage
from ..util.i18n import ENGLISH, Lang, Translator
from ..util.metrics import Metrics, MetricsServer
from .commandlocale import CommandLocales
from .commandsync import state_path, sync_commands
from .guildlocales import follow_guild_locales
from .heap import freeze_startup_heap
from .logs import count_discord_429s, guard_discord_logs
from .services import Services

_LOGGER = logging.getLogger("onair.bot")

EXTENSIONS = (
    "cogs.nowplaying",
    "cogs.recent",
    "cogs.playlist",
    "cogs.stats",
    "cogs.listen",
    "cogs.station",
    "cogs.history",
    "cogs.scheduled",
    "cogs.announcer",
    "cogs.admin",
    "cogs.voice",
    "cogs.community",
    "cogs.requests",
)
# Extensions that run a service and define no command (`onair sync` leaves them out).
SERVICE_EXTENSIONS = frozenset({"cogs.announcer", "cogs.scheduled"})
IN_FLIGHT_GRACE = 3.0  # seconds announcements and posts in flight may take to finish at a stop


def user_message(error: BaseException, lang: Lang = ENGLISH) -> str | None:
    """The message a user sees for a known error, said in ``lang`` (texts in ``bot.errors``),
    or None for a bug. Chosen as a message and its values and translated once, here: a text
    filled in first would no longer be found in a catalog."""
    if isinstance(error, OnAirError):
        return error.said_in(lang)
    if isinstance(error, StationError):
        return errors.station_problem(error, lang=lang)
    if type(error) is app_commands.CheckFailure and str(error):
        return lang.t(str(error))  # OnAir's own check: its text is a message of bot.errors
    if isinstance(error, app_commands.CheckFailure):
        return lang.t(errors.NOT_HERE)  # discord.py's checks word their refusals in English
    if isinstance(error, app_commands.TransformerError):
        value = discord.utils.escape_mentions(str(error.value))[:100]
        return lang.t(errors.BAD_VALUE, value=value)
    return None


async def report_error(interaction: discord.Interaction[Any], error: BaseException) -> None:
    """Tell the user what went wrong, once, privately, in their own language; log a traceback
    for anything unexpected."""
    translator = getattr(interaction.client, "translator", None)
    lang = translator.lang(interaction.locale) if isinstance(translator, Translator) else ENGLISH
    message = user_message(error, lang)
    if message is None:
        command = interaction.command.qualified_name if interaction.command else "?"
        _LOGGER.error("interaction /%s failed", command, exc_info=error)
        message = lang.t(errors.GENERIC_ERROR)
    try:
        if interaction.response.is_done():
            await interaction.followup.send(message, ephemeral=True)
        else:
            await interaction.response.send_message(message, ephemeral=True)
    except discord.HTTPException:
        _LOGGER.warning("could not tell the user about an error (interaction expired?)")


class OnAirTree(app_commands.CommandTree["OnAirBot"]):
    """The one error handler of the command layer."""

    async def on_error(
        self, interaction: discord.Interaction[OnAirBot], error: app_commands.AppCommandError
    ) -> None:
        original = error.original if isinstance(error, app_commands.CommandInvokeError) else error
        await report_error(interaction, original)


class OnAirBot(commands.AutoShardedBot):
    """AutoSharded: one process runs the shards it is given (or all that Discord recommends)."""

    def __init__(
        self,
        settings: Settings,
        *,
        session: aiohttp.ClientSession,
        registry: StationRegistry,
        storage: Storage,
        scheduler: AsyncIOScheduler,
        keybox: KeyBox,
        metrics: Metrics,
        services: Callable[[OnAirBot], Services],
        serve_metrics: bool = True,
        extensions: tuple[str, ...] = EXTENSIONS,
        commands_only: bool = False,
        **options: Any,
    ) -> None:
        """``services`` builds the services from the bot (they send through it) before the
        constructor returns, so no caller sees a bot without them. ``serve_metrics`` False:
        whoever gave ``metrics`` serves them (``onair run``, from before the first login, so
        /healthz answers 503 while Discord is unreachable); else setup_hook serves them when a
        metrics port is set. ``commands_only`` (`onair sync`): load the commands and sync them;
        no storage, scheduler or announcer is started. ``options`` are discord.py's."""
        # Voice needs voice states (who is in which channel); neither is privileged.
        options.setdefault("intents", discord.Intents(guilds=True, voice_states=True))
        options.setdefault("allowed_mentions", discord.AllowedMentions.none())
        # Every command is for the servers that installed OnAir, used in their channels
        # (``integration_types`` [0], ``contexts`` [0]), said in each command's payload so
        # Discord's defaults (the application's install types, every context) never apply;
        # the few a listener may use anywhere say so themselves (``cogs.shapes.anywhere``).
        options.setdefault(
            "allowed_installs", app_commands.AppInstallationType(guild=True, user=False)
        )
        options.setdefault(
            "allowed_contexts",
            app_commands.AppCommandContext(guild=True, dm_channel=False, private_channel=False),
        )
        guard_discord_logs()
        super().__init__(
            command_prefix=commands.when_mentioned, tree_cls=OnAirTree, help_command=None, **options
        )
        self.settings = settings
        self.session = session
        self.registry = registry
        self.storage = storage
        self.scheduler = scheduler
        self.keybox = keybox
        # Given metrics are served by whoever gave them (``onair run``: from before the first
        # login, so /healthz answers 503 while Discord is unreachable); else served from
        # setup_hook when a metrics port is set.
        self.metrics = metrics
        self._serves_metrics = serve_metrics
        self._metrics_server: MetricsServer | None = None
        self.initial_extensions = extensions
        self.commands_only = commands_only
        self.synced: list[app_commands.AppCommand] = []
        # English until setup_hook has read the catalogs (bot.util.i18n).
        self.translator = Translator()
        self._stage = "login"  # what start-up is doing (a signal's stop line names it)
        built = services(self)
        self.announcer = built.announcer
        self.onboarding = built.onboarding
        self.voice = built.voice
        self.posts = built.posts
        self.alerts = built.alerts
        self.recaps = built.recaps
        self.shows = built.shows
        self.likes = built.likes
        self.requests = built.requests
        self.languages = built.languages
        self.votes = built.votes
        self.links = built.links
        if not commands_only:
            self.add_listener(self.shows.report_missing_permissions, "on_ready")
            if self.storage.fleet:
                follow_guild_locales(self)
        # A signal's deadlines (``stop_by``): none until one came, then every wait is bounded.
        self._sends_by: float | None = None
        self._goodbyes_by: float | None = None
        self._closing: asyncio.Future[None] | None = None

    async def setup_hook(self) -> None:
        self.translator = await asyncio.to_thread(Translator.load)
        await self.tree.set_translator(CommandLocales(self.translator))
        if self.commands_only:
            for extension in self.initial_extensions:
                if extension not in SERVICE_EXTENSIONS:
                    await self.load_extension(extension)
            return
        self._stage = "opening the database"
        await self.storage.open()
        self._stage = "loading"
        await self.registry.load(self.storage, self.keybox)
        self.shows.follow_gateway()
        await self.shows.load()  # (the config file's guild choices first: voice reads them)
        await self.alerts.load()  # the config file's [[alerts]] and [[recaps]]
        await self.recaps.load()
        await self.voice.load()
        self.scheduler.start()
        if self.settings.metrics_port:
            self._start_metrics_gauges()
            if self._serves_metrics:
                self._metrics_server = MetricsServer(self.metrics, self.healthy)
                await self._metrics_server.start(
                    self.settings.metrics_host, self.settings.metrics_port
                )
        for extension in self.initial_extensions:
            await self.load_extension(extension)
        if self.settings.sync_commands:
            self._stage = "command sync"
            synced = await sync_commands(
                self, self.tree, self.settings.dev_guild, state=state_path(self.settings)
            )
            if synced is None:
                _LOGGER.info("application commands unchanged since the last sync")
            else:
                self.synced = synced
                _LOGGER.info("synced %d application commands", len(self.synced))
        freeze_startup_heap()
        self._stage = "gateway"

    def stage(self) -> str:
        """Where start-up is: login, opening the database, loading, command sync, gateway; then
        ready (every shard)."""
        return "ready" if self.is_ready() else self._stage

    async def guild_lang(self, guild_id: int) -> Lang:
        """The language of a guild's public posts: its ``/onair settings language``, else its
        preferred locale where Discord gives one (Community servers), else English; the same
        in every process of a fleet (a guild not in this one's cache: its stored locale)."""
        settings = await self.languages.settings(guild_id)
        chosen = settings.language
        if not chosen:
            guild = self.get_guild(guild_id)
            # Another shard's guild (in a fleet): the locale its own process stored.
            chosen = str(guild.preferred_locale) if guild is not None else ""
            chosen = chosen or settings.preferred_locale
        return self.translator.lang(chosen)

    def healthy(self) -> bool:
        """Connected to Discord (every shard ready) and not closing: /healthz answers 200."""
        return self.is_ready() and not self.is_closed()

    def _start_metrics_gauges(self) -> None:
        announcer = self.announcer
        self.metrics.gauges["watched_stations"] = announcer.watched_station_count
        self.metrics.gauges["polls_total"] = lambda: sum(
            w.status.polls for w in announcer.watched()
        )
        self.metrics.gauges["poll_errors_total"] = lambda: sum(
            w.status.errors for w in announcer.watched()
        )
        self.metrics.gauges["stations_unreachable"] = lambda: sum(
            w.status.state == "unreachable" for w in announcer.watched()
        )
        self.metrics.gauges["subscriptions"] = lambda: announcer.subscription_count
        self.voice.register_metrics(self.metrics)
        count_discord_429s(self.metrics)

    def stop_by(self, sends: float, goodbyes: float) -> None:
        """A signal's deadlines (``time.monotonic``): sends in flight end by ``sends``,
        goodbyes to Discord (voice, the gateway) by ``goodbyes``; :meth:`close` keeps them."""
        self._sends_by, self._goodbyes_by = sends, goodbyes

    def grace(self) -> float:
        """Seconds the sends in flight may still take when stopping: ``IN_FLIGHT_GRACE``, less
        once a signal came."""
        return _until(self._sends_by, IN_FLIGHT_GRACE)

    def goodbye_grace(self, most: float) -> float:
        """Seconds goodbyes to Discord may still take: ``most``, less once a signal came."""
        return _until(self._goodbyes_by, most)

    async def close(self) -> None:
        """Stop the services, say goodbye to Discord, close storage and the session. After a
        signal (``stop_by``) the goodbyes are left unfinished at their deadline: a Discord that
        does not answer cannot hold the stop (storage closes all the same)."""
        try:
            if self._metrics_server is not None:
                await self._metrics_server.stop()
            if self.scheduler.running:
                self.scheduler.shutdown(wait=False)
            if self._closing is None:
                self._closing = asyncio.ensure_future(super().close())
                self._closing.add_done_callback(_retrieve)
            if self._goodbyes_by is None:
                await self._closing
            else:
                await asyncio.wait({self._closing}, timeout=self.goodbye_grace(float("inf")))
                if not self._closing.done():
                    _LOGGER.warning("Discord did not answer the goodbyes in time: left anyway")
        finally:
            await self.storage.close()
            if not self.session.closed:
                await self.session.close()


def _until(deadline: float | None, most: float) -> float:
    if deadline is None:
        return most
    return max(0.0, min(most, deadline - time.monotonic()))


def _retrieve(closing: asyncio.Future[None]) -> None:
    """A close left unfinished at its deadline may end in an error nobody awaits: logged here."""
    if not closing.cancelled() and closing.exception() is not None:
        _LOGGER.debug("closing the gateway failed", exc_info=closing.exception())
