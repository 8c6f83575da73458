"""Which stations a guild can use, one shared client per station, and last-known fallbacks."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import aiohttp
from yarl import URL

from ..config import Settings, StationConfig
from ..errors import UnknownStation
from ..guard.keybox import KeyBox
from ..guard.netguard import HostPolicy, check_target, policy_for, trusted_hosts
from ..history.playlog import PlayRecorder
from ..station import (
    CacheTimes,
    RequestsClient,
    StationClient,
    StationInfo,
    StationResponseError,
    StationUnavailable,
)
from ..station.hosts import SOURCES, requests_class, source_class
from ..station.source import Feature, NotOffered
from ..storage import GuildStation, Storage
from ..util.hooks import Hook
from ..util.i18n import N_

_LOGGER = logging.getLogger("onair.stations")


def guild_slug(guild_id: int, slug: str) -> str:
    """Guild stations live in one namespace with the config's: prefix them with the guild."""
    return f"g{guild_id}-{slug}"


def short_slug(station: StationConfig) -> str:
    prefix = f"g{station.owner_guild}-"
    return station.slug.removeprefix(prefix) if station.owner_guild else station.slug


@dataclass(frozen=True, slots=True)
class HostState:
    """A station's host as an admin reads it: its kind and, for a host that pushes its
    changes, whether its stream is connected now (None: the host does not push)."""

    kind: str
    push_live: bool | None = None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Station info as shown to a user; ``stale`` when it is the last known state."""

    info: StationInfo
    stale: bool = False


def _age(info: StationInfo) -> float:
    return (datetime.now(UTC) - info.fetched_at).total_seconds()


def _fresh(info: StationInfo | None, ttl: float) -> bool:
    return info is not None and _age(info) <= ttl


class StationRegistry:
    """One :class:`StationClient` per station (config and guild-added), all on one session."""

    def __init__(
        self,
        settings: Settings,
        session: aiohttp.ClientSession,
        *,
        shared_info: Hook[Callable[[StationClient], Awaitable[StationInfo | None]]] | None = None,
    ) -> None:
        """``shared_info``: bound by the announcer in a fleet, to read the info another process
        polled for a station instead of asking the station again."""
        self.settings = settings
        self.session = session
        self.shared_info = shared_info
        self.policy: HostPolicy = policy_for(
            settings.allowed_station_hosts,
            allow_http=settings.allow_http_station_urls,
            allow_private=settings.allow_private_station_urls,
            allowed_ports=settings.allowed_station_ports,
        )
        # The owner's config stations' hosts: contacted as configured (their redirects are not).
        self.trusted_hosts = trusted_hosts([s.base_url for s in settings.stations])
        self._cache = CacheTimes(info=settings.cache_seconds)
        self._stations: dict[str, StationConfig] = {s.slug: s for s in settings.stations}
        self.clients: dict[str, StationClient] = {
            s.slug: self._client(s, guarded=False) for s in settings.stations
        }
        self._defaults = {g.id: g.default_station for g in settings.guilds if g.default_station}
        self.recorder: PlayRecorder | None = None
        self._requests: dict[tuple[str, str, int | str], RequestsClient] = {}

    def _guard(self, *, guarded: bool) -> Callable[[URL], None]:
        """The check of a station's every request and redirect, against the policy of today
        (``guarded``: a guild's station, whose host the owner did not configure)."""
        trusted = frozenset() if guarded else self.trusted_hosts

        def guard(url: URL) -> None:
            check_target(url, self.policy, trusted_hosts=trusted)

        return guard

    def _client(self, station: StationConfig, *, guarded: bool) -> StationClient:
        """The station's client, of its host's kind, whose every info is offered to the play
        history (plays are recorded whenever the station is polled, by a command or a watch)."""
        guard = self._guard(guarded=guarded)
        client = source_class(station.kind)(
            station.base_url,
            station.station_id,
            station.key,
            session=self.session,
            zone=station.timezone,
            cache=self._cache,
            redirect_guard=guard,
            url_guard=guard,
        )
        client.push_enabled = station.push
        slug = station.slug

        async def record(info: StationInfo) -> None:
            if self.recorder is not None:
                await self.recorder.observe(slug, info)

        client.on_info = record
        return client

    def requests_client(self, station: StationConfig) -> RequestsClient:
        """The station's song-request endpoints on the shared session, guarded like its API
        client (a guild station's every request against today's policy)."""
        identity = (station.slug, station.base_url, station.station_id)
        client = self._requests.get(identity)
        if client is None:
            guard = self._guard(guarded=bool(station.owner_guild))
            client = requests_class(station.kind)(
                station.base_url,
                station.station_id,
                session=self.session,
                url_guard=guard,
                key=station.key,
            )
            self._requests[identity] = client
        return client

    def guest_client(
        self, base_url: str, station_id: int | str, key: str | None, *, kind: str = "radioboss"
    ) -> StationClient:
        """A client for validating a station a guild is adding (guarded like guild stations)."""
        probe = StationConfig("probe", "probe", base_url, station_id, key=key, kind=kind)
        client = self._client(probe, guarded=True)
        client.on_info = None  # not a station of anyone's yet: nothing to record
        return client

    def record_plays(self, storage: Storage) -> None:
        """From now on every station's new plays go into the history in ``storage``."""
        self.recorder = PlayRecorder(storage)

    # Guild stations ---------------------------------------------------------------------

    async def load(self, storage: Storage, keybox: KeyBox) -> None:
        self.record_plays(storage)
        for stored in await storage.guild_stations():
            key = keybox.decrypt(stored.key_cipher) if stored.key_cipher else None
            if stored.key_cipher and key is None:
                _LOGGER.warning("cannot decrypt the key of a station of guild %s", stored.guild_id)
            if stored.kind not in SOURCES:
                _LOGGER.warning(
                    "a station of guild %s is of kind %r, which this OnAir cannot read; left out",
                    stored.guild_id,
                    stored.kind,
                )
                continue
            self.add_guild_station(stored, key)
        for guild in await storage.all_guild_settings():
            if guild.default_station:
                self._defaults[guild.guild_id] = guild.default_station

    def add_guild_station(self, stored: GuildStation, key: str | None) -> StationConfig:
        try:
            zone = ZoneInfo(stored.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            zone = ZoneInfo("UTC")
        slug = guild_slug(stored.guild_id, stored.slug)
        previous = self._stations.get(slug)  # re-added: storage kept its voice choice
        station = StationConfig(
            slug=slug,
            name=stored.name,
            base_url=stored.base_url,
            station_id=stored.station_id,
            key=key,
            timezone=zone,
            owner_guild=stored.guild_id,
            voice=stored.voice or (previous is not None and previous.voice),
            stream_url=stored.stream_url or (previous.stream_url if previous else ""),
            kind=stored.kind,
        )
        self._stations[station.slug] = station
        self.clients[station.slug] = self._client(station, guarded=True)
        return station

    def set_voice(self, slug: str, *, voice: bool, stream_url: str = "") -> StationConfig | None:
        """A guild station's voice opt-in changed (already stored)."""
        station = self._stations.get(slug)
        if station is None:
            return None
        station = replace(station, voice=voice, stream_url=stream_url)
        self._stations[slug] = station
        return station

    def remove_guild_station(self, slug: str) -> None:
        self._stations.pop(slug, None)
        self.clients.pop(slug, None)
        if self.recorder is not None:
            self.recorder.forget(slug)

    def set_default(self, guild_id: int, slug: str) -> None:
        if slug:
            self._defaults[guild_id] = slug
        else:
            self._defaults.pop(guild_id, None)

    # Lookups ----------------------------------------------------------------------------

    def station(self, slug: str) -> StationConfig | None:
        return self._stations.get(slug)

    def visible(self, guild_id: int | None) -> list[StationConfig]:
        return [s for s in self._stations.values() if s.visible_in(guild_id)]

    def resolve(self, guild_id: int | None, name: str | None) -> StationConfig:
        """The station a command asked for, else the guild's default, else the only one."""
        visible = self.visible(guild_id)
        if name:
            wanted = name.strip().casefold()
            for station in visible:
                names = (
                    station.slug.casefold(),
                    short_slug(station).casefold(),
                    station.name.casefold(),
                )
                if wanted in names:
                    return station
            raise UnknownStation(
                N_("I don't know that station here. Pick one from the list as you type.")
            )
        for slug in (self._defaults.get(guild_id or 0), self.settings.default_station):
            default = next((s for s in visible if slug and slug in (s.slug, short_slug(s))), None)
            if default is not None:
                return default
        if len(visible) == 1:
            return visible[0]
        if not visible:
            raise UnknownStation(N_("No station is set up for this server yet; ask an admin."))
        raise UnknownStation(N_("This server follows several stations: choose one with `station`."))

    def client(self, station: StationConfig) -> StationClient:
        return self.clients[station.slug]

    # What each station's host offers ------------------------------------------------------

    def offers(self, station: StationConfig, feature: Feature) -> bool:
        """Whether the station's host has ``feature`` (a command lacking it is not offered)."""
        return self.client(station).offers(feature)

    def require(self, station: StationConfig, feature: Feature) -> None:
        """NotOffered (one polite line naming the host's kind) when the host lacks ``feature``;
        checked before a command defers, so the answer is private and at once."""
        client = self.client(station)
        if not client.offers(feature):
            raise NotOffered(what=feature.value, kind=client.kind)

    def offering(self, guild_id: int | None, feature: Feature) -> list[StationConfig]:
        """The stations visible in the guild whose host has ``feature`` (autocompletes)."""
        return [s for s in self.visible(guild_id) if self.offers(s, feature)]

    def host_state(self, station: StationConfig) -> HostState:
        client = self.client(station)
        return HostState(client.kind, client.push_live if client.offers(Feature.PUSH) else None)

    async def _shared_info(self, client: StationClient) -> StationInfo | None:
        """Best effort: without it the command asks the station as a single process does."""
        read = self.shared_info.target if self.shared_info is not None else None
        if read is None:
            return None
        try:
            return await read(client)
        except Exception as error:
            _LOGGER.warning("could not read the shared station state (%s)", type(error).__name__)
            return None

    async def snapshot(self, station: StationConfig) -> Snapshot:
        """Fresh-enough info; when the station fails, the last known state marked stale.

        In a fleet, info the station's poller (another process) stored within the cache time
        answers without asking the station, and is the last known state when it is newer."""
        client = self.client(station)
        shared = await self._shared_info(client)
        ttl = client.cache_times.info
        if shared is not None and _age(shared) <= ttl and not _fresh(client.last_info, ttl):
            return Snapshot(shared)
        try:
            info = await client.info()
        except (StationUnavailable, StationResponseError):
            known = max(
                (i for i in (client.last_info, shared) if i is not None),
                key=lambda i: i.fetched_at,
                default=None,
            )
            if known is None:
                raise
            return Snapshot(known, stale=True)
        age = (datetime.now(UTC) - info.fetched_at).total_seconds()
        return Snapshot(info, stale=age > client.cache_times.info + 1)
