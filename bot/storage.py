"""Persistence behind one interface (SQLite through aiosqlite; its own thread, never the loop).

Holds subscriptions, the last play announced in each channel (written after a successful send,
so a restart neither repeats nor loses an announcement) and the play history for ``/history``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

import aiosqlite

from .station import Play

MIGRATIONS: tuple[str, ...] = (
    # 1: subscriptions and the last announced play per subscription
    """
    CREATE TABLE subscriptions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        guild_id INTEGER NOT NULL,
        channel_id INTEGER NOT NULL,
        station TEXT NOT NULL,
        mode TEXT NOT NULL DEFAULT 'post',
        mention_role INTEGER NOT NULL DEFAULT 0,
        min_seconds REAL NOT NULL DEFAULT 0,
        skip_item_types TEXT NOT NULL DEFAULT '[]',
        skip_pattern TEXT NOT NULL DEFAULT '',
        announce_live INTEGER NOT NULL DEFAULT 1,
        paused_reason TEXT,
        card_message_id INTEGER,
        last_play TEXT,
        UNIQUE (channel_id, station)
    );
    """,
    # 2: play history
    """
    CREATE TABLE plays (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        station TEXT NOT NULL,
        started REAL NOT NULL,
        title TEXT NOT NULL,
        artist TEXT,
        album TEXT,
        duration REAL,
        listeners INTEGER,
        live INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX plays_station_started ON plays (station, started);
    """,
)


@dataclass(frozen=True, slots=True)
class Subscription:
    id: int
    guild_id: int
    channel_id: int
    station: str
    mode: str = "post"
    mention_role: int = 0
    min_seconds: float = 0.0
    skip_item_types: tuple[str, ...] = ()
    skip_pattern: str = ""
    announce_live: bool = True
    paused_reason: str | None = None
    card_message_id: int | None = None
    last_play: Play | None = None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    started: datetime
    title: str
    artist: str | None
    album: str | None


def play_to_json(play: Play) -> str:
    return json.dumps(
        {
            "title": play.title,
            "artist": play.artist,
            "started": play.started.isoformat() if play.started else None,
            "exact": play.started_exact,
            "file": play.file,
        }
    )


def play_from_json(raw: str | None) -> Play | None:
    if not raw:
        return None
    try:
        data = json.loads(raw)
        started = datetime.fromisoformat(data["started"]) if data.get("started") else None
        return Play(
            title=data["title"],
            artist=data.get("artist"),
            started=started,
            started_exact=bool(data.get("exact")),
            file=data.get("file"),
        )
    except (ValueError, KeyError, TypeError):
        return None


_SUB_COLUMNS = (
    "id, guild_id, channel_id, station, mode, mention_role, min_seconds, skip_item_types, "
    "skip_pattern, announce_live, paused_reason, card_message_id, last_play"
)


def _subscription(row: Sequence[Any]) -> Subscription:
    return Subscription(
        id=row[0],
        guild_id=row[1],
        channel_id=row[2],
        station=row[3],
        mode=row[4],
        mention_role=row[5],
        min_seconds=row[6],
        skip_item_types=tuple(json.loads(row[7] or "[]")),
        skip_pattern=row[8],
        announce_live=bool(row[9]),
        paused_reason=row[10],
        card_message_id=row[11],
        last_play=play_from_json(row[12]),
    )


class Storage:
    """The one storage interface. ``open()`` runs the migrations."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._db: aiosqlite.Connection | None = None

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("storage is not open")
        return self._db

    async def open(self) -> Storage:
        self._db = await aiosqlite.connect(self.path)
        await self.db.execute("PRAGMA journal_mode=WAL")
        await self.db.execute("PRAGMA synchronous=NORMAL")
        await self.db.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"
        )
        async with self.db.execute("SELECT MAX(version) FROM schema_version") as cursor:
            row = await cursor.fetchone()
        current = (row[0] if row else None) or 0
        for version, script in enumerate(MIGRATIONS, start=1):
            if version > current:
                await self.db.executescript(script)
                await self.db.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        await self.db.commit()
        return self

    async def close(self) -> None:
        if self._db is not None:
            await self._db.close()
            self._db = None

    # Subscriptions ----------------------------------------------------------------------

    async def upsert_subscription(self, sub: Subscription) -> Subscription:
        """Insert or update by (channel, station); keeps the stored last play and card."""
        await self.db.execute(
            """
            INSERT INTO subscriptions (guild_id, channel_id, station, mode, mention_role,
                min_seconds, skip_item_types, skip_pattern, announce_live)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (channel_id, station) DO UPDATE SET
                guild_id = excluded.guild_id, mode = excluded.mode,
                mention_role = excluded.mention_role, min_seconds = excluded.min_seconds,
                skip_item_types = excluded.skip_item_types, skip_pattern = excluded.skip_pattern,
                announce_live = excluded.announce_live
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
            ),
        )
        await self.db.commit()
        async with self.db.execute(
            f"SELECT {_SUB_COLUMNS} FROM subscriptions WHERE channel_id = ? AND station = ?",
            (sub.channel_id, sub.station),
        ) as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return _subscription(row)

    async def subscriptions(self, station: str | None = None) -> list[Subscription]:
        query = f"SELECT {_SUB_COLUMNS} FROM subscriptions"
        params: tuple[Any, ...] = ()
        if station is not None:
            query += " WHERE station = ?"
            params = (station,)
        async with self.db.execute(query + " ORDER BY id", params) as cursor:
            return [_subscription(row) for row in await cursor.fetchall()]

    async def remove_subscriptions_not_in(self, keep: Sequence[tuple[int, str]]) -> None:
        current = await self.subscriptions()
        wanted = set(keep)
        for sub in current:
            if (sub.channel_id, sub.station) not in wanted:
                await self.db.execute("DELETE FROM subscriptions WHERE id = ?", (sub.id,))
        await self.db.commit()

    async def mark_announced(
        self, sub_id: int, play: Play, card_message_id: int | None = None
    ) -> None:
        await self.db.execute(
            "UPDATE subscriptions SET last_play = ?, "
            "card_message_id = COALESCE(?, card_message_id) WHERE id = ?",
            (play_to_json(play), card_message_id, sub_id),
        )
        await self.db.commit()

    async def pause(self, sub_id: int, reason: str | None) -> None:
        await self.db.execute(
            "UPDATE subscriptions SET paused_reason = ? WHERE id = ?", (reason, sub_id)
        )
        await self.db.commit()

    async def purge_guild(self, guild_id: int) -> None:
        await self.db.execute("DELETE FROM subscriptions WHERE guild_id = ?", (guild_id,))
        await self.db.commit()

    # History ----------------------------------------------------------------------------

    async def record_play(
        self, station: str, play: Play, listeners: int | None, detected: datetime
    ) -> None:
        started = play.started or detected
        await self.db.execute(
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
        await self.db.commit()

    async def play_at(self, station: str, moment: datetime, count: int = 5) -> list[HistoryEntry]:
        """The play on air at ``moment`` and the ones around it (newest first)."""
        async with self.db.execute(
            "SELECT started, title, artist, album FROM plays WHERE station = ? AND started <= ? "
            "ORDER BY started DESC LIMIT ?",
            (station, moment.timestamp(), count),
        ) as cursor:
            rows = await cursor.fetchall()
        return [_history(row) for row in rows]

    async def search_plays(self, station: str, text: str, count: int = 10) -> list[HistoryEntry]:
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        async with self.db.execute(
            "SELECT started, title, artist, album FROM plays WHERE station = ? AND "
            "(title LIKE ? ESCAPE '\\' OR artist LIKE ? ESCAPE '\\' OR album LIKE ? ESCAPE '\\') "
            "ORDER BY started DESC LIMIT ?",
            (station, pattern, pattern, pattern, count),
        ) as cursor:
            rows = await cursor.fetchall()
        return [_history(row) for row in rows]

    async def prune_history(self, keep_days: int, now: datetime | None = None) -> int:
        cutoff = (now or datetime.now(UTC)) - timedelta(days=keep_days)
        cursor = await self.db.execute("DELETE FROM plays WHERE started < ?", (cutoff.timestamp(),))
        await self.db.commit()
        return cursor.rowcount


def _history(row: Sequence[Any]) -> HistoryEntry:
    return HistoryEntry(datetime.fromtimestamp(row[0], UTC), row[1], row[2], row[3])


__all__ = ["HistoryEntry", "Storage", "Subscription", "replace"]
