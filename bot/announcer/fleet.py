"""One poll per station across a fleet of processes sharing PostgreSQL.

Each station watch is leased in the ``watch_leases`` table (job id → owner, lease end on the
database's clock). Every process registers the watches of the stations its shards follow, but
only the lease holder polls; the others keep theirs idle and try to take the lease on every
tick (a third of the lease). A holder renews its leases on each tick and gives them back when
it stops (SIGTERM), so another process polls within a tick; after a crash (kill -9) the lease
runs out first. A holder whose renewals fail for longer than the lease stops polling, since
another process may have taken over by then.

The holder also stores each station's last info (``station_state``) so the other processes can
answer commands from it, and publishes every recorded play (``NOTIFY onair_plays``) so each
process delivers it to the channels of its own shards at once; a notification missed while the
listening connection was down is found by the delivery sweep.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime

from ..station import StationInfo
from ..storage import Storage
from ..storage.fleet import PlayListener
from ..util.tasks import stop_task
from ..util.text import describe
from . import snapshot
from .watcher import WatchScheduler

_LOGGER = logging.getLogger("onair.fleet")
RETRY_FIRST = 0.2  # seconds to the first retry of a tick storage failed (then doubling)


class FleetCoordinator:
    """Watch leases, shared station state and play notifications for one process."""

    def __init__(
        self,
        storage: Storage,
        watches: WatchScheduler,
        owner: str,
        *,
        lease: float,
        on_play: Callable[[int], None],
        on_connect: Callable[[], None],
    ) -> None:
        self.storage = storage
        self.watches = watches
        self.owner = owner
        self.lease = lease
        self.on_play = on_play
        self.on_connect = on_connect
        self.taken = 0  # leases this process took (start-up and takeovers)
        self._valid_until = 0.0  # monotonic: until when the leases held are certainly ours
        self._saved: dict[str, datetime] = {}  # job id → fetch time of the info last stored
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listener: PlayListener | None = None

    async def start(self) -> None:
        self._listener = self.storage.listen_plays(self.on_play, self.on_connect)
        await self.tick()
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop polling and give every lease back, so another process polls at once."""
        await stop_task(self._task)
        self._task = None
        if self._listener is not None:
            await self._listener.close()
            self._listener = None
        for job_id in self.watches.job_ids():
            self.watches.set_owned(job_id, False)
        try:
            await self.storage.release_watches(self.owner)
        except Exception as error:
            self.storage.log_fault_or_raise(
                error,
                _LOGGER,
                "could not give the watch leases back (%s); they run out in %.0fs",
                describe(error),
                self.lease,
            )

    def wake(self) -> None:
        """Take newly registered watches now rather than at the next tick."""
        self._wake.set()

    async def forget(self, job_ids: list[str]) -> None:
        """Watches this process no longer needs: another process that still does polls them."""
        try:
            await self.storage.release_watches(self.owner, job_ids)
        except Exception as error:
            self.storage.log_fault_or_raise(
                error, _LOGGER, "could not give watch leases back (%s)", describe(error)
            )

    async def publish(self, announcement_id: int) -> None:
        """Best effort: a process that misses it finds the play in its next sweep."""
        try:
            await self.storage.publish_play(announcement_id)
        except Exception as error:
            self.storage.log_fault_or_raise(
                error,
                _LOGGER,
                "could not publish announcement %d (%s); the other processes' sweeps find it",
                announcement_id,
                describe(error),
            )

    async def shared_info(self, job_id: str) -> StationInfo | None:
        """The station's info as its poller last stored it (None when this process polls it,
        or nothing is stored)."""
        watch = self.watches.get(job_id)
        if watch is not None and watch.owned:
            return None
        row = await self.storage.station_state(job_id)
        if row is None:
            return None
        try:
            return snapshot.load_info(row[0])
        except ValueError:
            return None

    async def _run(self) -> None:
        interval = self.lease / 3
        retry = RETRY_FIRST
        wait = interval
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)
            self._wake.clear()
            try:
                renewed = await self.tick()
            except Exception:
                _LOGGER.exception("the watch lease tick failed")
                renewed = False
            # A tick storage failed is tried again soon (0.2 s doubling), not a third of a
            # lease later: the leases are renewed while they are still ours.
            if renewed:
                wait, retry = interval, RETRY_FIRST
            else:
                wait, retry = min(retry, interval), retry * 2

    async def tick(self) -> bool:
        """Renew the leases held, try to take the others, start or stop polling accordingly,
        and store the polled stations' latest info. False when storage failed the renewal."""
        started = time.monotonic()
        wanted = self.watches.job_ids()
        renewed = True
        try:
            owned = await self.storage.renew_watches(self.owner, self.lease)
            candidates = [j for j in wanted if j not in owned]
            taken = await self.storage.acquire_watches(candidates, self.owner, self.lease)
            owned |= taken
            stray = owned - set(wanted)  # released by refresh() while this tick ran
            if stray:
                await self.storage.release_watches(self.owner, sorted(stray))
                owned -= stray
            self._valid_until = started + self.lease
        except Exception as error:
            if not self.storage.is_storage_error(error):
                raise
            if time.monotonic() < self._valid_until:
                self.storage.health.warn(
                    _LOGGER, "could not renew the watch leases (%s)", describe(error)
                )
                return False
            _LOGGER.warning(
                "could not renew the watch leases for %.0fs (%s): polling stops until they "
                "are renewed (another process may poll meanwhile)",
                self.lease,
                describe(error),
            )
            owned, taken, renewed = set(), set(), False
        gained = lost = 0
        for job_id in wanted:
            if self.watches.set_owned(job_id, job_id in owned):
                if job_id in owned:
                    gained += 1
                else:
                    lost += 1
        self.taken += len(taken)
        if gained or lost:
            _LOGGER.info(
                "watch leases: took %d, lost %d; this process polls %d of its %d station(s)",
                gained,
                lost,
                self.watches.owned_count(),
                self.watches.count(),
            )
        await self._save_states()
        return renewed

    async def _save_states(self) -> None:
        """Best effort: commands elsewhere fall back to asking the station."""
        states = []
        for watch in self.watches.all():
            job_id, info = watch.job_id, watch.last_info
            if not watch.owned or info is None or self._saved.get(job_id) == info.fetched_at:
                continue
            states.append((job_id, snapshot.dump_info(info), info.fetched_at))
        for job_id in [j for j in self._saved if j not in self.watches]:
            del self._saved[job_id]
        if not states:
            return
        try:
            await self.storage.save_station_states(
                [(job_id, payload, at.timestamp()) for job_id, payload, at in states]
            )
        except Exception as error:
            self.storage.log_fault_or_raise(
                error, _LOGGER, "could not store the stations' latest info (%s)", describe(error)
            )
            return
        for job_id, _payload, at in states:
            self._saved[job_id] = at
