"""The fan-out of one new play: into the history, to the channels that want it (after their
filters), recorded in the delivery outbox before any send, then sent (``outbox.py``).

One station's plays are fanned out one at a time (a lock per station), so a play and the sweep's
resumption of an earlier one never interleave their sends.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from ..catalog.registry import StationRegistry
from ..config import Settings, StationConfig
from ..history.playlog import PlayRecorder
from ..station import Play, StationError
from ..storage import RequestCredit, Storage, Subscription
from ..util.text import describe
from . import snapshot
from .filters import skip_reason
from .fleet import FleetCoordinator
from .outbox import DeliveryOutbox, Resumable, expires_at
from .watcher import Announcement

_LOGGER = logging.getLogger("onair.announcer")
Credit = Callable[[str, Play, str], Awaitable[tuple[RequestCredit, ...]]]


class FanOut:
    """Sends each new play of a station to its channels, exactly once per channel."""

    def __init__(
        self,
        settings: Settings,
        registry: StationRegistry,
        storage: Storage,
        outbox: DeliveryOutbox,
        fleet: FleetCoordinator | None,
        change_listeners: Sequence[Callable[[str, Announcement], Coroutine[Any, Any, None]]],
        refresh: Callable[[], Awaitable[None]],
        credit: Credit | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.storage = storage
        self.outbox = outbox
        self.fleet = fleet
        self.change_listeners = change_listeners  # told of a play even with no channel
        self.refresh = refresh  # re-plans the watches after a channel was paused
        self._station_locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.skipped = 0
        # Who requested a play (bot.requests), decided here, the one place plays are fanned
        # out, and recorded with the play: every process of a fleet credits the same way.
        self.credit = credit
        # Used when the registry records no plays itself (the service without the bot).
        self._own_recorder = PlayRecorder(storage)

    async def _item_type(
        self, station: StationConfig, play: Play, subs: Iterable[Subscription]
    ) -> str | None:
        """ITEMTYPE is only in the playlist: fetched only when some channel filters on it."""
        if not any(s.skip_item_types for s in subs):
            return None
        try:
            playlist = await self.registry.client(station).playlist()
        except StationError:
            return None
        for item in playlist.items:
            if item.title and item.title.casefold() == play.title.casefold():
                return item.item_type
        return None

    async def run(self, slug: str, announcement: Announcement) -> None:
        """Fan one new play of station ``slug`` out to its channels."""
        station = self.registry.station(slug)
        if station is None:
            return
        play = announcement.play
        until = expires_at(play, announcement.detected_at, self.settings.max_delivery_age)
        async with self._station_locks[slug]:
            detected = datetime.fromtimestamp(announcement.detected_at, UTC)
            await self.history.record(slug, play, announcement.info.listener_count, detected)
            stored = await self.outbox.retrying(
                f"reading the channels of station {slug}",
                lambda: self.storage.subscriptions(slug),
                until=until,
            )
            if stored is None:
                return
            # In a fleet the poller records the play for every channel of every shard (each
            # process then sends to its own shards' channels); alone, for its own shards.
            subs = [
                s
                for s in stored
                if s.paused_reason is None
                and (self.fleet is not None or self.settings.handles_guild(s.guild_id))
            ]
            item_type = await self._item_type(station, play, subs)
            targets = []
            for sub in subs:
                if sub.last_play is not None and play.same_as(sub.last_play):
                    continue  # announced before a restart
                if skip_reason(sub, play, item_type) is not None:
                    self.skipped += 1
                    continue
                targets.append(sub)
            # In a fleet every play is recorded and published while something besides the
            # channels follows plays (the shows): the other processes learn of it that way.
            if not targets and not (self.fleet is not None and self.change_listeners):
                await self._credited(slug, play, play.claim_key)  # aired: requests are done
                return
            play_key = await self._known_key(slug, play, until)
            credits = await self._credited(slug, play, play_key)
            if credits:
                announcement = dataclasses.replace(announcement, requested_by=credits)
            payload = snapshot.dump(announcement)
            announcement_id = await self.outbox.retrying(
                f"recording the play {play.display!r} of station {slug} "
                f"for {len(targets)} channel(s)",
                lambda: self.storage.enqueue_announcement(
                    slug,
                    play_key,
                    payload,
                    detected_at=announcement.detected_at,
                    expires_at=until,
                    subscription_ids=[s.id for s in targets],
                ),
                until=until,
            )
            if announcement_id is None:
                self.outbox.note_dropped(len(targets))
                _LOGGER.error(
                    "dropped the play %r of station %s for %d channel(s): storage did not "
                    "recover before the play went stale",
                    play.display,
                    slug,
                    len(targets),
                )
                return
            if self.fleet is not None:
                await self.fleet.publish(announcement_id)
                targets = [s for s in targets if self.settings.handles_guild(s.guild_id)]
            paused = await self.outbox.drain(
                announcement_id, play_key, station, announcement, targets, until
            )
        await self.catch_up_history()  # after the sends: the history never holds them up
        if paused:
            await self.refresh()  # a paused channel may have been the station's last one

    async def _credited(self, slug: str, play: Play, play_key: str) -> tuple[RequestCredit, ...]:
        """Best effort: an announcement goes out without its credit rather than wait."""
        if self.credit is None:
            return ()
        try:
            return await self.credit(slug, play, play_key)
        except Exception as error:
            self.storage.log_fault_or_raise(
                error, _LOGGER, "could not credit requests of %s (%s)", slug, describe(error)
            )
            return ()

    async def _known_key(self, slug: str, play: Play, until: float) -> str:
        """The key this play was recorded under already (by an earlier run or another process,
        whose estimate of an inexact start may round differently), else its own."""
        recent = await self.outbox.retrying(
            f"reading the recent plays of station {slug}",
            lambda: self.storage.recent_announcements(slug),
            until=until,
        )
        for key, payload in recent or []:
            try:
                if snapshot.load_play(payload).same_as(play):
                    return key
            except ValueError:
                continue
        return play.claim_key

    @property
    def history(self) -> PlayRecorder:
        """Who writes plays into the history: the registry's recorder (every poll's play goes
        through it), else this fan-out's own. Best effort: it never holds an announcement up,
        and keeps a play storage failed for later."""
        return self.registry.recorder or self._own_recorder

    async def catch_up_history(self) -> None:
        """Write the plays storage failed into the history (the sweep calls it)."""
        if self.history.pending:
            await self.history.catch_up()

    async def resume(self, work: Resumable) -> None:
        """Send deliveries a sweep found pending, under the station's lock."""
        async with self._station_locks[work.station.slug]:
            paused = await self.outbox.drain(
                work.announcement_id,
                work.play_key,
                work.station,
                work.announcement,
                work.subs,
                work.until,
            )
        if paused:
            await self.refresh()
