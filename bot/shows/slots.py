"""A station's scheduled live shows as a guild's SCHEDULED Discord events, ahead of time.

For a station whose host publishes its schedule, each upcoming streamer (live DJ) slot within
``AHEAD`` becomes one external event in each guild that turned events on for it (a playlist's
slot is the AutoDJ, not a show: no event). A slot's event is claimed in storage before it is
made (one per slot and guild across a fleet and restarts); a moved slot moves its event; a
slot gone from the schedule (or over with no live show) has its event cancelled. When the
station goes live during a slot, its live airing takes the slot's event (:meth:`take`) and
starts it, instead of making a second one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta

import discord

from ..station import Play, ScheduledShow
from ..storage import EVENT_FAILED, Storage
from ..util.i18n import guild_lang
from .text import event_description, event_location, event_name

_LOGGER = logging.getLogger("onair.shows")
AHEAD = timedelta(days=7)  # how far ahead a slot becomes an event
MAX_PLANNED = 10  # OnAir's scheduled (not yet live) events per guild, all stations together
EARLY = 1800.0  # seconds before its slot a live show still takes the slot's event
START_AHEAD = 60.0  # Discord: a new event starts in the future
DEFAULT_LENGTH = 3600.0  # a slot with no end (an external event needs one)
SCHEDULED, CANCELED = 1, 4


class SlotEvents:
    """Plans, moves and cancels the guilds' events of scheduled slots."""

    def __init__(
        self,
        client: discord.Client,
        storage: Storage,
        *,
        max_planned: int = MAX_PLANNED,
        ahead: timedelta = AHEAD,
        pace: Callable[[], Awaitable[None]] | None = None,
        may_make: Callable[[discord.Guild], bool],
    ) -> None:
        self.client = client
        self.storage = storage
        self.max_planned = max_planned
        self.ahead = ahead
        self.pace = pace
        self.may_make = may_make
        self.planned = self.moved = self.cancelled = 0

    async def plan(
        self,
        station: str,
        guilds: Sequence[int],
        shows: Sequence[ScheduledShow],
        *,
        now: float,
        station_name: str | None,
        listen: str | None,
    ) -> None:
        """Bring each guild's events of the station's slots in line with ``shows`` (the
        whole schedule read, from now on)."""
        listed = {show.slot: show for show in shows if show.is_live_show and _times(show)[1] >= now}
        horizon = now + self.ahead.total_seconds()
        wanted = [
            show
            for show in listed.values()
            if now + START_AHEAD < show.start.timestamp() <= horizon
        ]
        for guild_id in guilds:
            guild = self.client.get_guild(guild_id)
            if guild is None:
                continue
            try:
                await self._plan_guild(guild, station, listed, wanted, now, station_name, listen)
            except Exception as error:  # one guild's trouble is not the others'
                _LOGGER.warning("scheduled events in guild %s not updated: %r", guild_id, error)

    async def _plan_guild(
        self,
        guild: discord.Guild,
        station: str,
        listed: dict[str, ScheduledShow],
        wanted: list[ScheduledShow],
        now: float,
        station_name: str | None,
        listen: str | None,
    ) -> None:
        planned = await self.storage.planned_slot_events(guild_id=guild.id)
        mine = {key: row for row in planned if row[1] == station for key in (row[2],)}
        for key, (_, _, _, event_id, starts_at, ends_at) in mine.items():
            show = listed.get(key)
            if show is None:
                await self.cancel(guild.id, station, key, event_id)
            elif (starts_at, ends_at) != _times(show):
                await self._move(guild.id, station, key, event_id, show, now)
        room = self.max_planned - len(await self.storage.planned_slot_events(guild_id=guild.id))
        new = [show for show in wanted if show.slot not in mine]
        if not new or room <= 0:
            return
        if not self.may_make(guild):
            return  # said once at start-up (and in /onair status)
        lang = await guild_lang(self.client, guild.id)
        for show in new[:room]:
            start, end = _times(show)
            if not await self.storage.claim_slot_event(
                guild.id, station, show.slot, starts_at=start, ends_at=end, now=now
            ):
                continue  # made before (another process, an earlier run) or refused
            play = Play(title=show.title, live=True)
            try:
                await self._paced()
                event = await guild.create_scheduled_event(
                    name=event_name(play, lang),
                    description=event_description(station_name, play, lang),
                    start_time=datetime.fromtimestamp(start, UTC),
                    end_time=datetime.fromtimestamp(end, UTC),
                    entity_type=discord.EntityType.external,
                    privacy_level=discord.PrivacyLevel.guild_only,
                    location=event_location(station_name, listen, lang),
                )
            except discord.HTTPException as error:
                _LOGGER.warning(
                    "event for a scheduled show in guild %s not made: Discord answered %s (%s)",
                    guild.id,
                    error.status,
                    error.code,
                )
                await self.storage.close_slot_event(
                    guild.id, station, show.slot, state=EVENT_FAILED
                )
                continue
            await self.storage.set_slot_event_id(guild.id, station, show.slot, event.id)
            self.planned += 1

    async def _move(
        self, guild_id: int, station: str, key: str, event_id: int, show: ScheduledShow, now: float
    ) -> None:
        start, end = _times(show)
        if start <= now + START_AHEAD:
            return  # moved to now or the past: its live show takes it as it is
        if event_id:
            try:
                await self._paced()
                await self.client.http.edit_scheduled_event(
                    guild_id,
                    event_id,
                    scheduled_start_time=datetime.fromtimestamp(start, UTC).isoformat(),
                    scheduled_end_time=datetime.fromtimestamp(end, UTC).isoformat(),
                )
            except discord.NotFound:
                await self.storage.close_slot_event(guild_id, station, key)
                return  # deleted by an admin: left so
            except discord.HTTPException as error:
                _LOGGER.warning(
                    "event %s in guild %s not moved: Discord answered %s (%s)",
                    event_id,
                    guild_id,
                    error.status,
                    error.code,
                )
                return  # tried again at the next read of the schedule
        await self.storage.move_slot_event(guild_id, station, key, starts_at=start, ends_at=end)
        self.moved += 1

    async def cancel(self, guild_id: int, station: str, key: str, event_id: int) -> None:
        """The slot left the schedule (or ended with no show): its event is cancelled."""
        if not await self.storage.close_slot_event(guild_id, station, key):
            return  # its live show took it, or another process cancelled it
        if event_id:
            try:
                await self._paced()
                await self.client.http.edit_scheduled_event(guild_id, event_id, status=CANCELED)
            except discord.HTTPException as error:
                if not isinstance(error, discord.NotFound):
                    _LOGGER.warning(
                        "event %s in guild %s not cancelled: Discord answered %s (%s)",
                        event_id,
                        guild_id,
                        error.status,
                        error.code,
                    )
        self.cancelled += 1

    async def take(self, guild_id: int, station: str, now: float) -> int:
        """The station went live now: the event of the slot it airs in (from ``EARLY`` before
        its start to its end), taken from the plan once; 0 when there is none."""
        rows = await self.storage.planned_slot_events(guild_id=guild_id, station=station)
        during = [row for row in rows if row[4] - EARLY <= now <= row[5] and row[3]]
        for _, _, key, event_id, _, _ in sorted(during, key=lambda row: abs(row[4] - now)):
            if await self.storage.close_slot_event(guild_id, station, key):
                return event_id
        return 0

    async def _paced(self) -> None:
        if self.pace is not None:
            await self.pace()


def _times(show: ScheduledShow) -> tuple[float, float]:
    """A slot's start and end in unix seconds (an hour long when the host gives no end)."""
    start = show.start.timestamp()
    end = show.end.timestamp() if show.end is not None else start + DEFAULT_LENGTH
    return start, max(end, start + 60.0)
