"""Song requests: who may ask for what, the station asked once, the credit when it airs.

The cogs parse and render; everything else is here and testable without Discord. Limits live
in storage (a fleet counts once, a restart keeps them); searches go through the shared
:class:`SearchDesk`. What a listener types goes to the station (URL-encoded) and back into
their own private reply only: never into a log line, and a display name reaches only the
announcements of the guild it was typed in.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from .. import errors
from ..catalog.registry import StationRegistry
from ..config import Settings, StationConfig
from ..errors import BadInput
from ..station import (
    Play,
    QueuedSong,
    RequestRefused,
    RequestsClient,
    RequestsOff,
    RequestTrack,
    StationError,
    normalise_title,
)
from ..station.requests import one_line
from ..storage import NewRequest, RequestCredit, RequestSettings, Storage
from ..util.text import plain, safe
from .search import SearchDesk

_LOGGER = logging.getLogger("onair.requests")

AUTOCOMPLETE_WAIT = 1.5  # seconds an autocomplete waits for upstream (Discord allows 3 in all)
REQUEST_WAIT = 4.0  # seconds /request waits for a search (it has deferred: 15 minutes)
CHOICES = 25  # Discord's most autocomplete choices
CHOICE_NAME = 100  # Discord's longest choice name and string value
QUEUE_TTL = 10.0  # seconds a station's queue is reused (public clients poll it every 15 s)
OFFERED = 20_000  # (station, id) of suggestions remembered to resolve a picked choice
NAME_LIMIT = 80  # characters of a display name kept
SWITCH_TTL = 30.0  # seconds autocomplete reuses a guild's on/off for a station (another
# process of a fleet sees a change within this; /request itself always reads storage)
SWITCHES = 10_000  # (guild, station) switches remembered
TOKEN_WAIT = 0.25  # seconds a search waits for storage to grant a token (else: no search)

Lister = Callable[[int, str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class Choice:
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class Accepted:
    title: str
    listed: bool  # posted in the guild's request channel


@dataclass(frozen=True, slots=True)
class Overview:
    """/requests: the station's queue and the caller's own pending requests (title, position in
    the queue's unplayed part, 1 = next; None when the queue does not show it)."""

    queue: tuple[QueuedSong, ...]
    mine: tuple[tuple[str, int | None], ...]
    off: bool = False


def title_keys(play: Play) -> list[str]:
    """The forms a request's title may match a play by: ``Artist - Title`` and the title."""
    return [normalise_title(play.display), normalise_title(play.title)]


class RequestService:
    """Everything /request, /requests and /onair requests do, and the credit of each play."""

    def __init__(
        self,
        settings: Settings,
        registry: StationRegistry,
        storage: Storage,
        *,
        clock: Callable[[], float] = time.time,
        desk: SearchDesk | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.clock = clock
        self.desk = desk or SearchDesk(
            settings.request_searches_per_second,
            ttl=settings.request_cache_seconds,
            tokens=self._take_token,
        )
        self.window = settings.request_credit_hours * 3600.0
        self.lister: Lister | None = None  # posts to a guild's request channel (set by the app)
        self._offered: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._queues: dict[str, tuple[float, tuple[QueuedSong, ...]]] = {}
        self._switches: dict[tuple[int, str], tuple[float, bool]] = {}
        self._switch_reads: dict[tuple[int, str], asyncio.Future[bool]] = {}

    def client(self, station: StationConfig) -> RequestsClient:
        return self.registry.requests_client(station)

    async def _take_token(self, slug: str) -> bool:
        """One of the station's searches this second, counted by storage for the whole fleet
        (in memory on SQLite). Storage failing or slow means no search: the keystroke answers
        from the cache or with nothing, and the rate is never exceeded."""
        rate = self.settings.request_searches_per_second
        try:
            return await asyncio.wait_for(self.storage.take_search_token(slug, rate), TOKEN_WAIT)
        except TimeoutError:
            return False
        except Exception as error:
            name = type(error).__name__
            self.storage.outlive(error, _LOGGER, "song search tokens are unavailable (%s)", name)
            return False

    # Who may ask ------------------------------------------------------------------------

    @staticmethod
    def offered(station: StationConfig, guild_id: int) -> bool:
        """The owner turned requests on for the station, or it is the guild's own station."""
        return station.requests or (bool(station.owner_guild) and station.owner_guild == guild_id)

    async def enabled(self, guild_id: int, station: StationConfig) -> bool:
        if not self.offered(station, guild_id):
            return False
        choice = await self.storage.requests_enabled(guild_id, station.slug)
        return station.requests if choice is None else choice

    async def _check_enabled(self, guild_id: int, station: StationConfig) -> None:
        name = safe(station.name, limit=80)
        if not self.offered(station, guild_id):
            raise BadInput(errors.REQUESTS_NOT_OFFERED, station=name)
        if not await self.enabled(guild_id, station):
            raise BadInput(errors.REQUESTS_OFF_HERE, station=name)

    # Autocomplete -----------------------------------------------------------------------

    async def _enabled_for_keystrokes(self, guild_id: int, station: StationConfig) -> bool:
        """:meth:`enabled`, read once per guild and station every ``SWITCH_TTL`` (a burst of
        keystrokes shares one read): a keystroke costs no storage round trip."""
        if not self.offered(station, guild_id):
            return False
        key = (guild_id, station.slug)
        known = self._switches.get(key)
        if known is not None and known[0] > self.clock():
            return known[1]
        reading = self._switch_reads.get(key)
        if reading is not None:
            return await asyncio.shield(reading)
        reading = asyncio.ensure_future(self.enabled(guild_id, station))
        reading.add_done_callback(_retrieved)
        self._switch_reads[key] = reading
        try:
            on = await asyncio.shield(reading)
            if self._switch_reads.get(key) is reading:  # not changed by /onair meanwhile
                if len(self._switches) >= SWITCHES:
                    self._switches.clear()
                self._switches[key] = (self.clock() + SWITCH_TTL, on)
            return on
        finally:
            if self._switch_reads.get(key) is reading:
                del self._switch_reads[key]

    async def suggestions(self, guild_id: int, station: StationConfig, typed: str) -> list[Choice]:
        """At most 25 choices for what was typed; never raises, answers within ~1.5 s."""
        try:
            if not await self._enabled_for_keystrokes(guild_id, station):
                return []
        except Exception as error:
            if not self.storage.is_storage_error(error):
                raise
            return []
        client = self.client(station)
        found = await self.desk.search(
            station.slug, typed, lambda: client.search(typed), wait=AUTOCOMPLETE_WAIT
        )
        choices: list[Choice] = []
        for track in found.tracks:
            name = plain(track.title, limit=CHOICE_NAME)
            if not name or len(track.id) > CHOICE_NAME:
                continue
            self._remember(station.slug, track)
            choices.append(Choice(name, track.id))
            if len(choices) == CHOICES:
                break
        return choices

    def _remember(self, slug: str, track: RequestTrack) -> None:
        self._offered[(slug, track.id)] = track.title
        self._offered.move_to_end((slug, track.id))
        if len(self._offered) > OFFERED:
            self._offered.popitem(last=False)

    # /request ---------------------------------------------------------------------------

    async def request(
        self,
        *,
        guild_id: int,
        station: StationConfig,
        user_id: int,
        display_name: str,
        role_ids: Collection[int],
        typed: str,
        ping: bool = False,
    ) -> Accepted:
        """Send one request to the station, within the guild's rules; :class:`BadInput` (or a
        :class:`StationError`) with the reason when it is not made."""
        await self._check_enabled(guild_id, station)
        rules = await self.storage.request_settings(guild_id)
        if rules.role_id and rules.role_id not in role_ids:
            raise BadInput(errors.REQUEST_NEED_ROLE, role=f"<@&{rules.role_id}>")
        now = self.clock()
        blocked = await self.storage.request_block(
            guild_id, user_id, now=now, cooldown=rules.cooldown, hourly_cap=rules.hourly_cap
        )
        if blocked is not None:
            raise self._wait_text(rules, *blocked)
        track = await self._resolve(station, typed)
        now = self.clock()
        asked = NewRequest(
            guild_id=guild_id,
            station=station.slug,
            user_id=user_id,
            display_name=one_line(display_name, NAME_LIMIT) or "a listener",
            track_id=track.id,
            title=track.title,
            title_key=normalise_title(track.title),
            ping=ping,
        )
        request_id = await self.storage.reserve_request(
            asked, now=now, cooldown=rules.cooldown, hourly_cap=rules.hourly_cap
        )
        if request_id is None:
            raise await self._wait_message(rules, user_id, now)
        try:
            await self.client(station).request(track.id)
        except BaseException as error:
            await asyncio.shield(self.storage.request_dropped(request_id))
            if isinstance(error, RequestRefused):
                raise await self._refusal(station, error) from None
            raise
        await self.storage.request_accepted(request_id)
        self.forget_queue(station)  # the queue changed
        listed = await self._list(rules, asked)
        return Accepted(track.title, listed)

    async def _resolve(self, station: StationConfig, typed: str) -> RequestTrack:
        """The track a picked suggestion names, else the search result titled exactly as
        typed; BadInput when none is (nothing is requested)."""
        value = typed.strip()
        title = self._offered.get((station.slug, value))
        if title is not None:
            return RequestTrack(value, title)
        client = self.client(station)
        found = await self.desk.search(
            station.slug, value, lambda: client.search(value), wait=REQUEST_WAIT, patient=True
        )
        key = normalise_title(value)
        for track in found.tracks:
            if normalise_title(track.title) == key:
                return track
        name, text = safe(station.name, limit=80), safe(value, limit=80)
        if found.tracks:
            count = len(found.tracks)
            raise BadInput(errors.REQUEST_PICK_ONE, count=count, station=name, text=text)
        await self._raise_if_off(station)
        raise BadInput(errors.REQUEST_NO_MATCH, station=name, text=text)

    async def _raise_if_off(self, station: StationConfig) -> None:
        self.forget_queue(station)  # asked now: the station may just have turned them off
        try:
            await self.queue(station)
        except RequestsOff:
            raise BadInput(
                errors.REQUESTS_STATION_OFF, station=safe(station.name, limit=80)
            ) from None
        except StationError:
            pass  # the queue is not the question here

    async def _refusal(self, station: StationConfig, error: RequestRefused) -> BadInput:
        """The station's reason (:func:`bot.errors.request_refused`); a station refusing
        everything is told apart."""
        try:
            await self._raise_if_off(station)
        except BadInput as off:
            return off
        return errors.request_refused(
            safe(station.name, limit=80), safe(error.reason, limit=200) or None
        )

    async def _wait_message(self, rules: RequestSettings, user_id: int, now: float) -> BadInput:
        why, until = await self.storage.request_wait(
            rules.guild_id, user_id, now=now, cooldown=rules.cooldown, hourly_cap=rules.hourly_cap
        )
        return self._wait_text(rules, why, until)

    @staticmethod
    def _wait_text(rules: RequestSettings, why: str, until: float) -> BadInput:
        when = f"<t:{int(until + 0.999)}:R>"
        if why == "cooldown":
            return BadInput(errors.REQUEST_COOLDOWN, when=when)
        return BadInput(errors.REQUEST_CAP, cap=rules.hourly_cap, when=when)

    async def _list(self, rules: RequestSettings, asked: NewRequest) -> bool:
        """Best effort: the request channel misses a line rather than failing the request."""
        if not rules.channel_id or self.lister is None:
            return False
        text = f"🎵 **{safe(asked.display_name, limit=80)}** requested {safe(asked.title)}"
        try:
            await self.lister(rules.channel_id, text[:2000])
        except Exception as error:
            _LOGGER.warning(
                "could not list a request in channel %s (%s)",
                rules.channel_id,
                type(error).__name__,
            )
            return False
        return True

    # /requests --------------------------------------------------------------------------

    async def queue(self, station: StationConfig) -> tuple[QueuedSong, ...]:
        cached = self._queues.get(station.slug)
        if cached is not None and cached[0] > self.clock():
            return cached[1]
        songs = await self.client(station).queue(20)
        self._queues[station.slug] = (self.clock() + QUEUE_TTL, songs)
        return songs

    def forget_queue(self, station: StationConfig) -> None:
        self._queues.pop(station.slug, None)

    async def overview(self, guild_id: int, station: StationConfig, user_id: int) -> Overview:
        await self._check_enabled(guild_id, station)
        try:
            songs = await self.queue(station)
        except RequestsOff:
            return Overview((), (), off=True)
        pending = [normalise_title(s.title) for s in reversed(songs) if not s.played]
        mine: list[tuple[str, int | None]] = []
        taken: set[int] = set()
        since = self.clock() - self.window
        for request in await self.storage.pending_requests(
            guild_id, user_id, station.slug, since=since
        ):
            position = next(
                (i for i, key in enumerate(pending) if key == request.title_key and i not in taken),
                None,
            )
            if position is not None:
                taken.add(position)
            mine.append((request.title, None if position is None else position + 1))
        return Overview(songs, tuple(mine))

    # /onair requests --------------------------------------------------------------------

    async def configure(
        self,
        guild_id: int,
        station: StationConfig,
        *,
        enabled: bool | None,
        role_id: int | None,
        cooldown: float | None,
        hourly_cap: int | None,
        channel_id: int | None,
    ) -> tuple[bool, RequestSettings]:
        """Save what the admin gave (None: unchanged); the station's state and the rules."""
        if enabled and not self.offered(station, guild_id):
            raise BadInput(errors.REQUESTS_OWN_STATION, station=safe(station.name))
        if enabled is not None:
            await self.storage.set_requests_enabled(guild_id, station.slug, enabled)
            # This process sees the change at once (a read under way is not remembered).
            self._switches.pop((guild_id, station.slug), None)
            self._switch_reads.pop((guild_id, station.slug), None)
        rules = await self.storage.request_settings(guild_id)
        changed = RequestSettings(
            guild_id,
            rules.role_id if role_id is None else role_id,
            rules.cooldown if cooldown is None else cooldown,
            rules.hourly_cap if hourly_cap is None else hourly_cap,
            rules.channel_id if channel_id is None else channel_id,
        )
        if changed != rules:
            await self.storage.save_request_settings(changed)
        return await self.enabled(guild_id, station), changed

    # Credit -----------------------------------------------------------------------------

    async def credits_for(self, slug: str, play: Play, play_key: str) -> tuple[RequestCredit, ...]:
        """Who asked for ``play`` (each request credited once, to one play): called where plays
        are fanned out, so every process of a fleet names the same people."""
        self._queues.pop(slug, None)  # a new play: the queue's "played" changed
        now = self.clock()
        credits = await self.storage.credit_requests(
            slug, title_keys(play), play_key, since=now - self.window, now=now
        )
        return tuple(credits)


def _retrieved(future: asyncio.Future[bool]) -> None:
    """A storage failure of a shared read is the waiters' to handle, never "not retrieved"."""
    if not future.cancelled():
        future.exception()
