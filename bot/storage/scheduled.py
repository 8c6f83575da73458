"""Scheduled posts (alerts and recaps): the post outbox, alert subscriptions and state, recaps."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .models import AlertState, AlertSubscription, Recap, ScheduledPost
from .outbox import PENDING
from .primitives import Row, Statement, StoragePrimitives, and_equal, upsert_row

_POST_COLUMNS = "post_key, guild_id, channel_id, kind, payload, attempts, created_at, expires_at"


def _scheduled_post(row: Row) -> ScheduledPost:
    return ScheduledPost(
        str(row[0]),
        int(row[1]),
        int(row[2]),
        str(row[3]),
        str(row[4]),
        int(row[5]),
        float(row[6]),
        float(row[7]),
    )


def _insert_post(post: ScheduledPost, now: float) -> Statement:
    return (
        "INSERT INTO scheduled_posts (post_key, guild_id, channel_id, kind, payload, state, "
        "created_at, expires_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (post_key) DO NOTHING",
        (
            post.key,
            post.guild_id,
            post.channel_id,
            post.kind,
            post.payload,
            PENDING,
            now,
            post.expires_at,
            now,
        ),
    )


class ScheduledStore(StoragePrimitives):
    """Posts OnAir makes on its own, recorded once by key and leased like deliveries."""

    async def record_post(self, post: ScheduledPost, *, now: float) -> bool:
        """Record a post to send once, pending; False when its key was recorded before (by an
        earlier run or another process), whatever became of it."""
        return await self.execute(*_insert_post(post, now)) > 0

    async def save_alert_state(
        self, station: str, state: AlertState, *, now: float, posts: Sequence[ScheduledPost] = ()
    ) -> bool:
        """Store a station's alert state and record the alerts it decided, in one transaction:
        a crash leaves both or neither, so the next evaluation neither repeats nor loses one.
        A compare-and-set on ``state.version`` (the version read): False, and nothing saved or
        recorded, when another process saved the state since."""
        payload = json.dumps(
            {
                "live_key": state.live_key,
                "live_title": state.live_title,
                "live_since": state.live_since,
                "live_ended": state.live_ended,
                "down_since": state.down_since,
                "down_reason": state.down_reason,
                "down_posted": state.down_posted,
            }
        )
        statements: list[Statement] = [
            (
                "INSERT INTO station_alert_state (station, payload, updated_at, version) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (station) DO UPDATE SET "
                "payload = excluded.payload, updated_at = excluded.updated_at, "
                "version = excluded.version WHERE station_alert_state.version = ?",
                (station, payload, now, state.version + 1, state.version),
            )
        ]
        statements += [_insert_post(post, now) for post in posts]
        return (await self.execute_atomic(statements, guarded=True))[0] > 0

    async def post_recorded(self, key: str) -> bool:
        return (
            await self.fetchone("SELECT 1 FROM scheduled_posts WHERE post_key = ?", (key,))
            is not None
        )

    async def claim_post(
        self, key: str, *, owner: str, lease_until: float, now: float
    ) -> ScheduledPost | None:
        """Lease a pending post nobody holds a live lease on; one caller wins however many ask."""
        rows = await self.write_fetch(
            "UPDATE scheduled_posts SET owner = ?, lease_until = ?, attempts = attempts + 1, "
            "updated_at = ? WHERE post_key = ? AND state = ? "
            "AND (lease_until IS NULL OR lease_until < ?) "
            f"RETURNING {_POST_COLUMNS}",
            (owner, lease_until, now, key, PENDING, now),
        )
        return _scheduled_post(rows[0]) if rows else None

    async def finish_post(
        self, key: str, state: str, *, now: float, message_id: int | None = None
    ) -> None:
        """Close a pending post: ``sent`` (with its message), ``failed`` or ``dropped``."""
        await self.execute(
            "UPDATE scheduled_posts SET state = ?, message_id = ?, owner = NULL, "
            "lease_until = NULL, updated_at = ? WHERE post_key = ? AND state = ?",
            (state, message_id, now, key, PENDING),
        )

    async def release_post(self, key: str, owner: str, *, now: float) -> None:
        """Give a lease back unsent: the post stays pending and is taken up again."""
        await self.execute(
            "UPDATE scheduled_posts SET owner = NULL, lease_until = NULL, updated_at = ? "
            "WHERE post_key = ? AND owner = ? AND state = ?",
            (now, key, owner, PENDING),
        )

    async def release_all_post_leases(self) -> int:
        """Start-up of a single-process database: every post lease found belongs to a dead run."""
        return await self.execute(
            "UPDATE scheduled_posts SET owner = NULL, lease_until = NULL "
            "WHERE state = ? AND owner IS NOT NULL",
            (PENDING,),
        )

    async def due_posts(self, now: float, limit: int = 200) -> list[ScheduledPost]:
        """Pending posts nobody holds a live lease on, oldest first."""
        rows = await self.fetch(
            f"SELECT {_POST_COLUMNS} FROM scheduled_posts WHERE state = ? "
            "AND (lease_until IS NULL OR lease_until < ?) ORDER BY created_at, post_key LIMIT ?",
            (PENDING, now, limit),
        )
        return [_scheduled_post(r) for r in rows]

    async def post_states(self, prefix: str = "") -> dict[str, str]:
        """{key: state} of the posts whose key starts with ``prefix`` (status and tests)."""
        escaped = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = await self.fetch(
            "SELECT post_key, state FROM scheduled_posts WHERE post_key LIKE ? ESCAPE '\\'",
            (escaped + "%",),
        )
        return {str(r[0]): str(r[1]) for r in rows}

    async def prune_posts(self, before: float) -> int:
        """Drop settled posts older than ``before`` (their keys can no longer come again)."""
        return await self.execute(
            "DELETE FROM scheduled_posts WHERE state <> ? AND updated_at < ? AND expires_at < ?",
            (PENDING, before, before),
        )

    async def save_alert_subscription(self, sub: AlertSubscription) -> None:
        columns = "channel_id, role_id"
        await self.execute(*upsert_row("alert_subscriptions", "guild_id, station", columns, sub))

    async def remove_alert_subscription(self, guild_id: int, station: str | None) -> int:
        params: list[Any] = [guild_id]
        query = and_equal(
            "DELETE FROM alert_subscriptions WHERE guild_id = ?", params, station=station
        )
        return await self.execute(query, params)

    async def alert_subscriptions(
        self, station: str | None = None, *, guild_id: int | None = None
    ) -> list[AlertSubscription]:
        query = "SELECT guild_id, station, channel_id, role_id FROM alert_subscriptions WHERE 1 = 1"
        params: list[Any] = []
        query = and_equal(query, params, station=station, guild_id=guild_id)
        rows = await self.fetch(query + " ORDER BY guild_id, station", params)
        return [AlertSubscription(int(r[0]), str(r[1]), int(r[2]), int(r[3])) for r in rows]

    async def alert_state(self, station: str) -> AlertState:
        row = await self.fetchone(
            "SELECT payload, version FROM station_alert_state WHERE station = ?", (station,)
        )
        if row is None:
            return AlertState()
        try:
            raw = json.loads(str(row[0]))
            return AlertState(
                live_key=str(raw.get("live_key") or ""),
                live_title=str(raw.get("live_title") or ""),
                live_since=_float_or_none(raw.get("live_since")),
                live_ended=bool(raw.get("live_ended")),
                down_since=_float_or_none(raw.get("down_since")),
                down_reason=str(raw.get("down_reason") or ""),
                down_posted=bool(raw.get("down_posted")),
                version=int(row[1]),
            )
        except (ValueError, AttributeError):
            return AlertState(version=int(row[1]))

    async def forget_alert_state(self, station: str) -> None:
        """No guild follows the station's alerts any more: an outage or show seen then must not
        come back as a "back" or "ended" post when alerts are turned on again later."""
        await self.execute("DELETE FROM station_alert_state WHERE station = ?", (station,))

    async def save_recap(self, recap: Recap) -> None:
        columns = "channel_id, station, weekday, hour, since"
        await self.execute(*upsert_row("recaps", "guild_id", columns, recap))

    async def remove_recap(self, guild_id: int) -> bool:
        return await self.execute("DELETE FROM recaps WHERE guild_id = ?", (guild_id,)) > 0

    async def recaps(self, guild_id: int | None = None) -> list[Recap]:
        query = "SELECT guild_id, channel_id, station, weekday, hour, since FROM recaps WHERE 1 = 1"
        params: list[Any] = []
        query = and_equal(query, params, guild_id=guild_id)
        rows = await self.fetch(query + " ORDER BY guild_id", params)
        return [
            Recap(int(r[0]), int(r[1]), str(r[2]), int(r[3]), int(r[4]), float(r[5])) for r in rows
        ]


def _float_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
