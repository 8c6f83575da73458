"""Which stations a guild can use, one shared client per station, and last-known fallbacks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import aiohttp

from .config import Settings, StationConfig
from .errors import UnknownStation
from .station import (
    CacheTimes,
    StationClient,
    StationInfo,
    StationResponseError,
    StationUnavailable,
)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Station info as shown to a user; ``stale`` when it is the last known state."""

    info: StationInfo
    stale: bool = False

    def age_seconds(self, now: datetime | None = None) -> float:
        return ((now or datetime.now(UTC)) - self.info.fetched_at).total_seconds()


class StationRegistry:
    """Owns one :class:`StationClient` per configured station, all on the bot's one session."""

    def __init__(self, settings: Settings, session: aiohttp.ClientSession) -> None:
        self.settings = settings
        self.session = session
        cache = CacheTimes(info=settings.cache_seconds)
        self.clients: dict[str, StationClient] = {
            station.slug: StationClient(
                station.base_url,
                station.station_id,
                station.key,
                session=session,
                zone=station.timezone,
                cache=cache,
            )
            for station in settings.stations
        }
        self._defaults = {g.id: g.default_station for g in settings.guilds if g.default_station}

    def visible(self, guild_id: int | None) -> list[StationConfig]:
        return [s for s in self.settings.stations if s.visible_in(guild_id)]

    def resolve(self, guild_id: int | None, name: str | None) -> StationConfig:
        """The station a command asked for, else the guild's default, else the only one."""
        visible = self.visible(guild_id)
        if name:
            wanted = name.strip().casefold()
            for station in visible:
                if wanted in (station.slug.casefold(), station.name.casefold()):
                    return station
            raise UnknownStation(
                "I don't know that station here. Pick one from the list as you type."
            )
        for slug in (self._defaults.get(guild_id or 0), self.settings.default_station):
            default = next((s for s in visible if s.slug == slug), None)
            if default is not None:
                return default
        if len(visible) == 1:
            return visible[0]
        if not visible:
            raise UnknownStation("No station is set up for this server yet; ask an admin.")
        raise UnknownStation("This server follows several stations: choose one with `station`.")

    def client(self, station: StationConfig) -> StationClient:
        return self.clients[station.slug]

    async def snapshot(self, station: StationConfig) -> Snapshot:
        """Fresh-enough info; when the station fails, the last known state marked stale."""
        client = self.client(station)
        try:
            info = await client.info()
        except (StationUnavailable, StationResponseError):
            if client.last_info is None:
                raise
            return Snapshot(client.last_info, stale=True)
        age = (datetime.now(UTC) - info.fetched_at).total_seconds()
        return Snapshot(info, stale=age > client.cache_times.info + 1)
