"""Settings from TOML, secrets from the environment.

Every key is declared once in ``SCHEMA`` (its type, default and the field it fills); loading
reports every problem at once, one line each, located as TOML writes it (``[bot]``,
``[[stations]] #2``): an unknown key with the closest valid name, a bad value, a missing secret,
a misspelt database URL scheme. A TOML syntax error (with its line) stops at itself. Imports
nothing of the bot above it (the announcer reads ``PollSettings`` from here).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .patterns import UnsafePattern, compile_pattern
from .scheduled.recap import WEEKDAYS
from .station.apikey import key_problem
from .storage.models import AlertSubscription, Subscription
from .templates.model import TemplateSet
from .templates.model import checked as checked_templates

TOKEN_ENV = "ONAIR_DISCORD_TOKEN"
# Wins over [metrics] port: the container image turns /healthz on for its HEALTHCHECK.
METRICS_PORT_ENV = "ONAIR_METRICS_PORT"
SECRET_ENV = "ONAIR_SECRET_KEY"
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


class ConfigError(Exception):
    """Configuration problems, phrased for the person running the bot: one line each."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


# Types used in the schema: each checks and converts a raw TOML value or raises ValueError.
def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("expected a string")
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("expected a whole number")
    return value


def _port(value: Any) -> int:
    number = _int(value)
    if not 1 <= number <= 65535:
        raise ValueError("expected a TCP port, 1 to 65535")
    return number


def _snowflake(value: Any) -> int:
    number = _int(value)
    if number < 0:
        raise ValueError("expected a Discord id (a positive number) or 0 for none")
    return number


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError("expected a number of seconds, 0 or more")
    return float(value)


def time_zone(value: Any) -> ZoneInfo:
    """An IANA zone by name; ValueError (phrased for the config file) when there is none.
    The one zone check: guild admins' input goes through it too (``bot.inputs.zone``)."""
    try:
        return ZoneInfo(_str(value))
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {value!r} (use an IANA name like Europe/Berlin)"
        ) from None


def _url(value: Any) -> str:
    url = _str(value).rstrip("/")
    if not re.match(r"^https?://[^/\s?#]+", url):
        raise ValueError("expected an http(s) URL like https://c5.radioboss.fm")
    if "?" in url or "#" in url or "@" in url.split("://", 1)[1].split("/", 1)[0]:
        raise ValueError("the base URL must not carry a query or credentials")
    if "/" in url.split("://", 1)[1]:
        raise ValueError("give the server only, like https://c5.radioboss.fm (no path)")
    return url


def _stream_url(value: Any) -> str:
    """A station's stream (a path is fine, unlike base URLs): http(s), no credentials, no spaces.
    "" = the best listen link the station reports."""
    url = _str(value).strip()
    if not url:
        return ""
    if not re.match(r"^https?://[^/\s?#@]+(/[^\s#]*)?$", url):
        raise ValueError(
            "expected an http(s) stream URL like https://c5.radioboss.fm:18123/stream, "
            "with no credentials or spaces"
        )
    return url


