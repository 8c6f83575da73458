"""Voice: where each guild's player is (rejoined after a restart) and its voice settings."""

from __future__ import annotations

from .models import GuildVoice, VoiceSession
from .primitives import Row, StoragePrimitives, upsert

_GUILD_VOICE = (
    "SELECT guild_id, home_channel, leave_when_empty, station, channel_status FROM guild_voice"
)


def _guild_voice(row: Row) -> GuildVoice:
    return GuildVoice(int(row[0]), int(row[1]), float(row[2]), str(row[3]), bool(row[4]))


class VoiceStore(StoragePrimitives):
    """Voice sessions, guild voice settings, stations' voice switch."""

    async def set_guild_station_voice(
        self, guild_id: int, slug: str, *, voice: bool, stream_url: str = ""
    ) -> bool:
        """Turn voice on or off for a station the guild added (re-adding it keeps the choice).
        False when the guild has no such station."""
        changed = await self.execute(
            "UPDATE guild_stations SET voice = ?, stream_url = ? WHERE guild_id = ? AND slug = ?",
            (int(voice), stream_url, guild_id, slug),
        )
        return changed > 0

    async def save_voice_session(self, session: VoiceSession, *, now: float) -> None:
        """Where the guild's player is (one per guild): rejoined after a restart."""
        await self.execute(
            upsert("voice_sessions", "guild_id", "channel_id, station, updated_at"),
            (session.guild_id, session.channel_id, session.station, now),
        )

    async def remove_voice_session(self, guild_id: int) -> bool:
        return await self.execute("DELETE FROM voice_sessions WHERE guild_id = ?", (guild_id,)) > 0

    async def voice_sessions(self) -> list[VoiceSession]:
        rows = await self.fetch(
            "SELECT guild_id, channel_id, station FROM voice_sessions ORDER BY guild_id"
        )
        return [VoiceSession(int(r[0]), int(r[1]), str(r[2])) for r in rows]

    async def save_guild_voice(self, voice: GuildVoice) -> None:
        await self.execute(
            upsert(
                "guild_voice", "guild_id", "home_channel, leave_when_empty, station, channel_status"
            ),
            (
                voice.guild_id,
                voice.home_channel,
                voice.leave_when_empty,
                voice.station,
                int(voice.channel_status),
            ),
        )

    async def guild_voice(self, guild_id: int) -> GuildVoice:
        row = await self.fetchone(_GUILD_VOICE + " WHERE guild_id = ?", (guild_id,))
        return GuildVoice(guild_id) if row is None else _guild_voice(row)

    async def all_guild_voice(self) -> list[GuildVoice]:
        return [_guild_voice(r) for r in await self.fetch(_GUILD_VOICE + " ORDER BY guild_id")]
