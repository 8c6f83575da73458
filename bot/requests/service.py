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
from collections.abc import Awaitable, Callable, Collection, Sequence
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
from ..station.errors import RequestsUnavailable
from ..station.source import Feature
from ..storage import VOTERS, NewRequest, RequestCredit, RequestSettings, Storage
from ..util.i18n import ENGLISH, Lang
from ..util.text import one_line, plain, safe
from .fairness import Party
from .search import SearchDesk

_LOGGER = logging.getLogger("onair.requests")

AUTOCOMPLETE_WAIT = 1.5  # seconds an autocomplete waits for upstream (Discord allows 3 in all)
REQUEST_WAIT = 4.0  # seconds /request waits for a search (it has deferred: 15 minutes)
CHOICES = 25  # Discord's most autocomplete choices
CHOICE_NAME = 100  # Discord's longest choice name and string value
QUEUE_TTL = 10.0  # seconds a station's queue is reused (public clients poll it every 15 s)
SUGGESTIONS_KEPT = 20_000  # (station, id) of suggestions remembered to resolve a picked choice
NAME_LIMIT = 80  # characters of a display name kept
SWITCH_TTL = 30.0  # seconds autocomplete reuses a guild's on/off for a station (another
# process of a fleet sees a change within this; /request itself always reads storage)
SWITCHES = 10_000  # (guild, station) switches remembered
TOKEN_WAIT = 0.25  # seconds a search waits for storage to grant a token (else: no search)

