"""Settings from TOML, secrets from the environment.

Every key is declared once in ``SCHEMA`` (its type, default and the field it fills); loading
reports every problem at once, one line each, located as TOML writes it (``[bot]``,
``[[stations]] #2``): an unknown key with the closest valid name, a bad value, a missing secret,
a misspelt database URL scheme. A TOML syntax error (with its line) stops at itself. Imports
nothing of the bot above it (the announcer reads ``PollSettings`` from here).
"""

from ..guard.keybox import SECRET_ENV
from ..storage.models import RecapConfig
from .loading import (
    METRICS_PORT_ENV,
    TOKEN_ENV,
    ConfigError,
    load_settings,
    parse_settings,
)
from .schema import ARRAY_TABLES, SCHEMA, Setting, time_zone
from .settings import GuildConfig, PollSettings, Settings, StationConfig

__all__ = [
    "ARRAY_TABLES",
    "METRICS_PORT_ENV",
    "SCHEMA",
    "SECRET_ENV",
    "TOKEN_ENV",
    "ConfigError",
    "GuildConfig",
    "PollSettings",
    "RecapConfig",
    "Setting",
    "Settings",
    "StationConfig",
    "load_settings",
    "parse_settings",
    "time_zone",
]
