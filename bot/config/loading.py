"""Reading the config file: every problem at once, one line each, located as TOML writes it
(``[bot]``, ``[[stations]] #2``); secrets from the environment."""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..guard.keybox import SECRET_ENV
from ..station.apikey import key_problem
from ..station.source import station_ref
from ..storage.models import AlertSubscription, RecapConfig, Subscription
from .schema import ARRAY_TABLES, REQUIRED, SCHEMA, Setting, port_or_off
from .settings import GuildConfig, PollSettings, Settings, StationConfig

TOKEN_ENV = "ONAIR_DISCORD_TOKEN"
# Wins over [metrics] port: the container image turns /healthz on for its HEALTHCHECK.
METRICS_PORT_ENV = "ONAIR_METRICS_PORT"


class ConfigError(Exception):
    """Configuration problems, phrased for the person running the bot: one line each."""

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


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
        try:
            station_id = station_ref(values["kind"], values["station_id"])
        except ValueError as error:
            problems.append(f"{where} bad value for 'station_id': {error}")
            unusable.add(values["id"])
            continue
        stations.append(
            StationConfig(
                slug=values["id"],
                name=values["name"],
                base_url=values["base_url"],
                station_id=station_id,
                kind=values["kind"],
                push=values["push"],
                key=key,
                key_env=values["key_env"],
                timezone=values["timezone"],
                guilds=values["guilds"],
                voice=values["voice"],
                stream_url=values["stream_url"],
                requests=values["requests"],
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
    if not database["path"].strip() and not (env_url or database["url"]):
        problems.append(
            "[database] path is empty: name the SQLite file OnAir keeps its data in (like "
            '"onair.sqlite3"), or set [database] url for PostgreSQL'
        )
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
            metrics_port = port_or_off(env[METRICS_PORT_ENV])
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
