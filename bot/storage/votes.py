"""Song votes: each guild's schedule, and each slot's poll claimed once by key.

A slot's row is inserted by one process only (``ON CONFLICT DO NOTHING``); each later step is a
conditional update from one state to the next under a lease, so however many processes tick,
one posts the poll, one ends it and one asks for the winner. The request is made only after
the row is ``closed``: a crash then loses at most the request, never repeats it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .models import SongVote, VotePoll
from .primitives import Row, StoragePrimitives, and_equal, upsert_row

OPENING, OPEN, CLOSING, CLOSED = "opening", "open", "closing", "closed"
_POLL_COLUMNS = (
    "poll_key, guild_id, channel_id, station, opens_at, ends_at, answers, message_id, state, "
    "outcome"
)


def _answers(raw: Any) -> tuple[tuple[str, str], ...]:
    try:
        items = json.loads(str(raw))
        return tuple((str(a[0]), str(a[1])) for a in items)
    except (ValueError, TypeError, IndexError):
        return ()


def _poll(row: Row) -> VotePoll:
    return VotePoll(
        str(row[0]),
        int(row[1]),
        int(row[2]),
        str(row[3]),
        float(row[4]),
        float(row[5]),
        _answers(row[6]),
        int(row[7]),
        str(row[8]),
        str(row[9]),
    )


class VoteStore(StoragePrimitives):
    """Song vote schedules and their polls, written once for both backends."""

    async def save_song_vote(self, vote: SongVote) -> None:
        columns = "channel_id, station, every, length, since, paused_reason"
        await self.execute(*upsert_row("song_votes", "guild_id", columns, vote))

    async def pause_song_vote(self, guild_id: int, channel_id: int, reason: str) -> bool:
        """Pause the guild's votes in ``channel_id`` with ``reason``; False when they are
        paused already or were moved to another channel meanwhile (that one is not paused)."""
        return (
            await self.execute(
                "UPDATE song_votes SET paused_reason = ? WHERE guild_id = ? AND channel_id = ? "
                "AND paused_reason IS NULL",
                (reason, guild_id, channel_id),
            )
            > 0
        )

    async def remove_song_vote(self, guild_id: int) -> bool:
        return await self.execute("DELETE FROM song_votes WHERE guild_id = ?", (guild_id,)) > 0

    async def song_votes(self, guild_id: int | None = None) -> list[SongVote]:
        query = (
            "SELECT guild_id, channel_id, station, every, length, since, paused_reason "
            "FROM song_votes WHERE 1 = 1"
        )
        params: list[Any] = []
        query = and_equal(query, params, guild_id=guild_id)
        rows = await self.fetch(query + " ORDER BY guild_id", params)
        return [
            SongVote(
                int(r[0]),
                int(r[1]),
                str(r[2]),
                float(r[3]),
                float(r[4]),
                float(r[5]),
                None if r[6] is None else str(r[6]),
            )
            for r in rows
        ]

    async def claim_vote_poll(
        self, poll: VotePoll, *, owner: str, lease_until: float, now: float
    ) -> bool:
        """Record the slot's poll as ``opening``, leased to ``owner``; False when the slot was
        claimed before (by an earlier run or another process)."""
        answers = json.dumps([list(a) for a in poll.answers])
        return (
            await self.execute(
                "INSERT INTO vote_polls (poll_key, guild_id, channel_id, station, opens_at, "
                "ends_at, answers, message_id, state, owner, lease_until, outcome, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, '', ?) ON CONFLICT (poll_key) DO NOTHING",
                (
                    poll.key,
                    poll.guild_id,
                    poll.channel_id,
                    poll.station,
                    poll.opens_at,
                    poll.ends_at,
                    answers,
                    OPENING,
                    owner,
                    lease_until,
                    now,
                ),
            )
            > 0
        )

    async def vote_poll_recorded(self, key: str) -> bool:
        row = await self.fetchone("SELECT 1 FROM vote_polls WHERE poll_key = ?", (key,))
        return row is not None

    async def take_vote_poll(
        self, key: str, states: Sequence[str], *, owner: str, lease_until: float, now: float
    ) -> VotePoll | None:
        """Lease a poll in one of ``states`` nobody holds a live lease on, moving an ``open``
        one to ``closing``; one caller wins however many ask."""
        marks = ", ".join("?" for _ in states)
        rows = await self.write_fetch(
            "UPDATE vote_polls SET owner = ?, lease_until = ?, updated_at = ?, "
            "state = CASE WHEN state = ? THEN ? ELSE state END "
            f"WHERE poll_key = ? AND state IN ({marks}) "
            "AND (lease_until IS NULL OR lease_until < ?) "
            f"RETURNING {_POLL_COLUMNS}",
            (owner, lease_until, now, OPEN, CLOSING, key, *states, now),
        )
        return _poll(rows[0]) if rows else None

    async def vote_poll_opened(self, key: str, owner: str, message_id: int, *, now: float) -> bool:
        """The poll is posted: ``open`` with its message, the lease given back."""
        return (
            await self.execute(
                "UPDATE vote_polls SET state = ?, message_id = ?, owner = NULL, "
                "lease_until = NULL, updated_at = ? WHERE poll_key = ? AND owner = ? "
                "AND state = ?",
                (OPEN, message_id, now, key, owner, OPENING),
            )
            > 0
        )

    async def vote_poll_reopened(self, key: str, owner: str, *, now: float) -> None:
        """Ended but not yet tallied by Discord: ``open`` again, taken up at the next look."""
        await self.execute(
            "UPDATE vote_polls SET state = ?, owner = NULL, lease_until = NULL, updated_at = ? "
            "WHERE poll_key = ? AND owner = ? AND state = ?",
            (OPEN, now, key, owner, CLOSING),
        )

    async def vote_poll_closed(self, key: str, owner: str, outcome: str, *, now: float) -> bool:
        """Close the poll with its outcome; True for the one caller that closed it (who then
        asks for the winner)."""
        return (
            await self.execute(
                "UPDATE vote_polls SET state = ?, outcome = ?, owner = NULL, lease_until = NULL, "
                "updated_at = ? WHERE poll_key = ? AND owner = ? AND state IN (?, ?)",
                (CLOSED, outcome, now, key, owner, OPENING, CLOSING),
            )
            > 0
        )

    async def vote_poll_outcome(self, key: str, outcome: str, *, now: float) -> None:
        """What became of a closed poll's request (status and tests)."""
        await self.execute(
            "UPDATE vote_polls SET outcome = ?, updated_at = ? WHERE poll_key = ? AND state = ?",
            (outcome, now, key, CLOSED),
        )

    async def due_vote_polls(self, now: float, limit: int = 200) -> list[VotePoll]:
        """Polls to act on: ``opening`` ones whose lease lapsed (a poster died) and ``open`` or
        ``closing`` ones past their end, nobody holding a live lease; earliest end first."""
        rows = await self.fetch(
            f"SELECT {_POLL_COLUMNS} FROM vote_polls WHERE "
            "(lease_until IS NULL OR lease_until < ?) AND "
            "(state = ? OR (state IN (?, ?) AND ends_at <= ?)) ORDER BY ends_at, poll_key LIMIT ?",
            (now, OPENING, OPEN, CLOSING, now, limit),
        )
        return [_poll(r) for r in rows]

    async def vote_polls(self, guild_id: int) -> list[VotePoll]:
        rows = await self.fetch(
            f"SELECT {_POLL_COLUMNS} FROM vote_polls WHERE guild_id = ? ORDER BY opens_at",
            (guild_id,),
        )
        return [_poll(r) for r in rows]

    async def unclosed_vote_poll(self, guild_id: int) -> VotePoll | None:
        """The guild's poll not closed yet (being posted, running or awaiting its count), if
        any: a guild has one poll open at a time."""
        rows = await self.fetch(
            f"SELECT {_POLL_COLUMNS} FROM vote_polls WHERE state IN (?, ?, ?) AND guild_id = ? "
            "ORDER BY ends_at DESC LIMIT 1",
            (OPENING, OPEN, CLOSING, guild_id),
        )
        return _poll(rows[0]) if rows else None
