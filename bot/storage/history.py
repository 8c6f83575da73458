"""Play history: what each station played (``/history``, the recap), and its pruning."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from ..station import Play
from .models import HistoryEntry, WeekPlay, history_entry
from .primitives import Row, StoragePrimitives
from .shows import EVENT_COMPLETED, EVENT_FAILED
from .votes import CLOSED as VOTE_CLOSED


async def recorded_play(
    store: StoragePrimitives, station: str, play: Play, *, newest: int
) -> int | None:
    """The history row (id) of ``play``: the same play (the same-play rule) among the station's
    ``newest`` plays; None when it is not among them."""
    rows = await store.fetch(
        "SELECT id, started, title, artist FROM plays WHERE station = ? "
        f"ORDER BY started DESC LIMIT {int(newest)}",
        (station,),
    )
    seen = Play(play.title, play.artist, started=play.started)
    for row in rows:
        recorded = Play(row[2], row[3], started=datetime.fromtimestamp(row[1], UTC))
        if seen.same_as(recorded):
            return int(row[0])
    return None


class HistoryStore(StoragePrimitives):
    """The plays table, and the retention of everything that grows with plays."""

    async def record_play(
        self, station: str, play: Play, listeners: int | None, detected: datetime
    ) -> bool:
        """Add a play to the history unless one of the station's newest plays is the same play
        (the same-play rule): every poll of a station may offer it, whoever polled. True when
        it was added."""
        started = play.started or detected
        if await recorded_play(self, station, play, newest=3) is not None:
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
        # Song links past their expiry (the next play searches again anyway).
        at = moment.timestamp()
        await self.execute(
            "DELETE FROM song_links WHERE expires_at < ? AND claim_until < ?", (at, at)
        )
        # Closed song vote polls: their rows only guard against a second poll per slot.
        await self.execute(
            "DELETE FROM vote_polls WHERE state = ? AND ends_at < ?", (VOTE_CLOSED, cutoff)
        )
        return removed

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
