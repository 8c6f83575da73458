"""The one storage interface: business operations written once in portable SQL.

Each backend supplies four primitives (execute, fetch, the migration scripts and the
placeholder style); everything else (subscriptions, claims, history, guild stations and
settings, purges) is shared, so SQLite and PostgreSQL behave the same and one test suite runs
against both.
"""

from __future__ import annotations

import asyncio
import json
import secrets
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Protocol

from ..station import Play
from ..templates.model import TemplateSet
from .models import (
    SUB_COLUMNS,
    AlertState,
    AlertSubscription,
    Delivery,
    GuildSettings,
    GuildStation,
    GuildVoice,
    HistoryEntry,
    Recap,
    ScheduledPost,
    Subscription,
    VoiceSession,
    WeekPlay,
    history_entry,
    play_to_json,
    subscription_from_row,
)

Row = Sequence[Any]

# Migrations, with {id} (auto-increment key), {real} and {blob} filled per dialect.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE subscriptions (
        id {id},
        guild_id BIGINT NOT NULL,
        channel_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        mode TEXT NOT NULL DEFAULT 'post',
        mention_role BIGINT NOT NULL DEFAULT 0,
        min_seconds {real} NOT NULL DEFAULT 0,
        skip_item_types TEXT NOT NULL DEFAULT '[]',
        skip_pattern TEXT NOT NULL DEFAULT '',
        announce_live INTEGER NOT NULL DEFAULT 1,
        paused_reason TEXT,
        card_message_id BIGINT,
        last_play TEXT,
        UNIQUE (channel_id, station)
    );
    CREATE TABLE plays (
        id {id},
        station TEXT NOT NULL,
        started {real} NOT NULL,
        title TEXT NOT NULL,
        artist TEXT,
        album TEXT,
        duration {real},
        listeners INTEGER,
        live INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX plays_station_started ON plays (station, started);
    """,
    """
    CREATE TABLE claims (
        subscription_id BIGINT NOT NULL,
        play_key TEXT NOT NULL,
        claimed_at {real} NOT NULL,
        PRIMARY KEY (subscription_id, play_key)
    );
    CREATE TABLE guild_stations (
        guild_id BIGINT NOT NULL,
        slug TEXT NOT NULL,
        name TEXT NOT NULL,
        base_url TEXT NOT NULL,
        station_id BIGINT NOT NULL,
        key_cipher {blob},
        timezone TEXT NOT NULL DEFAULT 'UTC',
        PRIMARY KEY (guild_id, slug)
    );
    CREATE TABLE guild_settings (
        guild_id BIGINT PRIMARY KEY,
        timezone TEXT NOT NULL DEFAULT 'UTC',
        default_station TEXT NOT NULL DEFAULT ''
    );
    """,
    # Every play's fan-out looks subscriptions up by station, status and purges by guild.
    """
    CREATE INDEX subscriptions_station ON subscriptions (station);
    CREATE INDEX subscriptions_guild ON subscriptions (guild_id);
    """,
    # The delivery outbox (replaces claims): a detected play is recorded once (announcements)
    # with one row per channel it goes to (deliveries), in one transaction, before any send. A
    # delivery is a lease (owner + lease_until): one that is not renewed expires and is taken up
    # again, by the next run or by another process, until the announcement's expires_at.
    """
    DROP TABLE claims;
    CREATE TABLE announcements (
        id {id},
        station TEXT NOT NULL,
        play_key TEXT NOT NULL,
        payload TEXT NOT NULL,
        detected_at {real} NOT NULL,
        expires_at {real} NOT NULL,
        UNIQUE (station, play_key)
    );
    CREATE TABLE deliveries (
        announcement_id BIGINT NOT NULL,
        subscription_id BIGINT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        owner TEXT,
        lease_until {real},
        attempts INTEGER NOT NULL DEFAULT 0,
        message_id BIGINT,
        updated_at {real} NOT NULL,
        PRIMARY KEY (announcement_id, subscription_id)
    );
    CREATE INDEX deliveries_state ON deliveries (state, lease_until);
    CREATE INDEX deliveries_subscription ON deliveries (subscription_id);
    CREATE INDEX announcements_detected ON announcements (detected_at);
    """,
    # Announcement style per channel: 'compact', 'full' or '' (by mode: post compact, card full).
    """
    ALTER TABLE subscriptions ADD COLUMN style TEXT NOT NULL DEFAULT '';
    """,
    # PostgreSQL fleets: which process polls each station (a lease on the watch's job id), and
    # the poller's last station info, which the other processes answer commands from.
    """
    CREATE TABLE watch_leases (
        job_id TEXT PRIMARY KEY,
        owner TEXT NOT NULL,
        lease_until {real} NOT NULL
    );
    CREATE TABLE station_state (
        job_id TEXT PRIMARY KEY,
        payload TEXT NOT NULL,
        fetched_at {real} NOT NULL
    );
    """,
    # Random values the processes of one deployment share (the watch job-id HMAC key: every
    # process must name a station's watch alike, and a log reader must not be able to guess it).
    """
    CREATE TABLE shared_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # Voice: the channel each guild's player is in (rejoined after a restart), each guild's voice
    # settings (24/7 home channel, empty-channel timeout, station) and whether a guild-added
    # station may be played in voice (the guild's admin opts in) and from which stream.
    """
    CREATE TABLE voice_sessions (
        guild_id BIGINT PRIMARY KEY,
        channel_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE TABLE guild_voice (
        guild_id BIGINT PRIMARY KEY,
        home_channel BIGINT NOT NULL DEFAULT 0,
        leave_when_empty {real} NOT NULL DEFAULT 300,
        station TEXT NOT NULL DEFAULT ''
    );
    ALTER TABLE guild_stations ADD COLUMN voice INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE guild_stations ADD COLUMN stream_url TEXT NOT NULL DEFAULT '';
    """,
    # Scheduled posts (live and offline alerts, weekly recaps): each recorded under a key that
    # names its event (the same in every process and run) before it is sent, then claimed with a
    # lease like a delivery; alert settings and each station's alert state (which outage or live
    # show was seen, whether it was posted), and each guild's recap settings.
    """
    CREATE TABLE scheduled_posts (
        post_key TEXT PRIMARY KEY,
        guild_id BIGINT NOT NULL,
        channel_id BIGINT NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending',
        owner TEXT,
        lease_until {real},
        attempts INTEGER NOT NULL DEFAULT 0,
        message_id BIGINT,
        created_at {real} NOT NULL,
        expires_at {real} NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE INDEX scheduled_posts_state ON scheduled_posts (state, lease_until);
    CREATE INDEX scheduled_posts_guild ON scheduled_posts (guild_id);
    CREATE TABLE alert_subscriptions (
        guild_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        channel_id BIGINT NOT NULL,
        role_id BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (guild_id, station)
    );
    CREATE TABLE station_alert_state (
        station TEXT PRIMARY KEY,
        payload TEXT NOT NULL,
        updated_at {real} NOT NULL
    );
    CREATE TABLE recaps (
        guild_id BIGINT PRIMARY KEY,
        channel_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        weekday INTEGER NOT NULL,
        hour INTEGER NOT NULL,
        since {real} NOT NULL
    );
    """,
    # Shows: whether a guild lets OnAir set its voice channel's status (on unless turned off),
    # the status (or stage topic) OnAir last wrote in each channel (it replaces and clears only
    # its own, also after a restart), the stations whose live shows become a guild's Discord
    # Scheduled Events, and each event OnAir made (one per airing: the row is claimed first).
    """
    ALTER TABLE guild_voice ADD COLUMN channel_status INTEGER NOT NULL DEFAULT 1;
    CREATE TABLE voice_status (
        channel_id BIGINT PRIMARY KEY,
        guild_id BIGINT NOT NULL,
        text TEXT NOT NULL
    );
    CREATE TABLE guild_show_events (
        guild_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        PRIMARY KEY (guild_id, station)
    );
    CREATE TABLE show_events (
        guild_id BIGINT NOT NULL,
        station TEXT NOT NULL,
        show_key TEXT NOT NULL,
        event_id BIGINT NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT 'claimed',
        created_at {real} NOT NULL,
        PRIMARY KEY (guild_id, station, show_key)
    );
    """,
    # Community: a subscription's announcement templates (JSON; NULL = none) and listeners'
    # likes, one row per (play of the history, Discord user): the primary key makes a like
    # count once however many processes receive the click.
    """
    ALTER TABLE subscriptions ADD COLUMN templates TEXT;
    CREATE TABLE likes (
        play_id BIGINT NOT NULL,
        user_id BIGINT NOT NULL,
        liked_at {real} NOT NULL,
        PRIMARY KEY (play_id, user_id)
    );
    CREATE INDEX likes_liked_at ON likes (liked_at);
    """,
    # Alerts: the version of a station's alert state, so a save is a compare-and-set.
    """
    ALTER TABLE station_alert_state ADD COLUMN version BIGINT NOT NULL DEFAULT 0;
    """,
)

