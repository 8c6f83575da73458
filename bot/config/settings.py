"""What the bot runs with, as frozen dataclasses whose defaults come from ``SCHEMA``."""

from __future__ import annotations

from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from ..storage.models import AlertSubscription, RecapConfig, Subscription
from .schema import schema_default


@dataclass(frozen=True, slots=True)
class PollSettings:
    """How often the announcer polls a station (see ``bot.announcer.policy``)."""

    min_interval: float = schema_default("announcer", "min_interval")  # bar one re-poll at a switch
    max_interval: float = schema_default("announcer", "max_interval")
    steady_interval: float = schema_default("announcer", "steady_interval")
    margin: float = 0.25  # after the predicted end, while no switch has been observed yet
    max_backoff: float = schema_default("announcer", "max_backoff")
    failure_base: float = 2.0
    breaker_threshold: int = 3  # consecutive failures before a station counts as unreachable
    # Switches of items with a known length.
    switch_delay: float = 0.8  # aim: a switch is found at most this long after it happened ...
    late_share: float = 0.03  # ... except this share of the station's recent switches
    switch_window: int = 64  # recent (switch - predicted end) offsets kept per station
    max_switch_polls: float = 2.0  # mean polls per switch the plan may cost at most
    learning_switches: int = 10  # until this many switches are seen, the plan ...
    learning_margin: float = 0.25  # ... also catches switches this much earlier than any seen
    # Live shows and items of unknown length.
    end_interval: float = 2.5  # cadence once such an item's end is near
    end_lead: float = 1.5  # an airing may end this much sooner (or later) than any seen, ...
    end_share: float = 0.15  # ... or this share of its length over the root of the airings seen
    length_window: int = 8  # lengths kept per title
    max_titles: int = 32  # titles whose lengths are kept per station


@dataclass(frozen=True, slots=True)
class StationConfig:
    slug: str
    name: str
    base_url: str
    station_id: int | str  # a number, an AzuraCast shortcode or an Icecast mount (``kind``)
    key: str | None = field(default=None, repr=False)
    key_env: str = ""
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    guilds: tuple[int, ...] = ()
    owner_guild: int = 0  # set for a station a guild added itself (only that guild sees it)
    voice: bool = True  # may be played in voice (guild stations: off until an admin opts in)
    stream_url: str = ""  # "" = the best listen link of the station's info
    requests: bool = False  # listeners may /request songs (the owner's choice; guilds opt out)
    kind: str = "radioboss"  # the host's kind: radioboss, azuracast, icecast or shoutcast
    push: bool = True  # follow the host's own change stream when it has one (else poll only)

    def visible_in(self, guild_id: int | None) -> bool:
        if self.owner_guild:
            return guild_id == self.owner_guild
        return not self.guilds or (guild_id is not None and guild_id in self.guilds)


@dataclass(frozen=True, slots=True)
class GuildConfig:
    id: int
    default_station: str = ""
    live_events: tuple[str, ...] = ()
    voice_status: bool | None = None


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the bot runs with. Defaults (and meanings) are declared in ``SCHEMA``."""

    token: str | None = field(default=None, repr=False)
    dev_guild: int = schema_default("bot", "dev_guild")
    default_station: str = schema_default("bot", "default_station")
    log_level: str = schema_default("bot", "log_level")
    sync_commands: bool = schema_default("bot", "sync_commands")
    cache_seconds: float = schema_default("bot", "cache_seconds")
    database_path: str = schema_default("database", "path")
    database_url: str = field(default=schema_default("database", "url"), repr=False)
    history_days: int = schema_default("database", "history_days")
    database_lock_timeout: float = schema_default("database", "lock_timeout")
    poll: PollSettings = field(default_factory=PollSettings)
    concurrency: int = schema_default("announcer", "concurrency")
    max_delivery_age: float = schema_default("announcer", "max_delivery_age")
    delivery_lease: float = schema_default("announcer", "delivery_lease")
    watch_lease: float = schema_default("announcer", "watch_lease")
    offline_after: float = schema_default("announcer", "offline_after")
    shard_count: int = schema_default("bot", "shard_count")
    shard_ids: tuple[int, ...] = schema_default("bot", "shard_ids")
    allowed_station_hosts: tuple[str, ...] = schema_default("bot", "allowed_station_hosts")
    allow_http_station_urls: bool = schema_default("bot", "allow_http_station_urls")
    allowed_station_ports: tuple[int, ...] = schema_default("bot", "allowed_station_ports")
    allow_private_station_urls: bool = schema_default("bot", "allow_private_station_urls")
    max_guild_stations: int = schema_default("bot", "max_guild_stations")
    request_searches_per_second: float = schema_default("requests", "searches_per_second")
    request_cache_seconds: float = schema_default("requests", "cache_seconds")
    request_credit_hours: float = schema_default("requests", "credit_hours")
    links_enabled: bool = schema_default("links", "enabled")
    links_lookup_url: str = schema_default("links", "lookup_url")
    metrics_host: str = schema_default("metrics", "host")
    metrics_port: int = schema_default("metrics", "port")
    secret_key: str | None = field(default=None, repr=False)
    stations: tuple[StationConfig, ...] = ()
    guilds: tuple[GuildConfig, ...] = ()
    subscriptions: tuple[Subscription, ...] = ()  # from the config file (id 0 until stored)
    alerts: tuple[AlertSubscription, ...] = ()  # from the config file, stored at each start
    recaps: tuple[RecapConfig, ...] = ()  # from the config file, stored at each start

    def station(self, slug: str) -> StationConfig | None:
        return next((s for s in self.stations if s.slug == slug), None)

    def handles_guild(self, guild_id: int) -> bool:
        """Whether this process's shards include the guild (Discord's shard formula)."""
        if not self.shard_count or not self.shard_ids:
            return True
        return (guild_id >> 22) % self.shard_count in self.shard_ids
