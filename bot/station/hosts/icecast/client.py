"""Icecast 2 as a station source: the status page for what a mount says, its ICY stream for
the moment the title changes.

Icecast keeps no history, no start time, no artwork, no next item, no playlist, no stats and
takes no requests: all absent (``features`` = PUSH only). Without a start time the same-play
rule still needs to tell "the same play, polled again" from "the same song again, after
another": OnAir gives a play the moment it SAW its title replace another one (a change seen on
the ICY stream or between two polls) as an estimated start (``Playback.position``, so
``StationInfo.current_play`` reads it as ``fetched_at - position``, never exact). The title on
air when this client first looked has no start at all: it began before OnAir looked, and a
restart must not announce it again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import random
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any, ClassVar

import aiohttp
from yarl import URL

from ...client import StationClient
from ...errors import StationError
from ...info import Playback, StationInfo
from ...play import normalise_title
from ...source import Feature
from . import icy
from .status import decode_status, parse_source

_LOGGER = logging.getLogger("onair.station.icecast")


@dataclasses.dataclass(frozen=True, slots=True)
class IcyPolicy:
    """How the ICY follower connects: a read that waits longer than ``read_timeout`` drops the
    connection; reconnects back off from ``first_delay`` to ``max_delay`` (jittered), and a
    mount that sends no metadata is asked again only after ``no_metadata_delay``."""

    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    first_delay: float = 1.0
    max_delay: float = 60.0
    no_metadata_delay: float = 600.0


class IcecastClient(StationClient):
    """One Icecast mount (``station_id`` is the mount, like ``/live``). Asks no key."""

    kind: ClassVar[str] = "icecast"
    features: ClassVar[frozenset[Feature]] = frozenset({Feature.PUSH})

    def __init__(self, *args: Any, icy_policy: IcyPolicy | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.icy_policy = icy_policy or IcyPolicy()
        # The title on air as OnAir last saw it (normalised) and when it saw it replace another
        # (None: it was on air when this client first looked).
        self._title: str | None = None
        self._since: datetime | None = None
        # The title the ICY stream gave last, and how many changes it told of: a poll sent
        # before the latest change reads the ICY title instead of its older one.
        self._icy_title: str | None = None
        self._icy_changes = 0
        self.icy_connections = 0  # ICY connections opened (the benchmark counts them)

    # Status page ---------------------------------------------------------------------------

    def _auth_query(self) -> dict[str, str]:
        return {}  # the status page is public: a key is never sent

    def _decode(self, body: bytes) -> Any:
        return decode_status(body)

    async def _info(self) -> StationInfo:
        changes_before = self._icy_changes

        def build(icestats: Any) -> StationInfo:
            at = self.fetched_now()
            parsed = parse_source(icestats, self.station_id, self.base_url, at)
            title = parsed.title
            if self._icy_changes != changes_before and self._icy_title:
                title = self._icy_title  # the stream told of a change after this poll left
            info = parsed.info
            listeners = info.listeners
            if self.push_live and listeners:
                listeners -= 1  # OnAir's own ICY connection is one of the mount's listeners
            return dataclasses.replace(
                info,
                now_playing=title,
                listeners=listeners,
                playback=self._playback(title, at),
            )

        return await self._request("status-json.xsl", build=build)

    def forget_observed(self) -> None:
        """The title on air when the watch takes over has no start (as at a restart)."""
        self._title, self._since = None, None

    def _playback(self, title: str | None, at: datetime) -> Playback | None:
        """Note ``title`` as on air at ``at``; the playback position since OnAir saw it start,
        or None when it does not know."""
        key = normalise_title(title)
        if not key:
            return None  # nothing on air: the last title stays remembered
        if self._title is None:
            self._title, self._since = key, None
        elif key != self._title:
            self._title, self._since = key, at
        if self._since is None:
            return None
        return Playback(position=max(timedelta(0), at - self._since))

    # ICY stream ----------------------------------------------------------------------------

    @property
    def stream_url(self) -> URL:
        return URL(f"{self.base_url}{self.station_id}")

    async def changes(self) -> AsyncIterator[StationInfo | None]:
        """Follow the mount's ICY metadata: None on connecting (poll now), then the new info
        at each title change. Reconnects with backoff until cancelled."""
        policy = self.icy_policy
        delay = policy.first_delay
        while True:
            wait = delay
            try:
                async for change in self._follow_icy():
                    delay = policy.first_delay
                    yield change
                cause = "the stream ended"
            except icy.NoMetadata as error:
                cause, wait = str(error), policy.no_metadata_delay
            except (aiohttp.ClientError, asyncio.IncompleteReadError, TimeoutError, OSError) as e:
                cause = type(e).__name__
            except StationError as error:
                cause, wait = error.message, policy.no_metadata_delay
            finally:
                self.push_live = False
            _LOGGER.debug("ICY of %s: %s; again in %.0fs", self.station_id, cause, wait)
            await asyncio.sleep(wait * random.uniform(0.8, 1.2))
            delay = min(policy.max_delay, delay * 2)

    async def _follow_icy(self) -> AsyncIterator[StationInfo | None]:
        if self._session is None:
            self._session = aiohttp.ClientSession()
            self._own_session = True
        url = self.stream_url
        if self.url_guard is not None and self._refusal(self.url_guard, url) is not None:
            raise icy.NoMetadata("the address is refused by the policy")
        policy = self.icy_policy
        timeout = aiohttp.ClientTimeout(
            total=None, connect=policy.connect_timeout, sock_read=policy.read_timeout
        )
        headers = {"Icy-MetaData": "1", "User-Agent": self._headers["User-Agent"]}
        async with self._session.get(
            url, headers=headers, timeout=timeout, allow_redirects=False
        ) as response:
            if response.status != 200:
                raise aiohttp.ClientResponseError(response.request_info, (), status=response.status)
            metaint = icy.metaint_of(response.headers)
            self.icy_connections += 1
            self.push_live = True
            yield None  # connected: the status page says what is on air now
            first = True
            async for block in icy.blocks(response.content, metaint):
                title = block.title
                if title is None:
                    continue
                if first:
                    # The first block comes with the burst of older audio: it may name the
                    # title before the one on air. It is remembered, never announced.
                    first = False
                    self._icy_title = title
                    continue
                if normalise_title(title) == normalise_title(self._icy_title):
                    continue  # the same metadata sent again
                self._icy_title = title
                if normalise_title(title) == self._title:
                    continue  # a poll saw it first: nothing new to tell
                self._icy_changes += 1
                yield self._icy_info(title)

    def _icy_info(self, title: str) -> StationInfo | None:
        """The last status with the new title (None before any status: poll now)."""
        base = self.last_info
        at = self.fetched_now()
        playback = self._playback(title, at)
        if base is None:
            return None
        info = dataclasses.replace(
            base, fetched_at=at, now_playing=title or None, playback=playback
        )
        self.pushed(info)
        return info
