"""The weekly recap: each guild's slot (its zone, day and hour) checked every minute; the week's
summary recorded under the guild's key for the slot's week (the ISO week on the guild's clock)
before it is sent, so it is posted once per guild and week in a fleet, across restarts and
whatever the guild's zone does meanwhile, and a slot missed while OnAir was down is posted
late, once."""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..storage import Recap, ScheduledPost
from ..util.tasks import stop_task
from .outbox import LoopWords, repeat
from .posting import GuildPosts
from .recap import last_slot, summarise, week_before

_LOGGER = logging.getLogger("onair.recap")
RECAP = "recap"  # the outbox kind
TICK = 60.0  # seconds between looks at the slots
TICK_WORDS = LoopWords("the recap tick failed", "could not look at the recaps (%s)")
STALE_AFTER = timedelta(days=6)  # a recap not sent by then gives way to the next one


# What one tick sums up once, whichever guilds share it: (station, week start, end, zone).
Week = tuple[str, float, float, str]


def recap_key(guild_id: int, slot: datetime) -> str:
    """The guild's recap of the week its slot falls in, on its own clock (``slot`` carries the
    guild's zone): a zone change moves the slot, never to a second recap of a week."""
    year, week, _ = slot.isocalendar()
    return f"recap|{guild_id}|{year}-W{week:02d}"


def legacy_recap_key(guild_id: int, slot: datetime) -> str:
    """How a recap was keyed before (the slot in UTC): a week recorded so is not posted again."""
    return f"recap|{guild_id}|{slot.astimezone(UTC).strftime('%Y-%m-%dT%H:%M')}"


class RecapService(GuildPosts):
    """What ``/onair recap`` sets up, and the minute tick that posts each guild's week."""

    def __post_init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self.summaries = 0  # weeks summed up (one per station, week and zone in a tick)

    async def start(self, *, every: float = TICK) -> None:
        await self.tick()  # a slot passed while OnAir was down: posted now, late, once
        ticking = repeat(every, self.tick, self.storage, _LOGGER, TICK_WORDS)
        self._task = asyncio.create_task(ticking)

    async def stop(self) -> None:
        await stop_task(self._task)
        self._task = None

    async def stations(self) -> set[str]:
        """The stations recaps sum up (watched, so their plays reach the history)."""
        return {r.station for r in await self.storage.recaps() if self._handles(r.guild_id)}

    async def load(self) -> None:
        """At start-up: the config file's ``[[recaps]]`` are stored. A recap stored as the file
        says keeps when it was turned on, so a slot missed while OnAir was down still posts."""
        stored = {r.guild_id: r for r in await self.storage.recaps()}
        for wanted in self.settings.recaps:
            have = stored.get(wanted.guild_id)
            same = have is not None and (
                have.channel_id,
                have.station,
                have.weekday,
                have.hour,
            ) == (wanted.channel_id, wanted.station, wanted.weekday, wanted.hour)
            if not same:
                await self.configure(
                    wanted.guild_id, wanted.channel_id, wanted.station, wanted.weekday, wanted.hour
                )

    async def configure(
        self, guild_id: int, channel_id: int, station: str, weekday: int, hour: int
    ) -> Recap:
        recap = Recap(guild_id, channel_id, station, weekday, hour, self.clock())
        await self.storage.save_recap(recap)
        return recap

    async def tick(self) -> list[str]:
        """Record and send every recap whose latest slot has passed and is not recorded yet;
        the keys it recorded."""
        now = self.clock()
        recorded = []
        weeks: dict[Week, dict[str, Any]] = {}
        for recap in await self.storage.recaps():
            if self._handles(recap.guild_id):
                key = await self._consider(recap, now, weeks)
                if key is not None:
                    recorded.append(key)
        self.outbox.send_soon(recorded)
        return recorded

    async def _zone(self, guild_id: int) -> ZoneInfo:
        name = (await self.storage.guild_settings(guild_id)).timezone
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            return ZoneInfo("UTC")

    async def _consider(
        self, recap: Recap, now: float, weeks: dict[Week, dict[str, Any]]
    ) -> str | None:
        zone = await self._zone(recap.guild_id)
        slot = last_slot(datetime.fromtimestamp(now, UTC), zone, recap.weekday, recap.hour)
        if slot.timestamp() < recap.since:
            return None  # turned on after this slot: the next one is the first
        key = recap_key(recap.guild_id, slot)
        if await self.storage.post_recorded(key) or await self.storage.post_recorded(
            legacy_recap_key(recap.guild_id, slot)
        ):
            return None
        start, end = week_before(slot)
        week = (recap.station, start.timestamp(), end.timestamp(), str(zone))
        summary = weeks.get(week)
        if summary is None:
            summary = weeks[week] = await self._summarise(recap.station, start, end, zone)
        post = ScheduledPost(
            key,
            recap.guild_id,
            recap.channel_id,
            RECAP,
            json.dumps(summary),
            0,
            now,
            (slot + STALE_AFTER).timestamp(),
        )
        if not await self.storage.record_post(post, now=now):
            return None  # another process recorded it first
        late = now - slot.timestamp()
        _LOGGER.info(
            "weekly recap for guild %d recorded%s",
            recap.guild_id,
            f" ({late / 3600:.1f} h late)" if late > 2 * TICK else "",
        )
        return key

    async def _summarise(
        self, slug: str, start: datetime, end: datetime, zone: ZoneInfo
    ) -> dict[str, Any]:
        """The week's summary. Summing up a busy week's plays (up to 50,000 rows) takes tens of
        milliseconds: done in a worker thread, so the event loop goes on meanwhile."""
        self.summaries += 1
        station = self.registry.station(slug)
        plays = await self.storage.plays_between(slug, start, end)
        liked = await self.storage.most_liked(slug, start, end)
        return await asyncio.to_thread(
            summarise,
            plays,
            liked,
            station_name=station.name if station else slug,
            start=start,
            end=end,
            zone=zone,
        )