ChannelPoster = Callable[[int, str], Awaitable[None]]
Languages = Callable[[int], Awaitable[Lang]]  # a guild's language for its public posts
Gates = tuple[bool, RequestSettings]  # (requests on, the guild's rules)


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
        searches: SearchDesk | None = None,
        post_to_channel: ChannelPoster | None = None,
        languages: Languages | None = None,
    ) -> None:
        """``post_to_channel`` posts a line in a guild's request channel (None: no lines), in
        the guild's language as ``languages`` tells it (None: English)."""
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.clock = clock
        self.searches = searches or SearchDesk(
            settings.request_searches_per_second,
            ttl=settings.request_cache_seconds,
            tokens=self._take_token,
        )
        self.window = settings.request_credit_hours * 3600.0
        self.post_to_channel = post_to_channel
        self.languages = languages
        self._suggested: OrderedDict[tuple[str, str], str] = OrderedDict()
        self._queues: dict[str, tuple[float, tuple[QueuedSong, ...]]] = {}
        # (guild, station): (valid until, (requests on, the guild's rules))
        self._switches: dict[tuple[int, str], tuple[float, Gates]] = {}
        self._switch_reads: dict[tuple[int, str], asyncio.Future[Gates]] = {}
        # (guild, user): (valid until, may request now): the cooldown and the cap as last read
        self._waits: dict[tuple[int, int], tuple[float, bool]] = {}

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
            self.storage.log_fault_or_raise(
                error, _LOGGER, "song search tokens are unavailable (%s)", name
            )
            return False

    # Who may ask ------------------------------------------------------------------------

    def requests_allowed(self, station: StationConfig, guild_id: int) -> bool:
        """The station's host takes requests, and the owner turned them on for the station or
        it is the guild's own station."""
        if not self.registry.offers(station, Feature.REQUESTS):
            return False
        return station.requests or (bool(station.owner_guild) and station.owner_guild == guild_id)

    async def enabled(self, guild_id: int, station: StationConfig) -> bool:
        if not self.requests_allowed(station, guild_id):
            return False
        choice = await self.storage.requests_enabled(guild_id, station.slug)
        return station.requests if choice is None else choice

    async def _check_enabled(self, guild_id: int, station: StationConfig) -> None:
        self.registry.require(station, Feature.REQUESTS)  # NotOffered: the host takes none
        name = safe(station.name, limit=80)
        if not self.requests_allowed(station, guild_id):
            raise BadInput(errors.REQUESTS_NOT_OFFERED, station=name)
        if not await self.enabled(guild_id, station):
            raise BadInput(errors.REQUESTS_OFF_HERE, station=name)

    # Autocomplete -----------------------------------------------------------------------

    async def _gates(self, guild_id: int, station: StationConfig) -> Gates:
        rules = await self.storage.request_settings(guild_id)
        return await self.enabled(guild_id, station), rules

    async def _gates_for_keystrokes(self, guild_id: int, station: StationConfig) -> Gates:
        """:meth:`enabled` and the guild's rules (the role /request needs), read once per guild
        and station every ``SWITCH_TTL`` (a burst of keystrokes shares one read): a keystroke
        costs no storage round trip."""
        if not self.requests_allowed(station, guild_id):
            return False, RequestSettings(guild_id)
        key = (guild_id, station.slug)
        known = self._switches.get(key)
        if known is not None and known[0] > self.clock():
            return known[1]
        reading = self._switch_reads.get(key)
        if reading is not None:
            return await asyncio.shield(reading)
        reading = asyncio.ensure_future(self._gates(guild_id, station))
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

    async def suggestions(
        self,
        guild_id: int,
        station: StationConfig,
        typed: str,
        *,
        user_id: int = 0,
        role_ids: Collection[int] = (),
    ) -> list[Choice]:
        """At most 25 choices for what was typed; never raises, answers within ~1.5 s. None
        for who may not request (the guild's switch, its role); a search is spent only for
        who may request now (not within their cooldown or past the guild's hourly cap: that
        is read only when a search is to be sent, so a keystroke the cache answers costs no
        storage round trip), out of the user's fair share of the station's rate."""
        try:
            on, rules = await self._gates_for_keystrokes(guild_id, station)
        except Exception as error:
            if not self.storage.is_storage_error(error):
                raise
            return []
        if not on or (rules.role_id and rules.role_id not in role_ids):
            return []

        async def may_search() -> bool:
            try:
                return await self._may_ask_now(rules, user_id)
            except Exception as error:
                if not self.storage.is_storage_error(error):
                    raise
                return False

        client = self.client(station)
        found = await self.searches.search(
            station.slug,
            typed,
            lambda: client.search(typed),
            wait=AUTOCOMPLETE_WAIT,
            party=(guild_id, user_id),
            gate=may_search,
        )
        choices: list[Choice] = []
        for track in found.tracks:
            name = plain(track.title, limit=CHOICE_NAME)
            if not name or len(track.id) > CHOICE_NAME:
                continue
            self._remember_suggestion(station.slug, track)
            choices.append(Choice(name, track.id))
            if len(choices) == CHOICES:
                break
        return choices

    async def _may_ask_now(self, rules: RequestSettings, user_id: int) -> bool:
        """Not within the cooldown or past the guild's cap (what /request would refuse): read
        once per user every ``SWITCH_TTL``, or until the wait read ends."""
        if rules.cooldown <= 0 and rules.hourly_cap <= 0:
            return True
        key = (rules.guild_id, user_id)
        now = self.clock()
        known = self._waits.get(key)
        if known is not None and known[0] > now:
            return known[1]
        blocked = await self.storage.request_block(
            rules.guild_id, user_id, now=now, cooldown=rules.cooldown, hourly_cap=rules.hourly_cap
        )
        if len(self._waits) >= SWITCHES:
            self._waits.clear()
        if blocked is None:
            self._waits[key] = (now + SWITCH_TTL, True)
        else:
            self._waits[key] = (min(blocked[1], now + SWITCH_TTL), False)
        return blocked is None

    def _remember_suggestion(self, slug: str, track: RequestTrack) -> None:
        self._suggested[(slug, track.id)] = track.title
        self._suggested.move_to_end((slug, track.id))
        if len(self._suggested) > SUGGESTIONS_KEPT:
            self._suggested.popitem(last=False)

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
        party = (guild_id, user_id)
        track = await self._resolve(station, typed, party)
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
        await self._ask(station, asked, rules, party, now)
        listed = await self._post_to_request_channel(rules, asked)
        return Accepted(track.title, listed)

    async def request_voted(
        self, *, guild_id: int, station: StationConfig, track: RequestTrack, server: str
    ) -> Accepted:
        """Ask for the winner of the guild's song vote, within the guild's rules as one more
        requester (``VOTERS``: the cooldown and the hourly cap count it like a listener); the
        credit names the listeners of ``server``. :class:`BadInput` or a :class:`StationError`
        when it is not made."""
        await self._check_enabled(guild_id, station)
        rules = await self.storage.request_settings(guild_id)
        now = self.clock()
        asked = NewRequest(
            guild_id=guild_id,
            station=station.slug,
            user_id=VOTERS,
            display_name=one_line(server, NAME_LIMIT) or "?",
            track_id=track.id,
            title=track.title,
            title_key=normalise_title(track.title),
        )
        await self._ask(station, asked, rules, (guild_id, VOTERS), now)
        return Accepted(track.title, listed=False)

    async def vote_candidates(
        self, station: StationConfig, seeds: Sequence[str], *, wanted: int
    ) -> list[RequestTrack]:
        """Up to ``wanted`` distinct tracks the station's request search offers for ``seeds``
        (artists it plays), searched in turn through the shared desk: what a request would
        find, so a vote offers only songs the station would play."""
        client = self.client(station)
        found: dict[str, RequestTrack] = {}
        for seed in seeds:
            text = seed.strip()
            if len(text) < 3:
                continue
            answer = await self.searches.search(
                station.slug,
                text,
                lambda text=text: client.search(text),  # type: ignore[misc]
                wait=REQUEST_WAIT,
                patient=True,
            )
            for track in answer.tracks:
                key = normalise_title(track.title)
                if track.title.strip() and key not in found:
                    found[key] = track
            if len(found) >= wanted * 3:
                break
        return list(found.values())

    async def _ask(
        self,
        station: StationConfig,
        asked: NewRequest,
        rules: RequestSettings,
        party: Party,
        now: float,
    ) -> None:
        """Reserve the request within the rules, then ask the station once (a refusal drops
        the reservation and is worded for people)."""
        request_id = await self.storage.reserve_request(
            asked, now=now, cooldown=rules.cooldown, hourly_cap=rules.hourly_cap
        )
        if request_id is None:
            raise await self._wait_message(rules, asked.user_id, now)
        try:
            # The request itself is one of the station's calls too (the user's cooldown
            # bounds how often; the station's rate, how many at once).
            if not await self.searches.take_within(station.slug, None, REQUEST_WAIT):
                raise RequestsUnavailable()
            await self.client(station).request(asked.track_id)
        except BaseException as error:
            await asyncio.shield(self.storage.request_dropped(request_id))
            if isinstance(error, RequestRefused):
                raise await self._refusal(station, error, party) from None
            raise
        await self.storage.request_accepted(request_id)
        self.forget_queue(station)  # the queue changed
        self._waits.pop(party, None)  # the cooldown starts: read again

    async def _resolve(self, station: StationConfig, typed: str, party: Party) -> RequestTrack:
        """The track a picked suggestion names, else the search result titled exactly as
        typed; BadInput when none is (nothing is requested)."""
        value = typed.strip()
        title = self._suggested.get((station.slug, value))
        if title is not None:
            return RequestTrack(value, title)
        client = self.client(station)
        found = await self.searches.search(
            station.slug,
            value,
            lambda: client.search(value),
            wait=REQUEST_WAIT,
            patient=True,
            party=party,
        )
        key = normalise_title(value)
        for track in found.tracks:
            if normalise_title(track.title) == key:
                return track
        name, text = safe(station.name, limit=80), safe(value, limit=80)
        if found.tracks:
            count = len(found.tracks)
            raise BadInput(errors.REQUEST_PICK_ONE, count=count, station=name, text=text)
        await self._raise_if_off(station, party)
        raise BadInput(errors.REQUEST_NO_MATCH, station=name, text=text)

    async def _raise_if_off(self, station: StationConfig, party: Party) -> None:
        """BadInput when the station's queue says it takes no requests: the queue cached (a
        refusal or a no-match repeated costs the station nothing more), else asked within
        the listener's share of the rate (none left: the queue is not the question here)."""
        try:
            await self.queue(station, party)
        except RequestsOff:
            raise BadInput(
                errors.REQUESTS_STATION_OFF, station=safe(station.name, limit=80)
            ) from None
        except StationError:
            pass  # the queue is not the question here

    async def _refusal(
        self, station: StationConfig, error: RequestRefused, party: Party
    ) -> BadInput:
        """The station's reason (:func:`bot.errors.request_refused`); a station refusing
        everything is told apart."""
        try:
            await self._raise_if_off(station, party)
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

    async def _post_to_request_channel(self, rules: RequestSettings, asked: NewRequest) -> bool:
        """Best effort: the request channel misses a line rather than failing the request.
        The line is public: in the guild's language, not the requester's."""
        if not rules.channel_id or self.post_to_channel is None:
            return False
        try:
            lang = ENGLISH if self.languages is None else await self.languages(rules.guild_id)
            text = lang.t(
                "🎵 **{name}** requested {title}",
                name=safe(asked.display_name, limit=80),
                title=safe(asked.title, limit=300),
            )
            await self.post_to_channel(rules.channel_id, text[:2000])
        except Exception as error:
            _LOGGER.warning(
                "could not list a request in channel %s (%s)",
                rules.channel_id,
                type(error).__name__,
            )
            return False
        return True

    # /requests --------------------------------------------------------------------------

    async def queue(
        self, station: StationConfig, party: Party, *, wait: float = 0.0
    ) -> tuple[QueuedSong, ...]:
        """The station's queue, asked at most every ``QUEUE_TTL`` seconds; asking takes one of
        ``party``'s share of the station's calls (within ``wait``), else RequestsUnavailable."""
        cached = self._queues.get(station.slug)
        if cached is not None and cached[0] > self.clock():
            return cached[1]
        if not await self.searches.take_within(station.slug, party, wait):
            raise RequestsUnavailable()
        songs = await self.client(station).queue(20)
        self._queues[station.slug] = (self.clock() + QUEUE_TTL, songs)
        return songs

    def forget_queue(self, station: StationConfig) -> None:
        self._queues.pop(station.slug, None)

    async def overview(self, guild_id: int, station: StationConfig, user_id: int) -> Overview:
        await self._check_enabled(guild_id, station)
        try:
            songs = await self.queue(station, (guild_id, user_id), wait=REQUEST_WAIT)
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
        if enabled:
            self.registry.require(station, Feature.REQUESTS)
        if enabled and not self.requests_allowed(station, guild_id):
            raise BadInput(errors.REQUESTS_OWN_STATION, station=safe(station.name))
        if enabled is not None:
            await self.storage.set_requests_enabled(guild_id, station.slug, enabled)
            self._forget_gates(guild_id, station.slug)
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
            self._forget_gates(guild_id)
            self._waits = {k: v for k, v in self._waits.items() if k[0] != guild_id}
        return await self.enabled(guild_id, station), changed

    def _forget_gates(self, guild_id: int, slug: str | None = None) -> None:
        """This process sees a change of the guild's gates at once (a read under way is not
        remembered); ``slug`` None: every station's."""
        for cache in (self._switches, self._switch_reads):
            for key in [k for k in cache if k[0] == guild_id and slug in (None, k[1])]:
                del cache[key]

    # Credit -----------------------------------------------------------------------------

    async def credit_new_play(
        self, slug: str, play: Play, play_key: str
    ) -> tuple[RequestCredit, ...]:
        """Who asked for ``play`` (each request credited once, to one play): called where plays
        are fanned out, so every process of a fleet names the same people."""
        self._queues.pop(slug, None)  # a new play: the queue's "played" changed
        now = self.clock()
        credits = await self.storage.credit_requests(
            slug, title_keys(play), play_key, since=now - self.window, now=now
        )
        return tuple(credits)


def _retrieved(future: asyncio.Future[Gates]) -> None:
    """A storage failure of a shared read is the waiters' to handle, never "not retrieved"."""
    if not future.cancelled():
        future.exception()
