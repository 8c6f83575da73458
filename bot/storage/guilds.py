"""Guild stations and settings, and forgetting a guild the bot left."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..station.source import station_ref
from .models import GuildSettings, GuildStation
from .primitives import StoragePrimitives, and_equal, upsert


class GuildStore(StoragePrimitives):
    """The stations a guild added, its settings, and its purge."""

    async def save_guild_station(self, station: GuildStation) -> None:
        columns = "name, base_url, station_id, key_cipher, timezone, kind, station_ref"
        ref = station.station_id
        await self.execute(
            upsert("guild_stations", "guild_id, slug", columns),
            (
                station.guild_id,
                station.slug,
                station.name,
                station.base_url,
                ref if isinstance(ref, int) else 0,
                station.key_cipher,
                station.timezone,
                station.kind,
                str(ref),
            ),
        )

    async def guild_stations(self, guild_id: int | None = None) -> list[GuildStation]:
        query = (
            "SELECT guild_id, slug, name, base_url, station_id, key_cipher, timezone, voice, "
            "stream_url, kind, station_ref FROM guild_stations"
        )
        params: list[Any] = []
        query = and_equal(query + " WHERE 1 = 1", params, guild_id=guild_id)
        rows = await self.fetch(query + " ORDER BY guild_id, slug", params)
        return [
            GuildStation(
                r[0],
                r[1],
                r[2],
                r[3],
                _stored_ref(r[9], r[10], r[4]),
                bytes(r[5]) if r[5] is not None else None,
                r[6],
                voice=bool(r[7]),
                stream_url=r[8] or "",
                kind=r[9],
            )
            for r in rows
        ]

    async def remove_guild_station(self, guild_id: int, slug: str, global_slug: str) -> bool:
        """Remove a station a guild added and everything of the guild that names it (its
        announcements, alerts and their state, recap, live-show events), in one transaction:
        the same station added again starts clean."""
        counts = await self.execute_atomic(
            [
                (
                    "DELETE FROM subscriptions WHERE guild_id = ? AND station = ?",
                    (guild_id, global_slug),
                ),
                (
                    "DELETE FROM alert_subscriptions WHERE guild_id = ? AND station = ?",
                    (guild_id, global_slug),
                ),
                ("DELETE FROM station_alert_state WHERE station = ?", (global_slug,)),
                ("DELETE FROM recaps WHERE guild_id = ? AND station = ?", (guild_id, global_slug)),
                (
                    "DELETE FROM guild_show_events WHERE guild_id = ? AND station = ?",
                    (guild_id, global_slug),
                ),
                ("DELETE FROM guild_stations WHERE guild_id = ? AND slug = ?", (guild_id, slug)),
            ]
        )
        return counts[-1] > 0

    async def save_guild_settings(self, settings: GuildSettings) -> None:
        columns = "timezone, default_station, language, song_links"
        await self.execute(
            upsert("guild_settings", "guild_id", columns),
            (
                settings.guild_id,
                settings.timezone,
                settings.default_station,
                settings.language,
                int(settings.song_links),
            ),
        )

    async def guild_settings(self, guild_id: int) -> GuildSettings:
        row = await self.fetchone(_SETTINGS + " WHERE guild_id = ?", (guild_id,))
        if not row:
            return GuildSettings(guild_id)
        return _settings(row)

    async def all_guild_settings(self) -> list[GuildSettings]:
        return [_settings(r) for r in await self.fetch(_SETTINGS)]

    async def preferred_locales(self) -> dict[int, str]:
        """{guild id: preferred locale} of the guilds whose locale is stored ("" is not)."""
        rows = await self.fetch(
            "SELECT guild_id, preferred_locale FROM guild_settings WHERE preferred_locale <> ''"
        )
        return {int(r[0]): str(r[1]) for r in rows}

    async def save_preferred_locales(self, locales: Sequence[tuple[int, str]]) -> None:
        """Store each (guild id, preferred locale) in one transaction; the guild's own settings
        stay as they are (a row is made with the defaults where it has none)."""
        statement = (
            "INSERT INTO guild_settings (guild_id, preferred_locale) VALUES (?, ?) "
            "ON CONFLICT (guild_id) DO UPDATE SET preferred_locale = excluded.preferred_locale"
        )
        if locales:
            await self.execute_atomic([(statement, pair) for pair in locales])

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
        await self.execute("DELETE FROM song_requests WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM guild_requests WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM guild_request_stations WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM song_votes WHERE guild_id = ?", (guild_id,))
        await self.execute("DELETE FROM vote_polls WHERE guild_id = ?", (guild_id,))


_SETTINGS = (
    "SELECT guild_id, timezone, default_station, language, song_links, preferred_locale "
    "FROM guild_settings"
)


def _settings(row: Sequence[Any]) -> GuildSettings:
    return GuildSettings(row[0], row[1], row[2], row[3], bool(row[4]), str(row[5]))


def _stored_ref(kind: str, text: str, number: int) -> int | str:
    """The station's name on its host as stored (checked when it was added); the number
    column for a row whose text does not read for its kind."""
    try:
        return station_ref(kind, text)
    except ValueError:
        return number
