"""The delivery outbox: a play recorded once, one leased delivery per channel until sent."""

from __future__ import annotations

from collections.abc import Sequence

from ..station import Play
from .models import Delivery, play_to_json
from .primitives import Statement, StoragePrimitives

# Delivery states: pending (to send; leased while a process sends it), sent, failed (permanent
# error or out of attempts), dropped (older than its announcement's maximum age, or its channel
# is gone or paused).
PENDING, SENT, FAILED, DROPPED = "pending", "sent", "failed", "dropped"


class OutboxStore(StoragePrimitives):
    """Announcements and their deliveries (see docs/architecture.md, "exactly once")."""

    async def enqueue_announcement(
        self,
        station: str,
        play_key: str,
        payload: str,
        *,
        detected_at: float,
        expires_at: float,
        subscription_ids: Sequence[int],
    ) -> int:
        """Record a play once per station and a pending delivery per channel, atomically.

        Idempotent: a play already recorded (same station and key, e.g. seen again after a
        restart or by another process) keeps its id, and channels that already have a delivery
        row keep it, whatever its state. Returns the announcement id.
        """
        statements: list[Statement] = [
            (
                "INSERT INTO announcements (station, play_key, payload, detected_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (station, play_key) DO NOTHING",
                (station, play_key, payload, detected_at, expires_at),
            )
        ]
        statements += [
            (
                "INSERT INTO deliveries (announcement_id, subscription_id, state, updated_at) "
                "SELECT id, ?, ?, ? FROM announcements WHERE station = ? AND play_key = ? "
                "ON CONFLICT DO NOTHING",
                (sub_id, PENDING, detected_at, station, play_key),
            )
            for sub_id in subscription_ids
        ]
        await self.execute_atomic(statements)
        row = await self.fetchone(
            "SELECT id FROM announcements WHERE station = ? AND play_key = ?", (station, play_key)
        )
        assert row is not None
        return int(row[0])

    async def recent_announcements(self, station: str, count: int = 4) -> list[tuple[str, str]]:
        """(play key, payload) of the station's newest recorded plays."""
        rows = await self.fetch(
            "SELECT play_key, payload FROM announcements WHERE station = ? "
            "ORDER BY detected_at DESC, id DESC LIMIT ?",
            (station, count),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    async def announcement_payload(self, announcement_id: int) -> str | None:
        row = await self.fetchone(
            "SELECT payload FROM announcements WHERE id = ?", (announcement_id,)
        )
        return str(row[0]) if row else None

    async def announcement_of(self, announcement_id: int) -> tuple[str, str] | None:
        """(station, payload) of a recorded play."""
        row = await self.fetchone(
            "SELECT station, payload FROM announcements WHERE id = ?", (announcement_id,)
        )
        return (str(row[0]), str(row[1])) if row else None

    async def claim_deliveries(
        self,
        announcement_id: int,
        subscription_ids: Sequence[int],
        *,
        owner: str,
        lease_until: float,
        now: float,
    ) -> dict[int, int]:
        """Lease the pending, unleased (or expired) deliveries among ``subscription_ids``.

        Returns {subscription id: attempts so far} of those this call leased: a row is leased by
        one caller only, however many processes ask at once.
        """
        if not subscription_ids:
            return {}
        marks = ", ".join("?" for _ in subscription_ids)
        rows = await self.write_fetch(
            "UPDATE deliveries SET owner = ?, lease_until = ?, attempts = attempts + 1, "
            "updated_at = ? WHERE announcement_id = ? AND state = ? "
            f"AND subscription_id IN ({marks}) AND (lease_until IS NULL OR lease_until < ?) "
            "RETURNING subscription_id, attempts",
            (owner, lease_until, now, announcement_id, PENDING, *subscription_ids, now),
        )
        return {int(r[0]): int(r[1]) for r in rows}

    async def delivery_sent(
        self,
        announcement_id: int,
        sub_id: int,
        play: Play,
        message_id: int | None,
        *,
        now: float,
    ) -> None:
        """The send succeeded: the delivery is done and the channel remembers the play."""
        await self.execute_atomic(
            [
                (
                    "UPDATE deliveries SET state = ?, message_id = ?, owner = NULL, "
                    "lease_until = NULL, updated_at = ? "
                    "WHERE announcement_id = ? AND subscription_id = ?",
                    (SENT, message_id, now, announcement_id, sub_id),
                ),
                (
                    "UPDATE subscriptions SET last_play = ?, "
                    "card_message_id = COALESCE(?, card_message_id) WHERE id = ?",
                    (play_to_json(play), message_id, sub_id),
                ),
            ]
        )

    async def release_delivery(
        self, announcement_id: int, sub_id: int, owner: str, *, now: float
    ) -> None:
        """Give a lease back unsent: the delivery stays pending and is taken up again."""
        await self._unlease(announcement_id, sub_id, PENDING, now=now, owner=owner)

    async def finish_delivery(
        self, announcement_id: int, sub_id: int, state: str, *, now: float
    ) -> None:
        """End a delivery without a send (``failed`` or ``dropped``)."""
        await self._unlease(announcement_id, sub_id, state, now=now)

    async def _unlease(
        self, announcement_id: int, sub_id: int, state: str, *, now: float, owner: str | None = None
    ) -> None:
        """A pending delivery leaves its lease unsent, into ``state`` (``pending`` again to be
        taken up anew); with ``owner``, only if that process still holds the lease."""
        owners = () if owner is None else (owner,)
        await self.execute(
            "UPDATE deliveries SET state = ?, owner = NULL, lease_until = NULL, updated_at = ? "
            "WHERE announcement_id = ? AND subscription_id = ? AND "
            f"{'owner = ? AND ' if owners else ''}state = ?",
            (state, now, announcement_id, sub_id, *owners, PENDING),
        )

    async def renew_leases(self, owner: str, lease_until: float) -> int:
        """Keep this owner's deliveries leased while it is alive (sends still in flight)."""
        return await self.execute(
            "UPDATE deliveries SET lease_until = ? WHERE owner = ? AND state = ?",
            (lease_until, owner, PENDING),
        )

    async def release_all_leases(self) -> int:
        """Start-up of a single-process database: every lease found belongs to a dead run."""
        return await self.execute(
            "UPDATE deliveries SET owner = NULL, lease_until = NULL "
            "WHERE state = ? AND owner IS NOT NULL",
            (PENDING,),
        )

    async def due_deliveries(
        self, now: float, limit: int = 1000, *, announcement_id: int | None = None
    ) -> list[Delivery]:
        """Pending deliveries nobody holds a live lease on (of one announcement, or of all),
        oldest play first."""
        one = "" if announcement_id is None else "AND d.announcement_id = ? "
        rows = await self.fetch(
            "SELECT d.announcement_id, d.subscription_id, a.station, a.play_key, a.expires_at, "
            "d.attempts FROM deliveries d JOIN announcements a ON a.id = d.announcement_id "
            f"WHERE d.state = ? AND (d.lease_until IS NULL OR d.lease_until < ?) {one}"
            "ORDER BY a.detected_at, d.announcement_id, d.subscription_id LIMIT ?",
            (PENDING, now, *([] if announcement_id is None else [announcement_id]), limit),
        )
        return [Delivery(r[0], r[1], r[2], r[3], float(r[4]), int(r[5])) for r in rows]

    async def deliveries(self, announcement_id: int) -> dict[int, str]:
        """{subscription id: state} of one announcement (status and tests)."""
        rows = await self.fetch(
            "SELECT subscription_id, state FROM deliveries WHERE announcement_id = ?",
            (announcement_id,),
        )
        return {int(r[0]): str(r[1]) for r in rows}

    async def delivery_counts(self, guild_id: int, since: float) -> dict[str, int]:
        """{state: count} of this guild's deliveries touched since ``since`` (/onair status)."""
        rows = await self.fetch(
            "SELECT d.state, COUNT(*) FROM deliveries d "
            "JOIN subscriptions s ON s.id = d.subscription_id "
            "WHERE s.guild_id = ? AND d.updated_at >= ? GROUP BY d.state",
            (guild_id, since),
        )
        return {str(r[0]): int(r[1]) for r in rows}
