"""Shows: the voice channel statuses OnAir wrote and live shows as Scheduled Events."""

from __future__ import annotations

from typing import Any

from .primitives import StoragePrimitives, and_equal

# Show event states: claimed (a process is creating it), active (live now), completed, failed
# (Discord refused it: the claim stays so no second event is made for that airing), planned (a
# scheduled slot's SCHEDULED event, before its show goes live; then its live airing takes the
# event and the slot's row is completed, as is a slot removed from the schedule).
EVENT_CLAIMED, EVENT_ACTIVE, EVENT_COMPLETED, EVENT_FAILED, EVENT_PLANNED = (
    "claimed",
    "active",
    "completed",
    "failed",
    "planned",
)
SlotRow = tuple[int, str, str, int, float, float]  # guild, station, slot key, event, start, end


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

    # Scheduled slots ---------------------------------------------------------------------

    async def claim_slot_event(
        self, guild_id: int, station: str, key: str, *, starts_at: float, ends_at: float, now: float
    ) -> bool:
        """Claim the one event of a scheduled slot in this guild (False: claimed before, by
        this process, an earlier run or another process; then no event is made)."""
        changed = await self.execute(
            "INSERT INTO show_events "
            "(guild_id, station, show_key, state, created_at, starts_at, ends_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (guild_id, station, key, EVENT_PLANNED, now, starts_at, ends_at),
        )
        return changed > 0

    async def planned_slot_events(
        self, guild_id: int | None = None, station: str | None = None
    ) -> list[SlotRow]:
        """(guild, station, slot key, event id, start, end) of the slots' events not yet taken
        by their live show nor cancelled, soonest first."""
        sql = (
            "SELECT guild_id, station, show_key, event_id, starts_at, ends_at FROM show_events "
            "WHERE state = ?"
        )
        params: list[Any] = [EVENT_PLANNED]
        sql = and_equal(sql, params, guild_id=guild_id, station=station)
        rows = await self.fetch(sql + " ORDER BY starts_at", params)
        return [
            (int(r[0]), str(r[1]), str(r[2]), int(r[3]), float(r[4] or 0), float(r[5] or 0))
            for r in rows
        ]

    async def move_slot_event(
        self, guild_id: int, station: str, key: str, *, starts_at: float, ends_at: float
    ) -> None:
        await self.execute(
            "UPDATE show_events SET starts_at = ?, ends_at = ? "
            "WHERE guild_id = ? AND station = ? AND show_key = ? AND state = ?",
            (starts_at, ends_at, guild_id, station, key, EVENT_PLANNED),
        )

    async def set_slot_event_id(self, guild_id: int, station: str, key: str, event_id: int) -> None:
        await self.execute(
            "UPDATE show_events SET event_id = ? "
            "WHERE guild_id = ? AND station = ? AND show_key = ? AND state = ?",
            (event_id, guild_id, station, key, EVENT_PLANNED),
        )

    async def close_slot_event(
        self, guild_id: int, station: str, key: str, *, state: str = EVENT_COMPLETED
    ) -> bool:
        """A planned slot's row leaves the plan (its show went live, or it was cancelled);
        True for the one caller that moved it (the others leave its event alone)."""
        changed = await self.execute(
            "UPDATE show_events SET state = ? "
            "WHERE guild_id = ? AND station = ? AND show_key = ? AND state = ?",
            (state, guild_id, station, key, EVENT_PLANNED),
        )
        return changed > 0

    async def claim_schedule_fetch(self, station: str, *, now: float, every: float) -> bool:
        """Whether this process asks the station's host for its schedule now: one per
        ``every`` seconds for the whole fleet (the others read what it stored)."""
        changed = await self.execute(
            "INSERT INTO station_schedules (station, claimed_at) VALUES (?, ?) "
            "ON CONFLICT (station) DO UPDATE SET claimed_at = excluded.claimed_at "
            "WHERE station_schedules.claimed_at <= ?",
            (station, now, now - every),
        )
        return changed > 0

    async def save_schedule(self, station: str, shows: str, *, fetched_at: float) -> None:
        await self.execute(
            "UPDATE station_schedules SET shows = ?, fetched_at = ? WHERE station = ?",
            (shows, fetched_at, station),
        )

    async def stored_schedule(self, station: str) -> tuple[float, str] | None:
        """(when it was fetched, the shows as JSON) of the station's last schedule read."""
        row = await self.fetchone(
            "SELECT fetched_at, shows FROM station_schedules WHERE station = ?", (station,)
        )
        if row is None or not row[1]:
            return None
        return float(row[0]), str(row[1])
