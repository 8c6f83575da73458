"""One watch per station, scheduled by APScheduler; used alike by the bot and the console."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import random
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from apscheduler.jobstores.base import JobLookupError
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from ..station import Play, StationClient, StationError, StationInfo, redact_url
from ..station.errors import Failure
from ..station.source import Feature
from ..storage.models import RequestCredit
from .catchup import aired_between
from .detector import PlayDetector
from .policy import PollPolicy, PollSettings
from .pollreport import PollReport

_LOGGER = logging.getLogger("onair.watch")
ELSEWHERE = "polled by another process"  # the state of a fleet's idle watch (/onair status)


@dataclass(frozen=True, slots=True)
class Announcement:
    """A new play detected on a station."""

    play: Play
    info: StationInfo
    detected_at: float  # unix seconds
    # False for a play that aired between two polls, found in ``recent`` once it had ended
    # (see ``catchup``): recorded and announced, but nothing shows it as on air now.
    on_air: bool = True
    # Who requested the play, decided once where plays are fanned out (every guild's; each
    # channel shows its own guild's only).
    requested_by: tuple[RequestCredit, ...] = ()

    @property
    def station_name(self) -> str | None:
        return self.info.name


@dataclass(slots=True)
class StationStatus:
    """What the status command and metrics show about one station."""

    state: str = "starting"  # starting | ok | failing | unreachable | ELSEWHERE
    last_poll: datetime | None = None
    next_poll: datetime | None = None
    last_error: str | None = None
    failure: Failure | None = None  # the last failed poll, as staff read it
    failed_at: datetime | None = None  # and when it failed
    unreachable_since: datetime | None = None
    polls: int = 0
    errors: int = 0
    announcements: int = 0
    last_latency: float | None = None
    history: list[str] = field(default_factory=list)


AnnouncementListener = Callable[[Announcement], Awaitable[None]]
ErrorListener = Callable[[StationError], Awaitable[None]]
# Called after every poll with the info (None when it failed) and the error (None when it did
# not): the live and offline alerts judge each poll, not only new plays.
PollListener = Callable[[StationInfo | None, StationError | None], None]


# Made once per process: the job id is logged, and a bare digest of the key could be guessed
# offline from a list of candidate keys; a keyed hash with a secret nobody sees cannot.
_JOB_ID_SECRET = secrets.token_bytes(32)


def job_id_for(client: StationClient, *, secret: bytes | None = None) -> str:
    """Stable per (base URL, station id, key) within a process: HMAC-SHA256 under a per-process
    secret, so the logged id reveals nothing about the key."""
    message = "\x00".join(client.identity).encode()
    mac = hmac.new(secret or _JOB_ID_SECRET, message, hashlib.sha256).hexdigest()[:20]
    return f"watch:{mac}"


class StationWatch:
    """Polls one station, detects new plays and hands them to its listeners."""

    def __init__(
        self,
        client: StationClient,
        *,
        settings: PollSettings | None = None,
        job_id: str | None = None,
        last_play: Play | None = None,
        label: Callable[[], str] | None = None,
        rng: random.Random | None = None,
        timer: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.detector = PlayDetector(last_play)
        self.policy = PollPolicy(settings, rng=rng)
        self.timer = timer  # times each request's round trip (a test passes its manual clock)
        self._answered = False  # whether a poll of this watch got an answer yet
        self.status = StationStatus()
        self.listeners: list[AnnouncementListener] = []
        self.error_listeners: list[ErrorListener] = []
        self.poll_listeners: list[PollListener] = []
        self.job_id = job_id or job_id_for(client)
        self.busy = False
        self.poll_again = False  # a poll was asked for while one was running
        # In a fleet (PostgreSQL) only the process holding the station's watch lease polls;
        # the others keep the watch registered but idle (see WatchScheduler.set_owned).
        self._owned = True
        self.last_info: StationInfo | None = None  # of the last successful poll
        # What the host pushed since the last poll: the next poll reads it instead of asking.
        self.pushed: StationInfo | None = None
        # The owner's log (the bot): a failing station named by its configured id and key
        # variable, once per cause. Without a label (`onair watch`, which prints its own error
        # lines) failures are DEBUG.
        self.label = label or self._address
        self.report = PollReport(label) if label is not None else None

    def _address(self) -> str:
        return f"station {self.client.station_id} of {redact_url(self.client.base_url)}"

    @property
    def owned(self) -> bool:
        return self._owned

    @owned.setter
    def owned(self, value: bool) -> None:
        if value != self._owned:
            # Polled by another process meanwhile: the play this watch saw last is stale, and
            # the plays since were that process's to announce (none is recovered from them).
            # A push kept from before is stale too, and so is what the client saw begin.
            self._answered = False
            self.pushed = None
            if value:
                self.client.forget_observed()
        self._owned = value

    async def poll(self) -> float:
        """Poll once; return the delay in seconds before the next poll."""
        self.busy = True
        try:
            return await self._poll()
        finally:
            self.busy = False

    async def _poll(self) -> float:
        status = self.status
        now = datetime.now(UTC)
        status.last_poll = now
        status.polls += 1
        info, self.pushed = self.pushed, None
        if info is not None:
            await self.client.offer(info)
        else:
            started = self.timer()
            try:
                info = await self.client.info(max_age=0)
            except StationError as error:
                return await self._failed(error, now)
            self.policy.learn_latency(self.timer() - started)
            status.last_latency = self.policy.latency
        status.state = "ok"
        status.unreachable_since = None
        if self.report is not None:
            self.report.succeeded()
        self.last_info = info
        previous = self.detector.current
        play = self.detector.observe(info)
        if play is not None:
            self.policy.learn_play(play, info)
            detected = time.time()
            for announcement in [
                *self._aired_between(info, previous, play, detected),
                Announcement(play, info, detected),
            ]:
                await self._announce(announcement)
        self._answered = True
        self._polled(info, None)
        delay = self.policy.after_success(info, self.detector.current)
        if self.client.push_live:
            # The host tells of each change itself: a poll is only the safety net.
            delay = max(delay, self.policy.settings.max_interval)
        return delay

    def _aired_between(
        self, info: StationInfo, previous: Play | None, play: Play, detected: float
    ) -> list[Announcement]:
        """Plays that aired after ``previous`` and ended before this answer (a short item
        after a live show), recovered from ``recent``: only once this watch has had an answer
        since it last began polling (``previous`` then was seen on air by it: a restart, or a
        station taken over from another process, recovers nothing), and only back to
        ``previous`` (see ``catchup.aired_between``)."""
        if previous is None or not self._answered:
            return []
        return [
            Announcement(past, view, detected, on_air=False)
            for past, view in aired_between(info, previous, play)
            if self.detector.remember(past)
        ]

    async def _announce(self, announcement: Announcement) -> None:
        self.status.announcements += 1
        for listener in list(self.listeners):
            try:
                await listener(announcement)
            except Exception:
                _LOGGER.exception("announcement listener failed for %s", announcement.play.display)

    def _polled(self, info: StationInfo | None, error: StationError | None) -> None:
        for listener in list(self.poll_listeners):
            try:
                listener(info, error)
            except Exception:
                _LOGGER.exception("poll listener failed")

    async def _failed(self, error: StationError, now: datetime) -> float:
        status = self.status
        status.errors += 1
        status.last_error = error.message
        status.failure = Failure.of(error)
        status.failed_at = now
        delay = self.policy.after_failure()
        if self.policy.unreachable:
            if status.unreachable_since is None:
                status.unreachable_since = now
            status.state = "unreachable"
        else:
            status.state = "failing"
        if self.report is not None:
            self.report.failed(error, delay)
        else:
            _LOGGER.debug("%s failed (%s); next poll in %.0f s", self.label(), error.message, delay)
        self._polled(None, error)
        for listener in list(self.error_listeners):
            try:
                await listener(error)
            except Exception:
                _LOGGER.exception("error listener failed")
        return delay


class WatchScheduler:
    """Keeps one APScheduler job per watched station, re-armed after every poll."""

    def __init__(self, scheduler: AsyncIOScheduler) -> None:
        self.scheduler = scheduler
        self._watches: dict[str, StationWatch] = {}
        # One follower of the host's pushes per watch polled here (``Feature.PUSH``): in a
        # fleet only the watch's holder keeps the host's stream open.
        self._pushes: dict[str, asyncio.Task[None]] = {}

    # What the announcer service and the fleet ask of the watches -------------------------

    def get(self, job_id: str) -> StationWatch | None:
        """The watch with this job id, or None when no station of that id is watched."""
        return self._watches.get(job_id)

    def __contains__(self, job_id: object) -> bool:
        return job_id in self._watches

    def count(self) -> int:
        """How many stations are watched (polling here or not)."""
        return len(self._watches)

    def job_ids(self) -> list[str]:
        """The job ids watched now (a copy: the caller may add and remove meanwhile)."""
        return list(self._watches)

    def all(self) -> list[StationWatch]:
        """Every watch, polling here or not (a copy)."""
        return list(self._watches.values())

    def owned_count(self) -> int:
        """How many of the watches this process polls (in a fleet, the leases it holds)."""
        return sum(1 for watch in self._watches.values() if watch.owned)

    def add(self, watch: StationWatch, *, delay: float = 0.0) -> StationWatch:
        """Register a watch; it polls from ``delay`` on unless it is not ``owned``."""
        existing = self._watches.get(watch.job_id)
        if existing is not None:
            return existing
        self._watches[watch.job_id] = watch
        if watch.owned:
            self._arm(watch, delay)
            self._follow_pushes(watch)
        return watch

    def remove(self, job_id: str) -> StationWatch | None:
        watch = self._watches.pop(job_id, None)
        self._stop_pushes(job_id)
        with contextlib.suppress(JobLookupError):
            self.scheduler.remove_job(job_id)
        return watch

    def poll_now(self, job_id: str) -> None:
        watch = self._watches.get(job_id)
        if watch is not None and watch.owned:
            self._arm(watch, 0.0)

    def set_owned(self, job_id: str, owned: bool, *, delay: float = 0.0) -> bool:
        """Start (after ``delay``) or stop polling a registered watch; True when that changed."""
        watch = self._watches.get(job_id)
        if watch is None or watch.owned == owned:
            return False
        watch.owned = owned
        if owned:
            watch.status.state = "starting"
            self._arm(watch, delay)
            self._follow_pushes(watch)
        else:
            self._stop_pushes(job_id)
            watch.status.state = ELSEWHERE
            watch.status.next_poll = None
            with contextlib.suppress(JobLookupError):
                self.scheduler.remove_job(job_id)
        return True

    def _follow_pushes(self, watch: StationWatch) -> None:
        """Poll at once whenever the host tells of a change (only hosts that push)."""
        if not watch.client.offers(Feature.PUSH) or watch.job_id in self._pushes:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a synchronous caller): the polls go on alone
            return
        task = loop.create_task(self._pushes_of(watch), name=f"pushes:{watch.job_id}")
        self._pushes[watch.job_id] = task
        task.add_done_callback(lambda done: self._forget_pushes(watch.job_id, done))

    async def _pushes_of(self, watch: StationWatch) -> None:
        try:
            async for info in watch.client.changes():
                if self._watches.get(watch.job_id) is not watch or not watch.owned:
                    return
                if info is not None:
                    watch.pushed = info
                if watch.busy:
                    watch.poll_again = True
                else:
                    self._arm(watch, 0.0)
        except asyncio.CancelledError:
            raise
        except Exception:  # a host's bug stops its pushes, never its polls
            _LOGGER.exception("following the pushes of %s failed; polling only", watch.label())

    def _forget_pushes(self, job_id: str, done: asyncio.Task[None]) -> None:
        if self._pushes.get(job_id) is done:
            del self._pushes[job_id]

    async def close(self) -> None:
        """Stop every push follower and wait until each has ended (its stream closed), so
        none is left reconnecting on a session about to close."""
        tasks = list(self._pushes.values())
        self._pushes.clear()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _stop_pushes(self, job_id: str) -> None:
        task = self._pushes.pop(job_id, None)
        if task is not None:
            task.cancel()

    def _arm(self, watch: StationWatch, delay: float) -> None:
        when = datetime.now(UTC) + timedelta(seconds=delay)
        watch.status.next_poll = when
        self.scheduler.add_job(
            self._run,
            "date",
            run_date=when,
            args=[watch.job_id],
            id=watch.job_id,
            replace_existing=True,
            misfire_grace_time=None,
            coalesce=True,
            # Exclusivity is kept by the watch itself (see _run): APScheduler's own instance
            # count is released a loop turn late and would drop a poll asked for just then.
            max_instances=2,
        )

    async def _run(self, job_id: str) -> None:
        watch = self._watches.get(job_id)
        if watch is None or not watch.owned:
            return
        if watch.busy:
            watch.poll_again = True
            return
        try:
            delay = await watch.poll()
        except asyncio.CancelledError:
            return  # the scheduler is shutting down
        except Exception:  # never let one station's bug stop its watch
            _LOGGER.exception("polling %s crashed; retrying", watch.label())
            delay = watch.policy.after_failure()
        if watch.poll_again:
            watch.poll_again, delay = False, 0.0
        if self._watches.get(job_id) is watch and watch.owned:
            self._arm(watch, delay)
