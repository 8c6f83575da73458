"""Persistence behind one interface: SQLite (embedded default) or PostgreSQL (``database.url``)."""

from __future__ import annotations

from .base import SchemaTooNew, Storage
from .models import (
    VOTERS,
    AlertState,
    AlertSubscription,
    Delivery,
    GuildSettings,
    GuildStation,
    GuildVoice,
    HistoryEntry,
    NewRequest,
    PendingRequest,
    Recap,
    RequestCredit,
    RequestSettings,
    ScheduledPost,
    SongLinkRow,
    SongVote,
    Subscription,
    VoiceSession,
    VotePoll,
    WeekPlay,
    play_from_json,
    play_to_json,
)
from .outbox import DROPPED, FAILED, PENDING, SENT
from .postgres import PostgresStorage
from .shows import (
    EVENT_ACTIVE,
    EVENT_CLAIMED,
    EVENT_COMPLETED,
    EVENT_FAILED,
    EVENT_PLANNED,
)
from .sqlite import SqliteStorage


def create_storage(url_or_path: str, *, lock_timeout: float = 5.0) -> Storage:
    """``postgres://`` or ``postgresql://`` URLs give PostgreSQL; anything else is a SQLite path."""
    if url_or_path.startswith(("postgres://", "postgresql://")):
        return PostgresStorage(url_or_path)
    return SqliteStorage(url_or_path, lock_timeout=lock_timeout)


__all__ = [
    "DROPPED",
    "EVENT_ACTIVE",
    "EVENT_CLAIMED",
    "EVENT_COMPLETED",
    "EVENT_FAILED",
    "EVENT_PLANNED",
    "FAILED",
    "PENDING",
    "SENT",
    "VOTERS",
    "AlertState",
    "AlertSubscription",
    "Delivery",
    "GuildSettings",
    "GuildStation",
    "GuildVoice",
    "HistoryEntry",
    "NewRequest",
    "PendingRequest",
    "PostgresStorage",
    "Recap",
    "RequestCredit",
    "RequestSettings",
    "ScheduledPost",
    "SchemaTooNew",
    "SongLinkRow",
    "SongVote",
    "SqliteStorage",
    "Storage",
    "Subscription",
    "VoiceSession",
    "VotePoll",
    "WeekPlay",
    "create_storage",
    "play_from_json",
    "play_to_json",
]
