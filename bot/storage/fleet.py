"""Fleet coordination (PostgreSQL only): watch leases, shared state and published plays."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from typing import Protocol

from .primitives import StoragePrimitives


class FleetStore(StoragePrimitives):
    """What several processes on one database share; a single-process backend has none of it."""

    async def shared_secret(self, name: str) -> bytes:
        """A random 32-byte value made once per database and the same for every process that
        uses it (the first to ask makes it)."""
        await self.execute(
            "INSERT INTO shared_secrets (name, value) VALUES (?, ?) ON CONFLICT DO NOTHING",
            (name, secrets.token_hex(32)),
        )
        row = await self.fetchone("SELECT value FROM shared_secrets WHERE name = ?", (name,))
        assert row is not None
        return bytes.fromhex(str(row[0]))

    async def renew_watches(self, owner: str, lease: float) -> set[str]:
        """Extend every watch lease ``owner`` holds by ``lease`` seconds; return their job ids
        (a lease another process took over after this one stalled is no longer among them)."""
        raise NotImplementedError

    async def acquire_watches(self, job_ids: Sequence[str], owner: str, lease: float) -> set[str]:
        """Take the watch leases among ``job_ids`` that nobody holds (or whose holder let them
        run out); return those taken. One process wins each, however many ask at once."""
        raise NotImplementedError

    async def release_watches(self, owner: str, job_ids: Sequence[str] | None = None) -> int:
        """Give leases back (all of ``owner``'s by default) so another process polls at once."""
        raise NotImplementedError

    async def watch_owners(self) -> dict[str, str]:
        """{job id: owner} of the live watch leases (status and tests)."""
        raise NotImplementedError

    async def save_station_states(self, states: Sequence[tuple[str, str, float]]) -> None:
        """Store (job id, info JSON, fetch time) of the stations this process polls."""
        raise NotImplementedError

    async def station_state(self, job_id: str) -> tuple[str, float] | None:
        """The last stored (info JSON, fetch time) of a station."""
        raise NotImplementedError

    async def publish_play(self, announcement_id: int) -> None:
        """Tell every process listening that announcement ``announcement_id`` was recorded."""
        raise NotImplementedError

    def listen_plays(
        self, callback: Callable[[int], None], on_connect: Callable[[], None]
    ) -> PlayListener:
        """Call ``callback(announcement id)`` for every published play until closed, over a
        connection of its own that is re-opened when it drops (``on_connect`` after each
        (re)connection: plays published meanwhile are found by a sweep)."""
        raise NotImplementedError


class PlayListener(Protocol):
    connected: asyncio.Event

    async def close(self) -> None: ...