def _port_or_off(value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    number = _int(value)
    if not 0 <= number <= 65535:
        raise ValueError("expected a port number from 1 to 65535 (0 = off)")
    return number


def _slug(value: Any) -> str:
    slug = _str(value)
    if not _SLUG.match(slug):
        raise ValueError("expected a short name of lower-case letters, digits, - or _")
    return slug


def _level(value: Any) -> str:
    level = _str(value).upper()
    if level not in {"DEBUG", "INFO", "WARNING", "ERROR"}:
        raise ValueError("expected DEBUG, INFO, WARNING or ERROR")
    return level


def _mode(value: Any) -> str:
    mode = _str(value)
    if mode not in {"post", "card"}:
        raise ValueError('expected "post" or "card"')
    return mode


def _weekday(value: Any) -> int:
    day = _str(value).strip().capitalize()
    if day not in WEEKDAYS:
        raise ValueError('expected a day of the week in English, e.g. "Friday"')
    return WEEKDAYS.index(day)


def _hour(value: Any) -> int:
    hour = _int(value)
    if not 0 <= hour <= 23:
        raise ValueError("expected an hour from 0 to 23")
    return hour


def _style(value: Any) -> str:
    style = _str(value)
    if style not in {"", "compact", "full"}:
        raise ValueError('expected "compact", "full" or "" (by mode)')
    return style


def _regex(value: Any) -> str:
    pattern = _str(value)
    try:
        compile_pattern(pattern)
    except UnsafePattern as error:
        raise ValueError(error.message) from None
    return pattern


def _templates(value: Any) -> TemplateSet | None:
    """A ``[subscriptions.template]`` table (content, title, description, footer, color and
    the ``live`` / ``autodj`` tables), every template checked as the commands check them."""
    templates = checked_templates(value)
    return None if templates.is_empty() else templates


def _list_of(item: Callable[[Any], Any]) -> Callable[[Any], tuple[Any, ...]]:
    def convert(value: Any) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise ValueError("expected a list")
        return tuple(item(v) for v in value)

    return convert


REQUIRED: Any = ...


@dataclass(frozen=True, slots=True)
class Setting:
    """One key of the config file, declared once: how its value is checked and converted, its
    default (``REQUIRED``: none), and for the plain ones the :class:`Settings` field it fills
    (``poll.x`` fills ``Settings.poll.x``). Its documentation is config.example.toml (a test
    checks every key is there). Adding a setting: one line here, one field, the example file."""

    convert: Callable[[Any], Any]
    default: Any = REQUIRED
    attr: str = ""  # "" = read by parse_settings itself (array tables, checks across keys)


SCHEMA: dict[str, dict[str, Setting]] = {
    "bot": {
        "dev_guild": Setting(_snowflake, 0, "dev_guild"),
        "default_station": Setting(_str, "", "default_station"),
        "log_level": Setting(_level, "INFO", "log_level"),
        "sync_commands": Setting(_bool, True, "sync_commands"),
        "cache_seconds": Setting(_seconds, 5.0, "cache_seconds"),
        "shard_count": Setting(_int, 0, "shard_count"),
        "shard_ids": Setting(_list_of(_int), (), "shard_ids"),
        "allowed_station_hosts": Setting(
            _list_of(_str), ("*.radioboss.fm",), "allowed_station_hosts"
        ),
        "allow_http_station_urls": Setting(_bool, False, "allow_http_station_urls"),
        # () = 443, and 80 when http is allowed
        "allowed_station_ports": Setting(_list_of(_port), (), "allowed_station_ports"),
        "allow_private_station_urls": Setting(_bool, False, "allow_private_station_urls"),
        "max_guild_stations": Setting(_int, 10, "max_guild_stations"),
    },
    "metrics": {
        "port": Setting(_port_or_off, 0, "metrics_port"),
        "host": Setting(_str, "127.0.0.1", "metrics_host"),
    },
    "database": {
        "path": Setting(_str, "onair.sqlite3", "database_path"),
        "url": Setting(_str, "", "database_url"),
        "history_days": Setting(_int, 30, "history_days"),
        "lock_timeout": Setting(_seconds, 5.0, "database_lock_timeout"),
    },
    "announcer": {
        "min_interval": Setting(_seconds, 2.0, "poll.min_interval"),
        "max_interval": Setting(_seconds, 30.0, "poll.max_interval"),
        # live shows and items of unknown length
        "steady_interval": Setting(_seconds, 10.0, "poll.steady_interval"),
        "max_backoff": Setting(_seconds, 300.0, "poll.max_backoff"),
        "concurrency": Setting(_int, 8, "concurrency"),
        # a play not delivered by then (or by its end) is dropped
        "max_delivery_age": Setting(_seconds, 900.0, "max_delivery_age"),
        # a send in flight holds its delivery this long, renewed
        "delivery_lease": Setting(_seconds, 30.0, "delivery_lease"),
        # PostgreSQL fleets: a station's poller holds its watch lease this long, renewed
        "watch_lease": Setting(_seconds, 3.0, "watch_lease"),
        # alerts: a station not answering or not playing this long is reported down
        "offline_after": Setting(_seconds, 120.0, "offline_after"),
    },
    "stations": {
        "id": Setting(_slug),
        "name": Setting(_str),
        "base_url": Setting(_url),
        "station_id": Setting(_int),
        "key_env": Setting(_str, ""),
        "timezone": Setting(time_zone, ZoneInfo("UTC")),  # a default is not converted: a zone
        "guilds": Setting(_list_of(_snowflake), ()),
        "voice": Setting(_bool, True),  # /join may play it in voice channels
        "stream_url": Setting(_stream_url, ""),  # "" = the best listen link in its info
    },
    "guilds": {
        "id": Setting(_snowflake),
        "default_station": Setting(_str, ""),
        # Stations whose live shows become the guild's Discord Scheduled Events (/onair events)
        "live_events": Setting(_list_of(_str), ()),
        # OnAir shows what plays as its voice channel's status (/onair voice status); unset:
        # as the guild's admin chose
        "voice_status": Setting(_bool, None),
    },
    "subscriptions": {
        "guild": Setting(_snowflake),
        "channel": Setting(_snowflake),
        "station": Setting(_str),
        "mode": Setting(_mode, "post"),
        "style": Setting(_style, ""),
        "mention_role": Setting(_snowflake, 0),
        "min_seconds": Setting(_seconds, 0.0),
        "skip_item_types": Setting(_list_of(_str), ()),
        "skip_pattern": Setting(_regex, ""),
        "announce_live": Setting(_bool, True),
        # [subscriptions.template]: the announcement's wording (none: the built-in layout, or
        # what an admin set with /onair template)
        "template": Setting(_templates, None),
    },
    # Live and offline alerts of a station in a guild (/onair alerts): where, whom live shows ping.
    "alerts": {
        "guild": Setting(_snowflake),
        "station": Setting(_str),
        "channel": Setting(_snowflake),
        "role": Setting(_snowflake, 0),  # 0: no ping
    },
    # A guild's weekly recap (/onair recap): the day and hour in the guild's time zone.
    "recaps": {
        "guild": Setting(_snowflake),
        "station": Setting(_str),
        "channel": Setting(_snowflake),
        "day": Setting(_weekday, 0),
        "hour": Setting(_hour, 20),
    },
}
ARRAY_TABLES = {"stations", "guilds", "subscriptions", "alerts", "recaps"}


def _default(section: str, key: str) -> Any:
    return SCHEMA[section][key].default


@dataclass(frozen=True, slots=True)
class PollSettings:
    """How often the announcer polls a station (see ``bot.announcer.policy``)."""

    min_interval: float = _default("announcer", "min_interval")  # bar one re-poll at a switch
    max_interval: float = _default("announcer", "max_interval")
    steady_interval: float = _default("announcer", "steady_interval")
    margin: float = 0.25  # after the predicted end, while no switch has been observed yet
    max_backoff: float = _default("announcer", "max_backoff")
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
    station_id: int
    key: str | None = field(default=None, repr=False)
    key_env: str = ""
    timezone: ZoneInfo = field(default_factory=lambda: ZoneInfo("UTC"))
    guilds: tuple[int, ...] = ()
    owner_guild: int = 0  # set for a station a guild added itself (only that guild sees it)
    voice: bool = True  # may be played in voice (guild stations: off until an admin opts in)
    stream_url: str = ""  # "" = the best listen link of the station's info

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
class RecapConfig:
    """A ``[[recaps]]`` entry: a guild's weekly recap as the owner configured it."""

    guild_id: int
    channel_id: int
    station: str
    weekday: int  # 0 = Monday
    hour: int


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the bot runs with. Defaults (and meanings) are declared in ``SCHEMA``."""

    token: str | None = field(default=None, repr=False)
    dev_guild: int = _default("bot", "dev_guild")
    default_station: str = _default("bot", "default_station")
    log_level: str = _default("bot", "log_level")
    sync_commands: bool = _default("bot", "sync_commands")
    cache_seconds: float = _default("bot", "cache_seconds")
    database_path: str = _default("database", "path")
    database_url: str = field(default=_default("database", "url"), repr=False)
    history_days: int = _default("database", "history_days")
    database_lock_timeout: float = _default("database", "lock_timeout")
    poll: PollSettings = field(default_factory=PollSettings)
    concurrency: int = _default("announcer", "concurrency")
    max_delivery_age: float = _default("announcer", "max_delivery_age")
    delivery_lease: float = _default("announcer", "delivery_lease")
    watch_lease: float = _default("announcer", "watch_lease")
    offline_after: float = _default("announcer", "offline_after")
    shard_count: int = _default("bot", "shard_count")
    shard_ids: tuple[int, ...] = _default("bot", "shard_ids")
    allowed_station_hosts: tuple[str, ...] = _default("bot", "allowed_station_hosts")
    allow_http_station_urls: bool = _default("bot", "allow_http_station_urls")
    allowed_station_ports: tuple[int, ...] = _default("bot", "allowed_station_ports")
    allow_private_station_urls: bool = _default("bot", "allow_private_station_urls")
    max_guild_stations: int = _default("bot", "max_guild_stations")
    metrics_host: str = _default("metrics", "host")
    metrics_port: int = _default("metrics", "port")
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


def _closest(name: str, options: Mapping[str, Any] | list[str]) -> str:
    matches = difflib.get_close_matches(name, list(options), n=1, cutoff=0.5)
    return f"; did you mean '{matches[0]}'?" if matches else f"; valid keys: {', '.join(options)}"


_DATABASE_SCHEMES = ("postgresql://", "postgres://")


def _database_url(url: str, where: str, problems: list[str]) -> None:
    """A PostgreSQL URL or nothing: a misspelt scheme must not become a SQLite file name. Only
    the scheme is echoed (the rest may hold a password)."""
    if not url or url.startswith(_DATABASE_SCHEMES):
        return
    scheme = url.split("://", 1)[0] + "://" if "://" in url else ""
    if not scheme or len(scheme) > 24:
        problems.append(f"{where}: expected a postgresql:// URL")
        return
    hint = difflib.get_close_matches(scheme, _DATABASE_SCHEMES, n=1, cutoff=0.6)
    problems.append(
        f"{where}: unsupported scheme '{scheme}'; "
        + (f"did you mean '{hint[0]}'? " if hint else "")
        + "OnAir speaks PostgreSQL (postgresql://) or SQLite ([database] path, a file)"
    )


def _table(
    where: str, raw: Any, schema: dict[str, Setting], problems: list[str]
) -> dict[str, Any] | None:
    """The table's values, defaults filled in; each problem is added to ``problems``. None when
    the table cannot be used (not a table, or a required key missing or bad)."""
    if not isinstance(raw, dict):
        problems.append(f"{where} must be a table")
        return None
    for key in raw:
        if key not in schema:
            problems.append(f"{where} unknown key '{key}'{_closest(key, schema)}")
    values: dict[str, Any] = {}
    usable = True
    for key, setting in schema.items():
        convert, default = setting.convert, setting.default
        if key not in raw:
            if default is REQUIRED:
                problems.append(f"{where} needs '{key}'")
                usable = False
            values[key] = default
            continue
        try:
            values[key] = convert(raw[key])
        except ValueError as error:
            problems.append(f"{where} bad value for '{key}': {error}")
            usable = usable and default is not REQUIRED
            values[key] = default
    return values if usable else None


def _place(name: str, index: int | None = None) -> str:
    """Where a problem is, as TOML writes it: ``[bot]`` or ``[[stations]] #2`` (1-based)."""
    return f"[{name}]" if index is None else f"[[{name}]] #{index + 1}"


def parse_settings(
    text: str, env: Mapping[str, str] | None = None, *, source: str = "config"
) -> Settings:
    """Parse TOML text into :class:`Settings`; secrets come from ``env``. Every problem found is
    reported at once (one line each, in :attr:`ConfigError.problems`)."""
    env = os.environ if env is None else env
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source} is not valid TOML: {error}") from None
    problems: list[str] = []
    for section in raw:
        if section not in SCHEMA:
            problems.append(f"unknown section [{section}]{_closest(section, SCHEMA)}")
    tables: dict[str, dict[str, Any]] = {}
    for name in SCHEMA:
        if name in ARRAY_TABLES:
            continue
        values = _table(_place(name), raw.get(name, {}), SCHEMA[name], problems)
        tables[name] = values or {key: setting.default for key, setting in SCHEMA[name].items()}
    arrays: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    unusable: set[str] = set()  # ids of [[stations]] entries dropped for a problem of their own
    for name in ARRAY_TABLES:
        entries = raw.get(name, [])
        if not isinstance(entries, list):
            problems.append(f"[{name}] must be written as [[{name}]] (an array of tables)")
            entries = []
        arrays[name] = []
        for index, entry in enumerate(entries):
            values = _table(_place(name, index), entry, SCHEMA[name], problems)
            if values is not None:
                arrays[name].append((index, values))
            elif name == "stations" and isinstance(entry, dict):
                # its own problem is reported; a name of it elsewhere is not a second one
                unusable.add(str(entry.get("id", "")))

    stations: list[StationConfig] = []
    for index, values in arrays["stations"]:
        where = _place("stations", index)
        key: str | None = None
        if values["key_env"]:
            key = env.get(values["key_env"]) or None
            if key is None:
                problems.append(
                    f"{where} key_env: ${values['key_env']} is not set "
                    f"(station '{values['id']}' reads its API key from it)"
                )
            elif (problem := key_problem(key)) is not None:
                problems.append(
                    f"{where} key_env: the key in ${values['key_env']} {problem} "
                    f"(station '{values['id']}'); set it again from the station's settings"
                )
                key = None
        if any(s.slug == values["id"] for s in stations):
            problems.append(f"{where} bad value for 'id': '{values['id']}' is used twice")
            continue
        stations.append(
            StationConfig(
                slug=values["id"],
                name=values["name"],
                base_url=values["base_url"],
                station_id=values["station_id"],
                key=key,
                key_env=values["key_env"],
                timezone=values["timezone"],
                guilds=values["guilds"],
                voice=values["voice"],
                stream_url=values["stream_url"],
            )
        )
    slugs = {s.slug for s in stations}

    def known(slug: str, where: str) -> str:
        """One problem per cause: a name of a station whose own entry is broken is not a
        second problem (that entry's line says what to fix)."""
        if slug and slug not in slugs and slug not in unusable:
            if slugs:
                hint = _closest(slug, sorted(slugs)).replace("valid keys", "defined stations")
            else:
                hint = "; no [[stations]] entry is defined"
            problems.append(f"{where} names station '{slug}', which is not defined{hint}")
        return slug

    bot = tables["bot"]
    known(bot["default_station"], "[bot] default_station")
    guilds = tuple(
        GuildConfig(
            v["id"],
            known(v["default_station"], f"{_place('guilds', i)} default_station"),
            tuple(known(s, f"{_place('guilds', i)} live_events") for s in v["live_events"]),
            v["voice_status"],
        )
        for i, v in arrays["guilds"]
    )
    subscriptions = tuple(
        Subscription(
            0,
            guild_id=v.pop("guild"),
            channel_id=v.pop("channel"),
            templates=v.pop("template"),
            **{**v, "station": known(v["station"], f"{_place('subscriptions', i)} station")},
        )
        for i, v in arrays["subscriptions"]
    )
    alerts = tuple(
        AlertSubscription(
            v["guild"],
            known(v["station"], f"{_place('alerts', i)} station"),
            v["channel"],
            v["role"],
        )
        for i, v in arrays["alerts"]
    )
    recaps = tuple(
        RecapConfig(
            v["guild"],
            v["channel"],
            known(v["station"], f"{_place('recaps', i)} station"),
            v["day"],
            v["hour"],
        )
        for i, v in arrays["recaps"]
    )
    announcer = tables["announcer"]
    if announcer["min_interval"] > announcer["max_interval"]:
        problems.append("[announcer] bad value: min_interval is above max_interval")
    database = tables["database"]
    if "://" in database["path"]:
        problems.append(
            "[database] path: a SQLite file name, not a URL (a PostgreSQL URL goes in "
            "[database] url or ONAIR_DATABASE_URL)"
        )
    env_url = env.get("ONAIR_DATABASE_URL") or ""
    _database_url(env_url, "ONAIR_DATABASE_URL", problems)
    _database_url(database["url"], "[database] url", problems)
    metrics = tables["metrics"]
    if metrics["host"] not in ("127.0.0.1", "::1", "localhost"):
        problems.append("[metrics] bad value for 'host': metrics are served on loopback only")
    if bot["max_guild_stations"] < 0:
        problems.append("[bot] bad value for 'max_guild_stations': must be 0 or more")
    metrics_port = metrics["port"]
    if env.get(METRICS_PORT_ENV):
        try:
            metrics_port = _port_or_off(env[METRICS_PORT_ENV])
        except ValueError as error:
            problems.append(f"{METRICS_PORT_ENV}: {error}")
    if bot["shard_ids"] and not bot["shard_count"]:
        problems.append("[bot] bad value: shard_ids needs shard_count")
    if any(not 0 <= i < bot["shard_count"] for i in bot["shard_ids"]):
        problems.append("[bot] bad value for 'shard_ids': each must be below shard_count")
    if problems:
        raise ConfigError(*(f"{source}: {problem}" for problem in problems))
    plain: dict[str, Any] = {}
    poll: dict[str, Any] = {}
    for name, table in tables.items():
        for key, setting in SCHEMA[name].items():
            if setting.attr.startswith("poll."):
                poll[setting.attr.removeprefix("poll.")] = table[key]
            elif setting.attr:
                plain[setting.attr] = table[key]
    return Settings(
        **{
            **plain,
            "database_url": env_url or database["url"],
            "metrics_port": metrics_port,
            "concurrency": max(1, announcer["concurrency"]),
            "delivery_lease": max(1.0, announcer["delivery_lease"]),
            "watch_lease": max(0.5, announcer["watch_lease"]),
        },
        poll=PollSettings(**poll),
        token=env.get(TOKEN_ENV) or None,
        secret_key=env.get(SECRET_ENV) or None,
        stations=tuple(stations),
        guilds=guilds,
        subscriptions=subscriptions,
        alerts=alerts,
        recaps=recaps,
    )


def load_settings(path: str | Path, env: Mapping[str, str] | None = None) -> Settings:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"config file {file} not found (copy config.example.toml to start)"
        ) from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config file {file}: {error}") from None
    return parse_settings(text, env, source=str(file))