# Show event states: claimed (a process is creating it), active (live now), completed, failed
# (Discord refused it: the claim stays so no second event is made for that airing).
EVENT_CLAIMED, EVENT_ACTIVE, EVENT_COMPLETED, EVENT_FAILED = (
    "claimed",
    "active",
    "completed",
    "failed",
)

# Delivery states: pending (to send; leased while a process sends it), sent, failed (permanent
# error or out of attempts), dropped (older than its announcement's maximum age, or its channel
# is gone or paused).
PENDING, SENT, FAILED, DROPPED = "pending", "sent", "failed", "dropped"
Statement = tuple[str, Sequence[Any]]


class Storage(ABC):
    """Subscriptions, the delivery outbox, play history, guild stations and settings."""

    dialect: ClassVar[dict[str, str]] = {}
    # True when only one process can use the database (SQLite): leases left by an earlier run
    # are then certainly dead and are released at start-up instead of waiting for them to expire.
    single_process: ClassVar[bool] = False
    # True when several processes share the database and coordinate through it (PostgreSQL):
    # each station is polled by the one process holding its watch lease, and new plays are
    # published to the others (the fleet methods at the end of this class).
    fleet: ClassVar[bool] = False

    # Primitives --------------------------------------------------------------------------

    @abstractmethod
    async def open(self) -> Storage: ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; return the number of rows it changed."""

    @abstractmethod
    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    @abstractmethod
    async def execute_atomic(
        self, statements: Sequence[Statement], *, guarded: bool = False
    ) -> list[int]:
        """Run statements in one transaction (all or none); return each one's changed rows.
        ``guarded``: when the first changes no row, the others are not run (counts 0)."""

    @abstractmethod
    async def write_fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one writing statement with ``RETURNING``, commit, and return its rows."""

    @abstractmethod
    def is_storage_error(self, error: BaseException) -> bool:
        """Whether ``error`` is the database failing (locked, read-only, full, gone): worth
        retrying, unlike a bug in the caller."""

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None

    def migration_scripts(self) -> list[str]:
        return [script.format(**self.dialect) for script in MIGRATIONS]

    # Subscriptions ----------------------------------------------------------------------

    async def upsert_subscription(self, sub: Subscription) -> Subscription:
        """Insert or update by (channel, station); keeps the stored last play and card."""
        await self.execute(
            """
            INSERT INTO subscriptions (guild_id, channel_id, station, mode, mention_role,
                min_seconds, skip_item_types, skip_pattern, announce_live, style, templates)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (channel_id, station) DO UPDATE SET
                guild_id = excluded.guild_id, mode = excluded.mode, style = excluded.style,
                mention_role = excluded.mention_role, min_seconds = excluded.min_seconds,
                skip_item_types = excluded.skip_item_types, skip_pattern = excluded.skip_pattern,
                announce_live = excluded.announce_live, paused_reason = NULL,
                templates = COALESCE(excluded.templates, subscriptions.templates)
            """,
            (
                sub.guild_id,
                sub.channel_id,
                sub.station,
                sub.mode,
                sub.mention_role,
                sub.min_seconds,
                json.dumps(list(sub.skip_item_types)),
                sub.skip_pattern,
                int(sub.announce_live),
                sub.style,
                None if sub.templates is None else sub.templates.to_json(),
            ),
        )
        row = await self.fetchone(
            f"SELECT {SUB_COLUMNS} FROM subscriptions WHERE channel_id = ? AND station = ?",
            (sub.channel_id, sub.station),
        )
        assert row is not None
        return subscription_from_row(row)

    async def subscriptions(
        self, station: str | None = None, *, guild_id: int | None = None
    ) -> list[Subscription]:
        query = f"SELECT {SUB_COLUMNS} FROM subscriptions WHERE 1 = 1"
        params: list[Any] = []
        if station is not None:
            query += " AND station = ?"
            params.append(station)
        if guild_id is not None:
            query += " AND guild_id = ?"
            params.append(guild_id)
        rows = await self.fetch(query + " ORDER BY id", params)
        return [subscription_from_row(row) for row in rows]

    async def remove_subscription(self, guild_id: int, channel_id: int, station: str | None) -> int:
        query = "DELETE FROM subscriptions WHERE guild_id = ? AND channel_id = ?"
        params: list[Any] = [guild_id, channel_id]
        if station is not None:
            query += " AND station = ?"
            params.append(station)
        return await self.execute(query, params)

    async def remove_subscriptions_not_in(self, keep: Sequence[tuple[int, str]]) -> None:
        """Drop subscriptions missing from ``keep``."""
        wanted = set(keep)
        for sub in await self.subscriptions():
            if (sub.channel_id, sub.station) not in wanted:
                await self.execute("DELETE FROM subscriptions WHERE id = ?", (sub.id,))

    async def mark_announced(
        self, sub_id: int, play: Play, card_message_id: int | None = None
    ) -> None:
        await self.execute(
            "UPDATE subscriptions SET last_play = ?, "
            "card_message_id = COALESCE(?, card_message_id) WHERE id = ?",
            (play_to_json(play), card_message_id, sub_id),
        )

    async def set_templates(self, sub_id: int, templates: TemplateSet) -> None:
        """A subscription's announcement templates (an empty set: the built-in layout)."""
        await self.execute(
            "UPDATE subscriptions SET templates = ? WHERE id = ?",
            (None if templates.is_empty() else templates.to_json(), sub_id),
        )

    async def pause(self, sub_id: int, reason: str | None) -> None:
        await self.execute(
            "UPDATE subscriptions SET paused_reason = ? WHERE id = ?", (reason, sub_id)
        )

    # Delivery outbox ---------------------------------------------------------------------

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
        await self.execute(
            "UPDATE deliveries SET owner = NULL, lease_until = NULL, updated_at = ? "
            "WHERE announcement_id = ? AND subscription_id = ? AND owner = ? AND state = ?",
            (now, announcement_id, sub_id, owner, PENDING),
        )

    async def finish_delivery(
        self, announcement_id: int, sub_id: int, state: str, *, now: float
    ) -> None:
        """End a delivery without a send (``failed`` or ``dropped``)."""
        await self.execute(
            "UPDATE deliveries SET state = ?, owner = NULL, lease_until = NULL, updated_at = ? "
            "WHERE announcement_id = ? AND subscription_id = ? AND state = ?",
            (state, now, announcement_id, sub_id, PENDING),
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

    # History ----------------------------------------------------------------------------

    async def record_play(
        self, station: str, play: Play, listeners: int | None, detected: datetime
    ) -> bool:
        """Add a play to the history unless one of the station's newest plays is the same play
        (the same-play rule): every poll of a station may offer it, whoever polled. True when
        it was added."""
        started = play.started or detected
        newest = await self.fetch(
            "SELECT started, title, artist FROM plays WHERE station = ? "
            "ORDER BY started DESC LIMIT 3",
            (station,),
        )
        seen = Play(play.title, play.artist, started=play.started)
        for row in newest:
            if seen.same_as(Play(row[1], row[2], started=datetime.fromtimestamp(row[0], UTC))):
                return False
        await self.execute(
            "INSERT INTO plays (station, started, title, artist, album, duration, listeners, live) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                station,
                started.timestamp(),
                play.title,
                play.artist,
                play.album,
                play.duration.total_seconds() if play.duration else None,
                listeners,
                int(play.live),
            ),
        )
        return True

    async def history_since(self, station: str) -> datetime | None:
        """The oldest play kept for the station: what /history can answer from."""
        row = await self.fetchone("SELECT MIN(started) FROM plays WHERE station = ?", (station,))
        return datetime.fromtimestamp(row[0], UTC) if row and row[0] is not None else None

    async def play_at(self, station: str, moment: datetime, count: int = 5) -> list[HistoryEntry]:
        """The play on air at ``moment`` and the ones before it (newest first)."""
        rows = await self.fetch(
            "SELECT started, title, artist, album FROM plays WHERE station = ? AND started <= ? "
            "ORDER BY started DESC LIMIT ?",
            (station, moment.timestamp(), count),
        )
        return [history_entry(row) for row in rows]

    async def search_plays(self, station: str, text: str, count: int = 10) -> list[HistoryEntry]:
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{escaped.lower()}%"
        like = "LOWER({}) LIKE ? ESCAPE '\\'"
        rows = await self.fetch(
            "SELECT started, title, artist, album FROM plays WHERE station = ? AND ("
            + " OR ".join(like.format(column) for column in ("title", "artist", "album"))
            + ") ORDER BY started DESC LIMIT ?",
            (station, pattern, pattern, pattern, count),
        )
        return [history_entry(row) for row in rows]

    async def prune(
        self, keep_days: int, now: datetime | None = None, *, outbox_hours: float = 24.0
    ) -> int:
        """Drop history older than ``keep_days`` and outbox rows older than ``outbox_hours``
        (long settled: a play is delivered or dropped within its maximum age)."""
        moment = now or datetime.now(UTC)
        cutoff = (moment - timedelta(days=keep_days)).timestamp()
        removed = await self.execute("DELETE FROM plays WHERE started < ?", (cutoff,))
        await self.execute("DELETE FROM likes WHERE play_id NOT IN (SELECT id FROM plays)")
        outbox_cutoff = (moment - timedelta(hours=outbox_hours)).timestamp()
        await self.execute_atomic(
            [
                (
                    "DELETE FROM deliveries WHERE announcement_id IN "
                    "(SELECT id FROM announcements WHERE detected_at < ?)",
                    (outbox_cutoff,),
                ),
                ("DELETE FROM announcements WHERE detected_at < ?", (outbox_cutoff,)),
            ]
        )
        # Finished live-show events: their rows only guard against a second event per airing.
        await self.execute(
            "DELETE FROM show_events WHERE state IN (?, ?) AND created_at < ?",
            (EVENT_COMPLETED, EVENT_FAILED, cutoff),
        )
        return removed

    # Likes -------------------------------------------------------------------------------

    async def play_id(self, station: str, play: Play) -> int | None:
        """The history row of ``play`` (the same-play rule among the station's newest plays),
        which likes attach to; None when it was not recorded."""
        rows = await self.fetch(
            "SELECT id, started, title, artist FROM plays WHERE station = ? "
            "ORDER BY started DESC LIMIT 10",
            (station,),
        )
        seen = Play(play.title, play.artist, started=play.started)
        for row in rows:
            recorded = Play(row[2], row[3], started=datetime.fromtimestamp(row[1], UTC))
            if seen.same_as(recorded):
                return int(row[0])
        return None

    async def toggle_like(self, play_id: int, user_id: int, *, now: float) -> tuple[bool, int]:
        """Like the play, or take the like back when the user has one: (liked now, count).

        One transaction of three statements that each decide on the row alone (no
        read-modify-write): mark the user's like if there is one, insert one if there is none
        (the primary key (play, user) refuses a second), delete the marked one. Two processes
        handling the same user's clicks at once therefore never count the user twice."""
        key = (play_id, user_id)
        marked, _, _ = await self.execute_atomic(
            [
                ("UPDATE likes SET liked_at = -1 WHERE play_id = ? AND user_id = ?", key),
                (
                    "INSERT INTO likes (play_id, user_id, liked_at) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    (*key, now),
                ),
                ("DELETE FROM likes WHERE play_id = ? AND user_id = ? AND liked_at = -1", key),
            ]
        )
        return not marked, await self.like_count(play_id)

    async def like_count(self, play_id: int) -> int:
        row = await self.fetchone("SELECT COUNT(*) FROM likes WHERE play_id = ?", (play_id,))
        return int(row[0]) if row else 0

    async def top_liked(
        self, station: str, since: float, count: int = 10
    ) -> list[tuple[str, str | None, int]]:
        """(title, artist, likes) of the station's tracks most liked since ``since``."""
        return await self._liked(station, since, float("inf"), count)

    async def _liked(
        self, station: str, start: float, end: float, count: int
    ) -> list[tuple[str, str | None, int]]:
        """(title, artist, likes given in [start, end)), most liked first; ties: the most
        recently liked, then by name (the same order in every process)."""
        rows = await self.fetch(
            "SELECT p.title, p.artist, COUNT(*) AS n FROM likes l "
            "JOIN plays p ON p.id = l.play_id WHERE p.station = ? AND l.liked_at >= ? "
            "AND l.liked_at < ? GROUP BY p.title, p.artist "
            "ORDER BY n DESC, MAX(l.liked_at) DESC, p.title, p.artist LIMIT ?",
            (station, start, min(end, 1e12), count),
        )
        return [(str(r[0]), r[1], int(r[2])) for r in rows]

    async def top_played(
        self, station: str, since: float, count: int = 10, *, min_seconds: float = 60.0
    ) -> list[tuple[str, str | None, int]]:
        """(title, artist, plays) of the station's tracks played most since ``since``: live
        shows and items shorter than ``min_seconds`` (jingles) are not tracks."""
        rows = await self.fetch(
            "SELECT title, artist, COUNT(*) AS n FROM plays WHERE station = ? AND started >= ? "
            "AND live = 0 AND (duration IS NULL OR duration >= ?) "
            "GROUP BY title, artist ORDER BY n DESC, MAX(started) DESC LIMIT ?",
            (station, since, min_seconds, count),
        )
        return [(str(r[0]), r[1], int(r[2])) for r in rows]

    # Guild stations and settings ---------------------------------------------------------

    async def save_guild_station(self, station: GuildStation) -> None:
        await self.execute(
            "INSERT INTO guild_stations (guild_id, slug, name, base_url, station_id, key_cipher, "
            "timezone) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (guild_id, slug) DO UPDATE SET "
            "name = excluded.name, base_url = excluded.base_url, "
            "station_id = excluded.station_id, key_cipher = excluded.key_cipher, "
            "timezone = excluded.timezone",
            (
                station.guild_id,
                station.slug,
                station.name,
                station.base_url,
                station.station_id,
                station.key_cipher,
                station.timezone,
            ),
        )

    async def guild_stations(self, guild_id: int | None = None) -> list[GuildStation]:
        query = (
            "SELECT guild_id, slug, name, base_url, station_id, key_cipher, timezone, voice, "
            "stream_url FROM guild_stations"
        )
        params: list[Any] = []
        if guild_id is not None:
            query += " WHERE guild_id = ?"
            params.append(guild_id)
        rows = await self.fetch(query + " ORDER BY guild_id, slug", params)
        return [
            GuildStation(
                r[0],
                r[1],
                r[2],
                r[3],
                r[4],
                bytes(r[5]) if r[5] is not None else None,
                r[6],
                voice=bool(r[7]),
                stream_url=r[8] or "",
            )
            for r in rows
        ]

    async def remove_guild_station(self, guild_id: int, slug: str, global_slug: str) -> bool:
        await self.execute(
            "DELETE FROM subscriptions WHERE guild_id = ? AND station = ?", (guild_id, global_slug)
        )
        await self.execute(
            "DELETE FROM alert_subscriptions WHERE guild_id = ? AND station = ?",
            (guild_id, global_slug),
        )
        await self.execute(
            "DELETE FROM recaps WHERE guild_id = ? AND station = ?", (guild_id, global_slug)
        )
        return (
            await self.execute(
                "DELETE FROM guild_stations WHERE guild_id = ? AND slug = ?", (guild_id, slug)
            )
            > 0
        )

    async def save_guild_settings(self, settings: GuildSettings) -> None:
        await self.execute(
            "INSERT INTO guild_settings (guild_id, timezone, default_station) VALUES (?, ?, ?) "
            "ON CONFLICT (guild_id) DO UPDATE SET timezone = excluded.timezone, "
            "default_station = excluded.default_station",
            (settings.guild_id, settings.timezone, settings.default_station),
        )

    async def guild_settings(self, guild_id: int) -> GuildSettings:
        row = await self.fetchone(
            "SELECT guild_id, timezone, default_station FROM guild_settings WHERE guild_id = ?",
            (guild_id,),
        )
        return GuildSettings(row[0], row[1], row[2]) if row else GuildSettings(guild_id)

    async def all_guild_settings(self) -> list[GuildSettings]:
        rows = await self.fetch("SELECT guild_id, timezone, default_station FROM guild_settings")
        return [GuildSettings(r[0], r[1], r[2]) for r in rows]

    async def purge_guild(self, guild_id: int) -> None:
        """The bot left the guild: nothing of it stays behind."""
        await self.execute(
            "DELETE FROM deliveries WHERE subscription_id IN "
            "(SELECT id FROM subscriptions WHERE guild_id = ?)",
            (guild_id,),
        )
        await self.execute("DELETE FROM subscriptions WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM guild_stations WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM guild_settings WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM voice_sessions WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM guild_voice WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM alert_subscriptions WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM recaps WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM scheduled_posts WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM voice_status WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM guild_show_events WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM show_events WHERE guild_id = ?", (guild_id,))

    # Voice -------------------------------------------------------------------------------

    async def set_guild_station_voice(
        self, guild_id: int, slug: str, *, voice: bool, stream_url: str = ""
    ) -> bool:
        """Turn voice on or off for a station the guild added (re-adding it keeps the choice).
        False when the guild has no such station."""
        changed = await self.execute(
            "UPDATE guild_stations SET voice = ?, stream_url = ? WHERE guild_id = ? AND slug = ?",
            (int(voice), stream_url, guild_id, slug),
        )
        return changed > 0

    async def save_voice_session(self, session: VoiceSession, *, now: float) -> None:
        """Where the guild's player is (one per guild): rejoined after a restart."""
        await self.execute(
            "INSERT INTO voice_sessions (guild_id, channel_id, station, updated_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (guild_id) DO UPDATE SET "
            "channel_id = excluded.channel_id, station = excluded.station, "
            "updated_at = excluded.updated_at",
            (session.guild_id, session.channel_id, session.station, now),
        )

    async def remove_voice_session(self, guild_id: int) -> bool:
        return await self.execute("DELETE FROM voice_sessions WHERE guild_id = ?", (guild_id,)) > 0

    async def voice_sessions(self) -> list[VoiceSession]:
        rows = await self.fetch(
            "SELECT guild_id, channel_id, station FROM voice_sessions ORDER BY guild_id"
        )
        return [VoiceSession(int(r[0]), int(r[1]), str(r[2])) for r in rows]

    async def save_guild_voice(self, voice: GuildVoice) -> None:
        await self.execute(
            "INSERT INTO guild_voice (guild_id, home_channel, leave_when_empty, station, "
            "channel_status) VALUES (?, ?, ?, ?, ?) ON CONFLICT (guild_id) DO UPDATE SET "
            "home_channel = excluded.home_channel, "
            "leave_when_empty = excluded.leave_when_empty, station = excluded.station, "
            "channel_status = excluded.channel_status",
            (
                voice.guild_id,
                voice.home_channel,
                voice.leave_when_empty,
                voice.station,
                int(voice.channel_status),
            ),
        )

    async def guild_voice(self, guild_id: int) -> GuildVoice:
        row = await self.fetchone(_GUILD_VOICE + " WHERE guild_id = ?", (guild_id,))
        return GuildVoice(guild_id) if row is None else _guild_voice(row)

    async def all_guild_voice(self) -> list[GuildVoice]:
        return [_guild_voice(r) for r in await self.fetch(_GUILD_VOICE + " ORDER BY guild_id")]

    # Scheduled posts: alerts and recaps ---------------------------------------------------

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
        await self.execute(
            "INSERT INTO alert_subscriptions (guild_id, station, channel_id, role_id) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (guild_id, station) DO UPDATE SET "
            "channel_id = excluded.channel_id, role_id = excluded.role_id",
            (sub.guild_id, sub.station, sub.channel_id, sub.role_id),
        )

    async def remove_alert_subscription(self, guild_id: int, station: str | None) -> int:
        query = "DELETE FROM alert_subscriptions WHERE guild_id = ?"
        params: list[Any] = [guild_id]
        if station is not None:
            query += " AND station = ?"
            params.append(station)
        return await self.execute(query, params)

    async def alert_subscriptions(
        self, station: str | None = None, *, guild_id: int | None = None
    ) -> list[AlertSubscription]:
        query = "SELECT guild_id, station, channel_id, role_id FROM alert_subscriptions WHERE 1 = 1"
        params: list[Any] = []
        if station is not None:
            query += " AND station = ?"
            params.append(station)
        if guild_id is not None:
            query += " AND guild_id = ?"
            params.append(guild_id)
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
        await self.execute(
            "INSERT INTO recaps (guild_id, channel_id, station, weekday, hour, since) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (guild_id) DO UPDATE SET "
            "channel_id = excluded.channel_id, station = excluded.station, "
            "weekday = excluded.weekday, hour = excluded.hour, since = excluded.since",
            (
                recap.guild_id,
                recap.channel_id,
                recap.station,
                recap.weekday,
                recap.hour,
                recap.since,
            ),
        )

    async def remove_recap(self, guild_id: int) -> bool:
        return await self.execute("DELETE FROM recaps WHERE guild_id = ?", (guild_id,)) > 0

    async def recaps(self, guild_id: int | None = None) -> list[Recap]:
        query = "SELECT guild_id, channel_id, station, weekday, hour, since FROM recaps"
        params: list[Any] = []
        if guild_id is not None:
            query += " WHERE guild_id = ?"
            params.append(guild_id)
        rows = await self.fetch(query + " ORDER BY guild_id", params)
        return [
            Recap(int(r[0]), int(r[1]), str(r[2]), int(r[3]), int(r[4]), float(r[5])) for r in rows
        ]

    async def plays_between(
        self, station: str, start: datetime, end: datetime, limit: int = 50_000
    ) -> list[WeekPlay]:
        """The station's stored plays that started in [start, end), oldest first (the recap)."""
        rows = await self.fetch(
            "SELECT started, title, artist, listeners, live FROM plays WHERE station = ? "
            "AND started >= ? AND started < ? ORDER BY started LIMIT ?",
            (station, start.timestamp(), end.timestamp(), limit),
        )
        # Building tens of thousands of plays takes tens of milliseconds: in a worker thread.
        return await asyncio.to_thread(_week_plays, rows)

    async def most_liked(
        self, station: str, start: datetime, end: datetime, count: int = 5
    ) -> list[tuple[str, int]]:
        """(track, likes) of the station's most liked tracks, by the likes given in
        [start, end) (the recap): "artist - title" as the recap names its plays."""
        rows = await self._liked(station, start.timestamp(), end.timestamp(), count)
        return [(f"{artist} - {title}" if artist else title, n) for title, artist, n in rows]

    # Shows: voice channel status and scheduled events ------------------------------------

    async def written_statuses(self) -> dict[int, str]:
        """{channel id: the status or stage topic OnAir last wrote there}."""
        rows = await self.fetch("SELECT channel_id, text FROM voice_status")
        return {int(r[0]): str(r[1]) for r in rows}

    async def save_written_status(self, guild_id: int, channel_id: int, text: str) -> None:
        await self.execute(
            "INSERT INTO voice_status (guild_id, channel_id, text) VALUES (?, ?, ?) "
            "ON CONFLICT (channel_id) DO UPDATE SET text = excluded.text",
            (guild_id, channel_id, text),
        )

    async def forget_written_status(self, channel_id: int) -> None:
        await self.execute("DELETE FROM voice_status WHERE channel_id = ?", (channel_id,))

    async def set_show_events(self, guild_id: int, station: str, *, on: bool) -> bool:
        """Turn a station's live-show events on or off for a guild; whether that changed."""
        if on:
            sql = (
                "INSERT INTO guild_show_events (guild_id, station) VALUES (?, ?) "
                "ON CONFLICT DO NOTHING"
            )
        else:
            sql = "DELETE FROM guild_show_events WHERE guild_id = ? AND station = ?"
        return await self.execute(sql, (guild_id, station)) > 0

    async def show_event_guilds(self, station: str | None = None) -> list[tuple[int, str]]:
        """(guild, station) pairs with live-show events on (for one station, or all)."""
        if station is None:
            rows = await self.fetch("SELECT guild_id, station FROM guild_show_events")
        else:
            rows = await self.fetch(
                "SELECT guild_id, station FROM guild_show_events WHERE station = ?", (station,)
            )
        return [(int(r[0]), str(r[1])) for r in rows]

    async def claim_show_event(
        self, guild_id: int, station: str, show_key: str, *, now: float
    ) -> bool:
        """Claim the one event of this airing in this guild; False when it was claimed before
        (by this process, an earlier run or another process): then no event is created."""
        changed = await self.execute(
            "INSERT INTO show_events (guild_id, station, show_key, created_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (guild_id, station, show_key, now),
        )
        return changed > 0

    async def show_event_keys(self, guild_id: int, station: str) -> list[str]:
        """Every airing key of the station's events in the guild (open and finished)."""
        rows = await self.fetch(
            "SELECT show_key FROM show_events WHERE guild_id = ? AND station = ?",
            (guild_id, station),
        )
        return [str(r[0]) for r in rows]

    async def show_event_airings(self, guild_id: int, station: str) -> list[tuple[str, str]]:
        """(airing key, state) of the station's events in the guild (open and finished)."""
        rows = await self.fetch(
            "SELECT show_key, state FROM show_events WHERE guild_id = ? AND station = ?",
            (guild_id, station),
        )
        return [(str(r[0]), str(r[1])) for r in rows]

    async def update_show_event(
        self, guild_id: int, station: str, show_key: str, *, state: str, event_id: int = 0
    ) -> None:
        where = " WHERE guild_id = ? AND station = ? AND show_key = ?"
        if event_id:
            await self.execute(
                "UPDATE show_events SET state = ?, event_id = ?" + where,
                (state, event_id, guild_id, station, show_key),
            )
        else:
            await self.execute(
                "UPDATE show_events SET state = ?" + where, (state, guild_id, station, show_key)
            )

    async def open_show_events(
        self, guild_id: int | None = None, station: str | None = None
    ) -> list[tuple[int, str, str, int, str]]:
        """(guild, station, show key, event id, state) of events not finished (claimed or
        active), for one guild and/or station."""
        sql = (
            "SELECT guild_id, station, show_key, event_id, state FROM show_events "
            "WHERE state IN (?, ?)"
        )
        params: list[Any] = [EVENT_CLAIMED, EVENT_ACTIVE]
        if guild_id is not None:
            sql += " AND guild_id = ?"
            params.append(guild_id)
        if station is not None:
            sql += " AND station = ?"
            params.append(station)
        rows = await self.fetch(sql + " ORDER BY created_at", params)
        return [(int(r[0]), str(r[1]), str(r[2]), int(r[3]), str(r[4])) for r in rows]

    # Fleet coordination (PostgreSQL only; see ``fleet``) -----------------------------------

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


_GUILD_VOICE = (
    "SELECT guild_id, home_channel, leave_when_empty, station, channel_status FROM guild_voice"
)


def _guild_voice(row: Row) -> GuildVoice:
    return GuildVoice(int(row[0]), int(row[1]), float(row[2]), str(row[3]), bool(row[4]))


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


def _float_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _week_plays(rows: Sequence[Row]) -> list[WeekPlay]:
    return [
        WeekPlay(
            datetime.fromtimestamp(float(r[0]), UTC),
            str(r[1]),
            str(r[2]) if r[2] else None,
            int(r[3]) if r[3] is not None else None,
            bool(r[4]),
        )
        for r in rows
    ]
