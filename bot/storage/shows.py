"""Shows: the voice channel statuses OnAir wrote and live shows as Scheduled Events."""

from __future__ import annotations

from typing import Any

from .primitives import StoragePrimitives, and_equal

# Show event states: claimed (a process is creating it), active (live now), completed, failed
# (Discord refused it: the claim stays so no second event is made for that airing).
EVENT_CLAIMED, EVENT_ACTIVE, EVENT_COMPLETED, EVENT_FAILED = (
    "claimed",
    "active",
    "completed",
    "failed",
)


class ShowStore(StoragePrimitives):
    """Written statuses and live-show events, claimed once per airing."""

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
        sql = and_equal(sql, params, guild_id=guild_id, station=station)
        rows = await self.fetch(sql + " ORDER BY created_at", params)
        return [(int(r[0]), str(r[1]), str(r[2]), int(r[3]), str(r[4])) for r in rows]
