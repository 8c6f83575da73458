"""Discord Scheduled Events for a station's live shows, in the guilds that turned them on.

When a station reports a live show, OnAir creates one external event for it in each guild that
asked (``/onair events``) and starts it (ACTIVE); when the station moves on to anything else, or
stops answering or playing for longer than ``offline_after`` (:meth:`ShowEvents.station_down`),
it completes it. A guild holds at most ``MAX_OPEN`` of OnAir's open events; the rest are skipped
with a log line. Create Events is checked before any request (a 403 counts toward Discord's
invalid-request limit): :func:`may_make_events`.

One event per airing. An airing is one play of the show as the station reports it (the same
show and start): the row is claimed in storage before the event is created; an airing with an
open event (after a restart, say) gets no second one, and neither does one whose event was
completed while it was on air (the station went down mid-show and came back to the same play:
Discord keeps a completed event completed, so the rest of that airing has none). A play of the
show with a new start (the DJ reconnected, next week's show) is a new airing with a new event.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import discord

from ..station import Play, StationInfo
from ..station.play import ESTIMATE_TOLERANCE, normalise_title
from ..storage import EVENT_ACTIVE, EVENT_CLAIMED, EVENT_COMPLETED, EVENT_FAILED, Storage
from ..util.i18n import guild_lang
from .slots import SlotEvents
from .text import event_description, event_location, event_name

_LOGGER = logging.getLogger("onair.shows")
MAX_OPEN = 10  # OnAir's open (scheduled or active) events per guild
START_AHEAD = timedelta(minutes=1)  # Discord: a new event starts in the future; OnAir starts it
DEFAULT_LENGTH = timedelta(hours=1)  # an external event needs an end; live shows rarely say
MIN_LENGTH = timedelta(minutes=15)
SCHEDULED, ACTIVE, COMPLETED, CANCELED = 1, 2, 3, 4
FINISHED_EVENT = 180000  # Discord: "Cannot update a finished event"


def may_make_events(guild: discord.Guild) -> bool:
    """Whether OnAir may make a live show's event in ``guild``: Discord asks a bot for Create
    Events to create one (Manage Events alone has not been enough since 23 February 2026), and
    Create Events also starts and ends the events OnAir made."""
    return guild.me.guild_permissions.create_events


def show_key(play: Play) -> str:
    """Which show: its normalised artist and title (an airing is an open event of it)."""
    return f"{normalise_title(play.artist)}|{normalise_title(play.title)}"


class ShowEvents:
    """Creates, starts and completes the guilds' events for live shows."""

    def __init__(
        self,
        client: discord.Client,
        storage: Storage,
        *,
        max_open: int = MAX_OPEN,
        clock: Callable[[], float] = time.time,
        pace: Callable[[], Awaitable[None]] | None = None,
        handles_guild: Callable[[int], bool] = lambda guild_id: True,
    ) -> None:
        self.client = client
        # Whose events this process ends: its shards' guilds, whether or not the gateway has
        # sent them yet (at start-up a guild may come after the first poll).
        self.handles_guild = handles_guild
        self.pace = pace
        self.storage = storage
        self.max_open = max_open
        self.clock = clock
        self.created = 0
        self.completed = 0
        self.started_planned = 0  # scheduled slots' events started by their live show
        self.slots = SlotEvents(client, storage, pace=pace, may_make=may_make_events)

    async def station_changed(self, station: str, play: Play | None, info: StationInfo) -> None:
        """A new play on ``station``: complete the open events of any other show, start this
        one's where a guild of this process asked for them."""
        key = show_key(play) if play is not None and play.live else None
        await self._end_open(station, keep=key)
        if play is None or key is None:
            return
        # The first poll runs from the bot's setup: the guilds (and OnAir's permissions in
        # them) come with the gateway's READY.
        await self.client.wait_until_ready()
        guilds = [
            guild_id
            for guild_id, _ in await self.storage.show_event_guilds(station)
            if self.client.get_guild(guild_id) is not None
        ]
        results = await asyncio.gather(
            *(self._start(g, station, play, info) for g in guilds), return_exceptions=True
        )
        for guild_id, result in zip(guilds, results, strict=True):
            if isinstance(result, Exception):  # one guild's trouble is not the others'
                _LOGGER.warning("live-show event in guild %s not made: %r", guild_id, result)

    async def station_down(self, station: str) -> None:
        """The station stopped answering or playing for longer than ``offline_after``: its
        open events end (COMPLETED; Discord keeps them so, whatever comes after)."""
        await self._end_open(station, keep=None)

    async def _end_open(self, station: str, *, keep: str | None) -> None:
        """Finish the station's open events in this process's guilds, but those of ``keep``."""
        for guild_id, _station, stored_key, event_id, state in await self.storage.open_show_events(
            station=station
        ):
            if _show_of(stored_key) != keep and self.handles_guild(guild_id):
                await self._finish(guild_id, station, stored_key, event_id, state)

    async def _start(self, guild_id: int, station: str, play: Play, info: StationInfo) -> None:
        guild = self.client.get_guild(guild_id)
        if guild is None:
            return
        key = show_key(play)
        open_events = await self.storage.open_show_events(guild_id=guild_id)
        if any(s == station and _show_of(k) == key for _, s, k, _, _ in open_events):
            return  # this airing has its event (made before a restart, or just now)
        if len(open_events) >= self.max_open:
            _LOGGER.info(
                "no event for a live show in guild %s: %d OnAir events are open already",
                guild_id,
                len(open_events),
            )
            return
        if not may_make_events(guild):
            _LOGGER.info("no event for a live show in guild %s: no Create Events", guild_id)
            return
        rows = await self.storage.show_event_airings(guild_id, station)
        if aired_before(play, [k for k, state in rows if state == EVENT_COMPLETED]):
            return  # its event ended while it was on air (an outage): Discord cannot reopen it
        # The airing's number, one past the highest stored (pruning old rows cannot make it
        # collide): two tries at once claim the same row, and only one creates the event.
        number = 1 + max(_airing_numbers([k for k, _ in rows], key), default=-1)
        airing = airing_key(play, number)
        now = self.clock()
        if not await self.storage.claim_show_event(guild_id, station, airing, now=now):
            return
        planned = await self.slots.take(guild_id, station, now)
        if planned and await self._start_planned(guild_id, station, airing, planned):
            return
        start = datetime.fromtimestamp(now, UTC) + START_AHEAD
        length = max(play.duration or DEFAULT_LENGTH, MIN_LENGTH)
        lang = await guild_lang(self.client, guild_id)  # an event is public: the guild's
        try:
            await self._paced()
            event = await guild.create_scheduled_event(
                name=event_name(play, lang),
                description=event_description(info.name, play, lang),
                start_time=start,
                end_time=start + length,
                entity_type=discord.EntityType.external,
                privacy_level=discord.PrivacyLevel.guild_only,
                location=event_location(info.name, info.links.listen, lang),
            )
        except discord.HTTPException as error:
            _LOGGER.warning(
                "event for a live show in guild %s not made: Discord answered %s (%s)",
                guild_id,
                error.status,
                error.code,
            )
            await self.storage.update_show_event(guild_id, station, airing, state=EVENT_FAILED)
            return
        await self.storage.update_show_event(
            guild_id, station, airing, state=EVENT_CLAIMED, event_id=event.id
        )
        try:
            await self._paced()
            await event.start()
        except discord.HTTPException as error:
            # The event exists: it stays claimed with its id, so the show's end cancels it
            # (marked failed, nothing would ever remove it from the server's events).
            _LOGGER.warning(
                "event for a live show in guild %s not started: Discord answered %s (%s)",
                guild_id,
                error.status,
                error.code,
            )
            return
        await self.storage.update_show_event(
            guild_id, station, airing, state=EVENT_ACTIVE, event_id=event.id
        )
        self.created += 1

    async def _start_planned(self, guild_id: int, station: str, airing: str, event_id: int) -> bool:
        """The airing takes its slot's SCHEDULED event and starts it; False when an admin
        deleted it (a new event is made instead)."""
        await self.storage.update_show_event(
            guild_id, station, airing, state=EVENT_CLAIMED, event_id=event_id
        )
        try:
            await self._paced()
            await self.client.http.edit_scheduled_event(guild_id, event_id, status=ACTIVE)
        except discord.NotFound:
            return False
        except discord.HTTPException as error:
            # Claimed with its id: the show's end cancels it (it never started).
            _LOGGER.warning(
                "scheduled event %s in guild %s not started: Discord answered %s (%s)",
                event_id,
                guild_id,
                error.status,
                error.code,
            )
            return True
        await self.storage.update_show_event(
            guild_id, station, airing, state=EVENT_ACTIVE, event_id=event_id
        )
        self.started_planned += 1
        return True

    async def _finish(
        self, guild_id: int, station: str, key: str, event_id: int, state: str
    ) -> None:
        """The show ended: COMPLETED (CANCELED if it never started); an event an admin
        deleted is just marked done."""
        if event_id:
            status = COMPLETED if state == EVENT_ACTIVE else CANCELED
            try:
                await self._paced()
                await self.client.http.edit_scheduled_event(guild_id, event_id, status=status)
            except discord.NotFound:
                pass  # deleted by an admin
            except discord.HTTPException as error:
                if error.code != FINISHED_EVENT:  # (ended by an admin: finished already)
                    _LOGGER.warning(
                        "event %s in guild %s not completed: Discord answered %s (%s)",
                        event_id,
                        guild_id,
                        error.status,
                        error.code,
                    )
                if error.status >= 500:
                    return  # tried again at the next change
        await self.storage.update_show_event(guild_id, station, key, state=EVENT_COMPLETED)
        self.completed += 1

    async def _paced(self) -> None:
        if self.pace is not None:
            await self.pace()


