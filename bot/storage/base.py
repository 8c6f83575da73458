"""The one storage interface: business operations written once in portable SQL.

Each backend supplies four primitives (execute, fetch, the migration scripts and the
placeholder style); everything else (subscriptions, claims, history, guild stations and
settings, purges) is shared, so SQLite and PostgreSQL behave the same and one test suite runs
against both.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar

from ..station import Play
from .models import (
    SUB_COLUMNS,
    GuildSettings,
    GuildStation,
    HistoryEntry,
    Subscription,
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
    # Announcement style per channel: 'compact', 'full' or '' (by mode: post compact, card full).
    """
    ALTER TABLE subscriptions ADD COLUMN style TEXT NOT NULL DEFAULT '';
    """,
)


class Storage(ABC):
    """Subscriptions, announcement claims, play history, guild stations and settings."""

    dialect: ClassVar[dict[str, str]] = {}

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
                min_seconds, skip_item_types, skip_pattern, announce_live, style)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (channel_id, station) DO UPDATE SET
                guild_id = excluded.guild_id, mode = excluded.mode, style = excluded.style,
                mention_role = excluded.mention_role, min_seconds = excluded.min_seconds,
                skip_item_types = excluded.skip_item_types, skip_pattern = excluded.skip_pattern,
                announce_live = excluded.announce_live, paused_reason = NULL
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

    async def pause(self, sub_id: int, reason: str | None) -> None:
        await self.execute(
            "UPDATE subscriptions SET paused_reason = ? WHERE id = ?", (reason, sub_id)
        )

    async def claim(self, sub_id: int, play_key: str) -> bool:
        """Exactly one process may announce a play in a channel: the first to insert wins."""
        changed = await self.execute(
            "INSERT INTO claims (subscription_id, play_key, claimed_at) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING",
            (sub_id, play_key, datetime.now(UTC).timestamp()),
        )
        return changed == 1

    async def release(self, sub_id: int, play_key: str) -> None:
        """Give a claim back after a failed send, so a later attempt may announce the play."""
        await self.execute(
            "DELETE FROM claims WHERE subscription_id = ? AND play_key = ?", (sub_id, play_key)
        )

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

    async def prune(self, keep_days: int, now: datetime | None = None) -> int:
        cutoff = ((now or datetime.now(UTC)) - timedelta(days=keep_days)).timestamp()
        removed = await self.execute("DELETE FROM plays WHERE started < ?", (cutoff,))
        await self.execute("DELETE FROM claims WHERE claimed_at < ?", (cutoff,))
        return removed

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
            "SELECT guild_id, slug, name, base_url, station_id, key_cipher, timezone "
            "FROM guild_stations"
        )
        params: list[Any] = []
        if guild_id is not None:
            query += " WHERE guild_id = ?"
            params.append(guild_id)
        rows = await self.fetch(query + " ORDER BY guild_id, slug", params)
        return [
            GuildStation(
                r[0], r[1], r[2], r[3], r[4], bytes(r[5]) if r[5] is not None else None, r[6]
            )
            for r in rows
        ]

    async def remove_guild_station(self, guild_id: int, slug: str, global_slug: str) -> bool:
        await self.execute(
            "DELETE FROM subscriptions WHERE guild_id = ? AND station = ?", (guild_id, global_slug)
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
            "DELETE FROM claims WHERE subscription_id IN "
            "(SELECT id FROM subscriptions WHERE guild_id = ?)",
            (guild_id,),
        )
        await self.execute("DELETE FROM subscriptions WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM guild_stations WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM guild_settings WHERE guild_id = ?", (guild_id,))
