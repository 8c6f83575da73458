"""Discord Scheduled Events for a station's live shows, in the guilds that turned them on.

When a station reports a live show, OnAir creates one external event for it in each guild that
asked (``/onair events``) and starts it (ACTIVE); when the station moves on to anything else it
completes it. One event per airing: the row is claimed in storage before the event is created,
and an airing that already has an open event (after a restart, say) gets no second one. A guild
holds at most ``MAX_OPEN`` of OnAir's open events; the rest are skipped with a log line. Manage
Events is checked before any request (a 403 counts toward Discord's invalid-request limit).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import discord

from ..station import Play, StationInfo
from ..station.play import normalise_title
from ..storage import EVENT_ACTIVE, EVENT_CLAIMED, EVENT_COMPLETED, EVENT_FAILED, Storage
from .text import event_description, event_location, event_name

_LOGGER = logging.getLogger("onair.shows")
MAX_OPEN = 10  # OnAir's open (scheduled or active) events per guild
START_AHEAD = timedelta(minutes=1)  # Discord: a new event starts in the future; OnAir starts it
DEFAULT_LENGTH = timedelta(hours=1)  # an external event needs an end; live shows rarely say
MIN_LENGTH = timedelta(minutes=15)
SCHEDULED, ACTIVE, COMPLETED, CANCELED = 1, 2, 3, 4


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
    ) -> None:
        self.client = client
        self.pace = pace
        self.storage = storage
        self.max_open = max_open
        self.clock = clock
        self.created = 0
        self.completed = 0

    async def station_changed(self, station: str, play: Play | None, info: StationInfo) -> None:
        """A new play on ``station``: complete the open events of any other show, start this
        one's where a guild of this process asked for them."""
        key = show_key(play) if play is not None and play.live else None
        for guild_id, _station, stored_key, event_id, state in await self.storage.open_show_events(
            station=station
        ):
            if _show_of(stored_key) != key and self.client.get_guild(guild_id):
                await self._finish(guild_id, station, stored_key, event_id, state)
        if play is None or key is None:
            return
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
        if not guild.me.guild_permissions.manage_events:
            _LOGGER.info("no event for a live show in guild %s: no Manage Events", guild_id)
            return
        # The airing's number, one past the highest stored (pruning old rows cannot make it
        # collide): two tries at once claim the same row, and only one creates the event.
        aired = await self.storage.show_event_keys(guild_id, station)
        airing = f"{key}@{1 + max(_airing_numbers(aired, key), default=-1)}"
        now = self.clock()
        if not await self.storage.claim_show_event(guild_id, station, airing, now=now):
            return
        start = datetime.fromtimestamp(now, UTC) + START_AHEAD
        length = max(play.duration or DEFAULT_LENGTH, MIN_LENGTH)
        try:
            await self._paced()
            event = await guild.create_scheduled_event(
                name=event_name(play),
                description=event_description(info.name, play),
                start_time=start,
                end_time=start + length,
                entity_type=discord.EntityType.external,
                privacy_level=discord.PrivacyLevel.guild_only,
                location=event_location(info.name, info.links.listen),
            )
            await self.storage.update_show_event(
                guild_id, station, airing, state=EVENT_CLAIMED, event_id=event.id
            )
            await self._paced()
            await event.start()
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
            guild_id, station, airing, state=EVENT_ACTIVE, event_id=event.id
        )
        self.created += 1

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
                pass
            except discord.HTTPException as error:
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


def _show_of(airing: str) -> str:
    """The show of an airing key (``show@number``; a show's title may hold an @ itself)."""
    return airing.rpartition("@")[0]


def _airing_numbers(keys: list[str], show: str) -> list[int]:
    numbers = []
    for key in keys:
        name, _, number = key.rpartition("@")
        if name == show and number.isdigit():
            numbers.append(int(number))
    return numbers
