"""Song requests: each guild's rules, the reservations the limits count, and the credit.

Limits are counted in the database, so a fleet counts once: a reservation is one transaction
that first upserts the guild's settings row (a row lock in PostgreSQL, the one writer in
SQLite: one guild's reservations are serialised everywhere), then inserts the request only
while the user's cooldown and the guild's hourly cap allow it. Each later statement of the
transaction sees what committed before it started, so two processes never both get the last
slot.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from .models import NewRequest, PendingRequest, RequestCredit, RequestSettings
from .primitives import StoragePrimitives, upsert, upsert_row

ASKING, ACCEPTED = "asking", "accepted"
_COUNTED = (ASKING, ACCEPTED)  # a request being asked counts, a refused one is deleted


class RequestStore(StoragePrimitives):
    """Request settings, reservations and credit, written once for both backends."""

    async def request_settings(self, guild_id: int) -> RequestSettings:
        row = await self.fetchone(
            "SELECT role_id, cooldown, hourly_cap, channel_id FROM guild_requests "
            "WHERE guild_id = ?",
            (guild_id,),
        )
        if row is None:
            return RequestSettings(guild_id)
        return RequestSettings(guild_id, int(row[0]), float(row[1]), int(row[2]), int(row[3]))

    async def save_request_settings(self, settings: RequestSettings) -> None:
        columns = "role_id, cooldown, hourly_cap, channel_id"
        await self.execute(*upsert_row("guild_requests", "guild_id", columns, settings))

    async def requests_enabled(self, guild_id: int, station: str) -> bool | None:
        """The guild's choice for the station; None when it made none (the default applies)."""
        row = await self.fetchone(
            "SELECT enabled FROM guild_request_stations WHERE guild_id = ? AND station = ?",
            (guild_id, station),
        )
        return None if row is None else bool(row[0])

    async def set_requests_enabled(self, guild_id: int, station: str, enabled: bool) -> None:
        await self.execute(
            upsert("guild_request_stations", "guild_id, station", "enabled"),
            (guild_id, station, int(enabled)),
        )

    async def reserve_request(
        self, request: NewRequest, *, now: float, cooldown: float, hourly_cap: int
    ) -> int | None:
        """Record ``request`` if the user's cooldown and the guild's cap allow it: its id, or
        None when they do not (nothing recorded)."""
        token = secrets.token_hex(16)
        conditions = [
            "NOT EXISTS (SELECT 1 FROM song_requests WHERE guild_id = ? AND user_id = ? "
            "AND state IN (?, ?) AND requested_at > ?)"
        ]
        params: list[object] = [request.guild_id, request.user_id, *_COUNTED, now - cooldown]
        if hourly_cap > 0:
            conditions.append(
                "(SELECT COUNT(*) FROM song_requests WHERE guild_id = ? AND state IN (?, ?) "
                "AND requested_at > ?) < ?"
            )
            params += [request.guild_id, *_COUNTED, now - 3600.0, hourly_cap]
        counts = await self.execute_atomic(
            [
                (upsert("guild_requests", "guild_id", "locked_at"), (request.guild_id, now)),
                (
                    "INSERT INTO song_requests (token, guild_id, station, user_id, display_name, "
                    "ping, track_id, title, title_key, state, requested_at) "
                    "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE " + " AND ".join(conditions),
                    (
                        token,
                        request.guild_id,
                        request.station,
                        request.user_id,
                        request.display_name,
                        int(request.ping),
                        request.track_id,
                        request.title,
                        request.title_key,
                        ASKING,
                        now,
                        *params,
                    ),
                ),
            ]
        )
        if counts[1] != 1:
            return None
        row = await self.fetchone("SELECT id FROM song_requests WHERE token = ?", (token,))
        return int(row[0]) if row else None

    async def request_block(
        self, guild_id: int, user_id: int, *, now: float, cooldown: float, hourly_cap: int
    ) -> tuple[str, float] | None:
        """What would refuse a reservation now (see :meth:`request_wait`), or None: a cheap
        look before the station is searched (the reservation itself still decides)."""
        until = await self._cooldown_until(guild_id, user_id, now=now, cooldown=cooldown)
        if until is not None:
            return "cooldown", until
        if hourly_cap <= 0:
            return None
        row = await self.fetchone(
            "SELECT COUNT(*) FROM song_requests WHERE guild_id = ? AND state IN (?, ?) "
            "AND requested_at > ?",
            (guild_id, *_COUNTED, now - 3600.0),
        )
        if row is None or int(row[0]) < hourly_cap:
            return None
        return "cap", await self._cap_until(guild_id, now=now, hourly_cap=hourly_cap)

    async def request_wait(
        self, guild_id: int, user_id: int, *, now: float, cooldown: float, hourly_cap: int
    ) -> tuple[str, float]:
        """Why a reservation was refused and when asking again can succeed: ("cooldown" or
        "cap", unix time)."""
        until = await self._cooldown_until(guild_id, user_id, now=now, cooldown=cooldown)
        if until is not None:
            return "cooldown", until
        return "cap", await self._cap_until(guild_id, now=now, hourly_cap=hourly_cap)

    async def _cooldown_until(
        self, guild_id: int, user_id: int, *, now: float, cooldown: float
    ) -> float | None:
        """When the user's cooldown ends, or None when it is not running."""
        row = await self.fetchone(
            "SELECT MAX(requested_at) FROM song_requests WHERE guild_id = ? AND user_id = ? "
            "AND state IN (?, ?) AND requested_at > ?",
            (guild_id, user_id, *_COUNTED, now - cooldown),
        )
        return None if row is None or row[0] is None else float(row[0]) + cooldown

    async def _cap_until(self, guild_id: int, *, now: float, hourly_cap: int) -> float:
        """When the oldest request the guild's hourly cap counts leaves the hour."""
        rows = await self.fetch(
            "SELECT requested_at FROM song_requests WHERE guild_id = ? AND state IN (?, ?) "
            "AND requested_at > ? ORDER BY requested_at DESC LIMIT ?",
            (guild_id, *_COUNTED, now - 3600.0, max(1, hourly_cap)),
        )
        oldest = float(rows[-1][0]) if rows else now
        return oldest + 3600.0

    async def request_accepted(self, request_id: int) -> None:
        await self.execute(
            "UPDATE song_requests SET state = ? WHERE id = ?", (ACCEPTED, request_id)
        )

    async def request_dropped(self, request_id: int) -> None:
        """The station refused it or could not be asked: it does not count."""
        await self.execute("DELETE FROM song_requests WHERE id = ?", (request_id,))

    async def credit_requests(
        self, station: str, title_keys: Sequence[str], play_key: str, *, since: float, now: float
    ) -> list[RequestCredit]:
        """The requesters of a play: the station's accepted, uncredited requests since
        ``since`` whose title matches are credited to ``play_key`` (each once, whoever asks:
        the update decides on each row alone), and every request credited to it is returned,
        oldest first, so a second fan-out of the same play names the same people."""
        keys = [k for k in dict.fromkeys(title_keys) if k]
        if keys:
            marks = ", ".join("?" for _ in keys)
            await self.execute(
                "UPDATE song_requests SET play_key = ?, credited_at = ? WHERE station = ? "
                "AND state = ? AND play_key IS NULL AND requested_at >= ? "
                f"AND title_key IN ({marks})",
                (play_key, now, station, ACCEPTED, since, *keys),
            )
        rows = await self.fetch(
            "SELECT guild_id, user_id, display_name, ping FROM song_requests "
            "WHERE station = ? AND play_key = ? ORDER BY requested_at, id",
            (station, play_key),
        )
        return [RequestCredit(int(r[0]), int(r[1]), str(r[2]), bool(r[3])) for r in rows]

    async def pending_requests(
        self, guild_id: int, user_id: int, station: str, *, since: float
    ) -> list[PendingRequest]:
        """The user's accepted requests of the station not yet aired, oldest first."""
        rows = await self.fetch(
            "SELECT title, title_key, requested_at FROM song_requests WHERE guild_id = ? "
            "AND user_id = ? AND station = ? AND state = ? AND play_key IS NULL "
            "AND requested_at >= ? ORDER BY requested_at, id LIMIT 25",
            (guild_id, user_id, station, ACCEPTED, since),
        )
        return [PendingRequest(str(r[0]), str(r[1]), float(r[2])) for r in rows]

    async def prune_requests(self, before: float) -> int:
        return await self.execute("DELETE FROM song_requests WHERE requested_at < ?", (before,))