def airing_key(play: Play, number: int) -> str:
    """``show@number``, and ``~start`` (unix seconds, as the station reports the play's start)
    when the station gives one: how a later run knows the same play of the show."""
    start = f"~{int(play.started.timestamp())}" if play.started is not None else ""
    return f"{show_key(play)}@{number}{start}"


def _show_of(airing: str) -> str:
    """The show of an airing key (a show's title may hold an @ itself)."""
    return airing.rpartition("@")[0]


def aired_before(play: Play, finished: list[str]) -> bool:
    """Whether one of the ``finished`` airings was this play (the same show and start, by the
    station's own clock, within the same-play rule's tolerance); a play with no start: no."""
    if play.started is None:
        return False
    started = play.started.timestamp()
    tolerance = 1.0 if play.started_exact else ESTIMATE_TOLERANCE.total_seconds()
    show = show_key(play)
    for airing in finished:
        name, _, rest = airing.rpartition("@")
        stamp = rest.partition("~")[2]
        if name == show and stamp.isdigit() and abs(int(stamp) - started) <= tolerance:
            return True
    return False


def _airing_numbers(keys: list[str], show: str) -> list[int]:
    numbers = []
    for key in keys:
        name, _, rest = key.rpartition("@")
        number = rest.partition("~")[0]
        if name == show and number.isdigit():
            numbers.append(int(number))
    return numbers
