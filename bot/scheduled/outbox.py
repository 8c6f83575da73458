"""The scheduled-post outbox: a post (an alert, a recap) is recorded under its event's key before
anything is sent, then one process at a time leases it, sends it and marks it sent.

Exactly once across a fleet and restarts: recording is ``INSERT ... ON CONFLICT DO NOTHING`` on
the key (a second process or run deciding the same event records nothing new), a lease is taken
by one caller only, and the send carries a nonce derived from the key, so Discord returns the
first message when a crash fell between the send and its "sent" mark; a resumed post also looks
for its own earlier message first (the nonce is only remembered for a few minutes). A lease not
given back (kill -9) runs out, or on SQLite (one process) is released at start-up, and a sweep
(at start-up and every ``lease / 3`` seconds) sends the post. A post past its ``expires_at`` is
dropped, never sent, whichever path (the sweep, or ``send_soon`` right after recording) takes it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple, Protocol

from ..storage import DROPPED, FAILED, SENT, ScheduledPost, Storage
from ..util.tasks import BackgroundTasks, stop_task

_LOGGER = logging.getLogger("onair.posts")
MAX_ATTEMPTS = 5  # sends of one post (each already retried inside the sender)


def post_nonce(key: str) -> str:
    """Discord's message nonce for one scheduled post: deterministic, 25 characters."""
    return "op" + hashlib.sha256(key.encode()).hexdigest()[:23]


class PostError(Exception):
    """A send failed; ``final`` when sending it again cannot help (no access, gone, refused)."""

    def __init__(self, reason: str, *, final: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.final = final


class LoopWords(NamedTuple):
    """What a background loop logs when a round fails."""

    failed: str  # anything but a storage fault, logged with its traceback
    unavailable: str  # a storage fault (as the storage's health decides), given the error


async def repeat(
    interval: float,
    work: Callable[[], Awaitable[object]],
    storage: Storage,
    logger: logging.Logger,
    words: LoopWords,
    *,
    at_once: bool = False,
) -> None:
    """Run ``work`` every ``interval`` seconds (the first after one, or at once) until
    cancelled; the next round runs whatever this one did."""
    first = at_once
    while True:
        if not first:
            await asyncio.sleep(interval)
        first = False
        try:
            await work()
        except Exception as error:
            if not storage.is_storage_error(error):
                logger.exception(words.failed)
            else:
                storage.health.warn(logger, words.unavailable, error)


SWEEP_WORDS = LoopWords("looking for pending posts failed", "could not look for pending posts (%s)")


class PostSender(Protocol):
    async def send(self, post: ScheduledPost, *, nonce: str, resumed: bool) -> int | None:
        """Post it; return the message id. ``resumed``: an earlier lease may have posted it
        unrecorded, so a sender that can look for that message first does."""


class PostOutbox:
    """Leases and sends recorded posts; sweeps up what a crash or a failed send left pending."""

    def __init__(
        self,
        storage: Storage,
        sender: PostSender,
        *,
        owner: str,
        lease: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.storage = storage
        self.sender = sender
        self.owner = owner
        self.lease = lease
        self.clock = clock
        self._tasks = BackgroundTasks(lambda error: _LOGGER.error("a post failed", exc_info=error))
        self._inflight: set[str] = set()
        self._sweeper: asyncio.Task[None] | None = None
        self._stopped = False
        self.sent = 0
        self.failed = 0
        self.dropped = 0

    async def start(self, *, sweep_every: float | None = None) -> None:
        if self.storage.single_process:
            released = await self.storage.release_all_post_leases()
            if released:
                _LOGGER.info("%d post(s) left in flight by the last run are pending", released)
        await self.sweep()
        interval = sweep_every or self.lease / 3
        sweeping = repeat(interval, self.sweep, self.storage, _LOGGER, SWEEP_WORDS)
        self._sweeper = asyncio.create_task(sweeping)

    async def stop(self, grace: float = 3.0) -> None:
        """Stop sweeping; let sends in flight finish (up to ``grace``), cancel the rest: a
        cancelled send gives its lease back and stays pending for the next run; a post recorded
        after this stays pending too."""
        self._stopped = True
        await stop_task(self._sweeper)
        self._sweeper = None
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=grace)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def idle(self) -> None:
        """Wait until every send in flight has finished (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    def send_soon(self, keys: Sequence[str]) -> None:
        """Send these recorded posts in the background (those another process holds it skips)."""
        if self._stopped:
            return  # shutting down: they stay pending for the next run (or another process)
        for key in keys:
            if key not in self._inflight:
                self._inflight.add(key)
                self._tasks.spawn(self._send(key))

    async def sweep(self) -> int:
        """Send the pending posts nobody holds; drop stale ones. Returns how many it took up."""
        now = self.clock()
        taken = []
        for post in await self.storage.due_posts(now):
            if post.key in self._inflight:
                continue
            if post.expires_at < now:
                await self._drop(post)
                continue
            taken.append(post.key)
        if taken:
            _LOGGER.info("resuming %d pending post(s)", len(taken))
        self.send_soon(taken)
        return len(taken)

    async def _send(self, key: str) -> None:
        try:
            now = self.clock()
            post = await self.storage.claim_post(
                key, owner=self.owner, lease_until=now + self.lease, now=now
            )
            if post is None:
                return  # sent already, or being sent by another process
            if post.expires_at < now:
                await self._drop(post)  # went stale before any path got to send it
                return
            await self._deliver(post)
        except Exception as error:
            self.storage.log_fault_or_raise(
                error,
                _LOGGER,
                "storage failed sending post %s (%s); the sweep retries it",
                key,
                error,
            )
        finally:
            self._inflight.discard(key)

    async def _drop(self, post: ScheduledPost) -> None:
        await self.storage.finish_post(post.key, DROPPED, now=self.clock())
        self.dropped += 1
        _LOGGER.warning(
            "dropped the %s post %s: not sent before it went stale", post.kind, post.key
        )

    async def _deliver(self, post: ScheduledPost) -> None:
        try:
            message_id = await self.sender.send(
                post, nonce=post_nonce(post.key), resumed=post.attempts > 1
            )
        except asyncio.CancelledError:
            await self._release(post.key)
            raise
        except PostError as error:
            self.failed += 1
            if error.final or post.attempts >= MAX_ATTEMPTS:
                _LOGGER.warning(
                    "the %s post to %s failed, not retried: %s",
                    post.kind,
                    post.channel_id,
                    error.reason,
                )
                await self.storage.finish_post(post.key, FAILED, now=self.clock())
            else:
                _LOGGER.warning(
                    "the %s post to %s failed (try %d of %d, retried later): %s",
                    post.kind,
                    post.channel_id,
                    post.attempts,
                    MAX_ATTEMPTS,
                    error.reason,
                )
                await self._release(post.key)
            return
        self.sent += 1
        await self.storage.finish_post(post.key, SENT, now=self.clock(), message_id=message_id)

    async def _release(self, key: str) -> None:
        """Best effort: a lease not given back simply runs out."""
        try:
            await self.storage.release_post(key, self.owner, now=self.clock())
        except Exception as error:
            self.storage.log_fault_or_raise(
                error, _LOGGER, "could not release post %s (%s); its lease runs out", key, error
            )
