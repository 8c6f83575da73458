"""Live and offline alerts: one evaluation per station poll, fanned out to every guild that
turned alerts on for the station, each alert recorded (with the station's new alert state, in
one transaction) before the outbox sends it."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import defaultdict
from collections.abc import Coroutine
from typing import Any

from ..station import StationError, StationInfo
from ..station.errors import Failure
from ..storage import AlertSubscription, ScheduledPost
from .alerts import AlertEvent, Observation, evaluate
from .posting import GuildPosts

_LOGGER = logging.getLogger("onair.alerts")
ALERT = "alert"  # the outbox kind
# Seconds the set of followed stations is trusted: in a fleet another process may have turned
# alerts on for a station this process polls.
FOLLOWED_TTL = 30.0
SAVE_TRIES = 3  # evaluations of one poll when another process saves the state meanwhile


def alert_key(sub: AlertSubscription, event: AlertEvent) -> str:
    return f"alert|{sub.guild_id}|{sub.station}|{event.key}"


class AlertService(GuildPosts):
    """What ``/onair alerts`` sets up, and the evaluation of each poll of the stations it
    follows (called by the announcer's watches: only the process polling a station evaluates)."""

    def __post_init__(self) -> None:
        self._followed: set[str] = set()
        self._followed_at = float("-inf")  # monotonic time of the last read
        self.followed_ttl = FOLLOWED_TTL
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._order: defaultdict[tuple[str, ...], asyncio.Lock] = defaultdict(asyncio.Lock)
        self.evaluations = 0
        self.conflicts = 0  # saves refused: another process had saved the state since

    async def stations(self) -> set[str]:
        """The stations some guild (of this process's shards, or any in a fleet) follows."""
        subs = await self.storage.alert_subscriptions()
        self._followed = {s.station for s in subs if self._handles(s.guild_id)}
        self._followed_at = time.monotonic()
        return set(self._followed)

    async def load(self) -> None:
        """At start-up: the config file's ``[[alerts]]`` are stored (each start: the file is
        the owner's word), beside what guild admins set with ``/onair alerts``."""
        for sub in self.settings.alerts:
            await self.storage.save_alert_subscription(sub)

    async def subscribe(self, sub: AlertSubscription) -> None:
        await self.storage.save_alert_subscription(sub)
        self._followed.add(sub.station)

    async def unsubscribe(self, guild_id: int, station: str | None) -> int:
        removed = await self.storage.remove_alert_subscription(guild_id, station)
        still = await self.stations()
        for slug in [station] if station is not None else []:
            if slug not in still and not await self.storage.alert_subscriptions(slug):
                await self.storage.forget_alert_state(slug)
        return removed

    def observe(
        self, slugs: list[str], info: StationInfo | None, error: StationError | None
    ) -> Coroutine[Any, Any, None]:
        """One poll of a watch (its stations ``slugs``), timed now: the work that evaluates it
        for each of them, which the announcer runs in the background (polls of a station in
        the order they came)."""
        now = self.clock()
        # Staff read the alert: the failure's kind, server and cause are kept (the render words
        # them), not the listener's "try again".
        seen = Observation(info, Failure.of(error).dumps() if error is not None else "")
        return self._evaluate(slugs, seen, now)

    async def _evaluate(self, slugs: list[str], seen: Observation, now: float) -> None:
        # A watch's polls are evaluated in the order they came: the lock is taken before the
        # first await (an uncontended asyncio.Lock does not yield), so a later poll's task
        # cannot overtake an earlier one waiting on storage (a pool answers out of order).
        async with self._order[tuple(slugs)]:
            await self._evaluate_in_order(slugs, seen, now)

    async def _evaluate_in_order(self, slugs: list[str], seen: Observation, now: float) -> None:
        if time.monotonic() - self._followed_at >= self.followed_ttl:
            try:
                await self.stations()
            except Exception as error:
                if not self.storage.is_storage_error(error):
                    raise
        # Each station (slug) keeps its own state, even when several name the same upstream
        # station and share one watch: another guild adding the station as its own and turning
        # its alerts on or off never changes what was decided for this one.
        for name in [slug for slug in slugs if slug in self._followed]:
            async with self._locks[name]:
                try:
                    await self._decide(name, seen, now)
                except Exception as error:
                    # The state is unchanged: the next poll decides again (same keys, once).
                    self.storage.log_fault_or_raise(
                        error, _LOGGER, "could not evaluate the alerts of %s (%s)", name, error
                    )

    async def _decide(self, name: str, seen: Observation, now: float) -> None:
        for _ in range(SAVE_TRIES):
            self.evaluations += 1
            state = await self.storage.alert_state(name)
            new, events = evaluate(state, seen, now, self.settings.offline_after)
            if new == state and not events:
                return
            subs: list[AlertSubscription] = []
            if events:
                subs = [
                    sub
                    for sub in await self.storage.alert_subscriptions(name)
                    if self._handles(sub.guild_id)
                ]
            posts = [self._post(sub, event, seen.info, now) for event in events for sub in subs]
            if await self.storage.save_alert_state(name, new, now=now, posts=posts):
                for event in events:
                    _LOGGER.info("alert %s of %s for %d guild(s)", event.kind, name, len(subs))
                self.outbox.send_soon([post.key for post in posts])
                return
            # Another process saved the state since it was read (a watch handed over): decide
            # again from what it saved; its alerts stand, none of these were recorded.
            self.conflicts += 1
        _LOGGER.warning("the alert state of %s kept changing; the next poll decides", name)

    def _post(
        self, sub: AlertSubscription, event: AlertEvent, info: StationInfo | None, now: float
    ) -> ScheduledPost:
        station = self.registry.station(sub.station)
        payload = {
            "kind": event.kind,
            "station": sub.station,
            # the name the guild knows the station by (the same whether or not it answers)
            "station_name": station.name if station else sub.station,
            "title": event.title,
            "at": event.at,
            "since": event.since,
            "reason": event.reason,
            "listen": info.links.listen if info is not None else None,
            "page": info.links.page if info is not None else None,
            "role": sub.role_id if event.kind == "live_start" else 0,
        }
        return ScheduledPost(
            alert_key(sub, event),
            sub.guild_id,
            sub.channel_id,
            ALERT,
            json.dumps(payload),
            0,
            now,
            now + self.settings.max_delivery_age,
        )
