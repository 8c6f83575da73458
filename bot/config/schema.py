"""Every key of the config file declared once: its value type (each checks and converts a raw
TOML value or raises ValueError), its default and the ``Settings`` field it fills."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..guard.patterns import UnsafePattern, compile_pattern
from ..station.source import DEFAULT_KIND, KINDS
from ..templates.model import TemplateSet
from ..templates.model import checked as checked_templates

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


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


def _int_or_str(value: Any) -> int | str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError("expected a number or a name")
    return value


def _int_within(low: int, high: int | None, message: str) -> Callable[[Any], int]:
    """A whole number from ``low`` to ``high`` (None: no upper bound); ``message`` otherwise."""

    def convert(value: Any) -> int:
        number = _int(value)
        if number < low or (high is not None and number > high):
            raise ValueError(message)
        return number

    return convert


def _one_of(
    choices: tuple[str, ...], message: str, normalise: Callable[[str], str] = str
) -> Callable[[Any], str]:
    """A string that is one of ``choices`` once ``normalise``d; ``message`` otherwise."""

    def convert(value: Any) -> str:
        text = normalise(_str(value))
        if text not in choices:
            raise ValueError(message)
        return text

    return convert


_port = _int_within(1, 65535, "expected a TCP port, 1 to 65535")
_snowflake = _int_within(0, None, "expected a Discord id (a positive number) or 0 for none")
_port_or_zero = _int_within(0, 65535, "expected a port number from 1 to 65535 (0 = off)")
_hour = _int_within(0, 23, "expected an hour from 0 to 23")
_level = _one_of(
    ("DEBUG", "INFO", "WARNING", "ERROR"), "expected DEBUG, INFO, WARNING or ERROR", str.upper
)
_mode = _one_of(("post", "card"), 'expected "post" or "card"')
_style = _one_of(("", "compact", "full"), 'expected "compact", "full" or "" (by mode)')


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError("expected a number of seconds, 0 or more")
    return float(value)


def _positive(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError("expected a number above 0")
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


def _lookup_url(value: Any) -> str:
    """A search endpoint that answers like Apple's (a path is fine): http(s), no query or
    credentials."""
    url = _str(value).strip()
    if not re.match(r"^https?://[^/\s?#@]+(/[^\s?#]*)?$", url):
        raise ValueError("expected an http(s) URL like https://itunes.apple.com/search")
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


def port_or_off(value: Any) -> int:
    """A port, 0 for off; digits in a string count too (``ONAIR_METRICS_PORT``)."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    return _port_or_zero(value)


def _slug(value: Any) -> str:
    slug = _str(value)
    if not _SLUG.match(slug):
        raise ValueError("expected a short name of lower-case letters, digits, - or _")
    return slug


def _weekday(value: Any) -> int:
    day = _str(value).strip().capitalize()
    if day not in WEEKDAYS:
        raise ValueError('expected a day of the week in English, e.g. "Friday"')
    return WEEKDAYS.index(day)


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
    # Song requests (/request): how hard OnAir may ask a station's search, shared by every
    # guild and user; and how long after a request its play is still credited to the listener.
    "requests": {
        "searches_per_second": Setting(_positive, 2.0, "request_searches_per_second"),
        "cache_seconds": Setting(_seconds, 60.0, "request_cache_seconds"),
        "credit_hours": Setting(_positive, 3.0, "request_credit_hours"),
    },
    # "Find this song": the link to a page of streaming services, found by searching the song
    # (artist and title go to that search); owners may turn it off.
    "links": {
        "enabled": Setting(_bool, True, "links_enabled"),
        "lookup_url": Setting(_lookup_url, "https://itunes.apple.com/search", "links_lookup_url"),
    },
    "metrics": {
        "port": Setting(port_or_off, 0, "metrics_port"),
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
        # radioboss (the default), azuracast, icecast or shoutcast
        "kind": Setting(_one_of(KINDS, f"expected one of {', '.join(KINDS)}"), DEFAULT_KIND),
        # checked for its kind once the whole entry is read (see loading)
        "station_id": Setting(_int_or_str),
        "key_env": Setting(_str, ""),
        "timezone": Setting(time_zone, ZoneInfo("UTC")),  # a default is not converted: a zone
        "guilds": Setting(_list_of(_snowflake), ()),
        "voice": Setting(_bool, True),  # /join may play it in voice channels
        "stream_url": Setting(_stream_url, ""),  # "" = the best listen link in its info
        "requests": Setting(_bool, False),  # listeners may /request songs (guilds can opt out)
        # follow a pushing host's change stream (AzuraCast's SSE, Icecast's ICY); false: poll
        "push": Setting(_bool, True),
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


def schema_default(section: str, key: str) -> Any:
    """The declared default of ``[section] key`` (the settings dataclasses' defaults)."""
    return SCHEMA[section][key].default
