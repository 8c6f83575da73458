"""Persistence behind one interface: SQLite (embedded default) or PostgreSQL (``database.url``)."""

from __future__ import annotations

from .base import Storage
from .models import (
    GuildSettings,
    GuildStation,
    HistoryEntry,
    Subscription,
    play_from_json,
    play_to_json,
)
from .postgres import PostgresStorage
from .sqlite import SqliteStorage


def create_storage(url_or_path: str) -> Storage:
    """``postgres://`` or ``postgresql://`` URLs give PostgreSQL; anything else is a SQLite path."""
    if url_or_path.startswith(("postgres://", "postgresql://")):
        return PostgresStorage(url_or_path)
    return SqliteStorage(url_or_path)


__all__ = [
    "GuildSettings",
    "GuildStation",
    "HistoryEntry",
    "PostgresStorage",
    "SqliteStorage",
    "Storage",
    "Subscription",
    "create_storage",
    "play_from_json",
    "play_to_json",
]
