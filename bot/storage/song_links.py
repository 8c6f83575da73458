"""Song links: each song's search answer, shared by every process, and the claim of the one
process looking it up.

A row per song key. ``claim_song_lookup`` is one statement (``INSERT ... ON CONFLICT ... DO
UPDATE ... WHERE ... RETURNING``): it succeeds only when nothing is known of the song (or what
is known expired) and no other process holds an unexpired claim, so two processes never search
the same song at once; the row lock makes concurrent claimers queue on PostgreSQL, and SQLite
has one writer. Times are epoch seconds of the caller's clock.
"""

from __future__ import annotations

from .models import SongLinkRow
from .primitives import StoragePrimitives

CLAIM_SQL = """
INSERT INTO song_links (song_key, claimed_by, claim_until) VALUES (?, ?, ?)
ON CONFLICT (song_key) DO UPDATE SET
    claimed_by = excluded.claimed_by, claim_until = excluded.claim_until
WHERE song_links.expires_at <= ? AND song_links.claim_until <= ?
RETURNING song_key
"""


class SongLinkStore(StoragePrimitives):
    """Found or not found, until when; claimed by whom, until when."""

    async def song_link(self, song_key: str, now: float) -> SongLinkRow | None:
        """What is known of the song and still valid at ``now``; None when nothing is."""
        row = await self.fetchone(
            "SELECT song_key, found, track_id, artwork, expires_at FROM song_links "
            "WHERE song_key = ? AND expires_at > ?",
            (song_key, now),
        )
        if row is None:
            return None
        return SongLinkRow(str(row[0]), bool(row[1]), int(row[2]), str(row[3]), float(row[4]))

    async def claim_song_lookup(self, song_key: str, owner: str, now: float, until: float) -> bool:
        """Claim the song's search for ``owner`` until ``until``: False when its answer is known
        or another claim holds."""
        rows = await self.write_fetch(CLAIM_SQL, (song_key, owner, until, now, now))
        return bool(rows)

    async def save_song_link(self, row: SongLinkRow) -> None:
        """Store the answer and release the claim."""
        await self.execute(
            "INSERT INTO song_links (song_key, found, track_id, artwork, expires_at, "
            "claimed_by, claim_until) VALUES (?, ?, ?, ?, ?, '', 0) "
            "ON CONFLICT (song_key) DO UPDATE SET found = excluded.found, "
            "track_id = excluded.track_id, artwork = excluded.artwork, "
            "expires_at = excluded.expires_at, claimed_by = '', claim_until = 0",
            (row.song_key, int(row.found), row.track_id, row.artwork, row.expires_at),
        )

    async def release_song_claim(self, song_key: str, owner: str) -> None:
        """Give the claim up (the search failed): another process may search the song."""
        await self.execute(
            "UPDATE song_links SET claimed_by = '', claim_until = 0 "
            "WHERE song_key = ? AND claimed_by = ?",
            (song_key, owner),
        )
