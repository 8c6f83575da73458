"""Listeners' own choices, kept per Discord user: the station they last chose where OnAir
answers them personally (a user install or a DM), which has no server default to fall back on."""

from __future__ import annotations

from .primitives import StoragePrimitives, upsert


class UserStore(StoragePrimitives):
    """One row per user who chose a station; a station that has gone is simply not offered."""

    async def user_station(self, user_id: int) -> str | None:
        row = await self.fetchone("SELECT station FROM user_stations WHERE user_id = ?", (user_id,))
        return None if row is None else str(row[0])

    async def set_user_station(self, user_id: int, station: str, *, now: float) -> None:
        await self.execute(
            upsert("user_stations", "user_id", "station, chosen_at"), (user_id, station, now)
        )
