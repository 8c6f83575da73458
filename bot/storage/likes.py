"""Likes: a user's ❤ on a recorded play, and the charts built from likes and plays."""

from __future__ import annotations

from datetime import datetime

from ..station import Play
from .history import recorded_play
from .primitives import StoragePrimitives


class LikeStore(StoragePrimitives):
    """Likes attach to history rows; one per user and play."""

    async def play_id(self, station: str, play: Play) -> int | None:
        """The history row of ``play`` (the same-play rule among the station's newest plays),
        which likes attach to; None when it was not recorded."""
        return await recorded_play(self, station, play, newest=10)

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

    async def play_title(self, play_id: int) -> str | None:
        """The title of a recorded play (what a like's private answer names)."""
        row = await self.fetchone("SELECT title FROM plays WHERE id = ?", (play_id,))
        return str(row[0]) if row and row[0] else None

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

    async def most_liked(
        self, station: str, start: datetime, end: datetime, count: int = 5
    ) -> list[tuple[str, str | None, int]]:
        """(title, artist, likes) of the station's most liked tracks, by the likes given in
        [start, end) (the recap)."""
        return await self._liked(station, start.timestamp(), end.timestamp(), count)
