"""The one storage interface: business operations written once in portable SQL.

Each backend supplies the primitives (execute, fetch, atomic and returning writes, the migration
dialect); everything else is shared, so SQLite and PostgreSQL behave the same and one test suite
runs against both. The operations live per domain (``subscriptions.py``, ``outbox.py``,
``history.py``, ``likes.py``, ``guilds.py``, ``voice.py``, ``scheduled.py``, ``shows.py``,
``requests.py``, ``fleet.py``); ``Storage`` composes them into the one interface every caller uses.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from .fleet import FleetStore
from .guilds import GuildStore
from .history import HistoryStore
from .likes import LikeStore
from .migrations import MIGRATIONS
from .outbox import OutboxStore
from .requests import RequestStore
from .scheduled import ScheduledStore
from .shows import ShowStore
from .subscriptions import SubscriptionStore
from .voice import VoiceStore


class Storage(
    SubscriptionStore,
    OutboxStore,
    HistoryStore,
    LikeStore,
    GuildStore,
    VoiceStore,
    ScheduledStore,
    ShowStore,
    RequestStore,
    FleetStore,
):
    """Every domain's operations over one backend's primitives, opened and closed as one."""

    dialect: ClassVar[dict[str, str]] = {}
    # True when only one process can use the database (SQLite): leases left by an earlier run
    # are then certainly dead and are released at start-up instead of waiting for them to expire.
    single_process: ClassVar[bool] = False
    # True when several processes share the database and coordinate through it (PostgreSQL):
    # each station is polled by the one process holding its watch lease, and new plays are
    # published to the others (``fleet.py``).
    fleet: ClassVar[bool] = False

    # Lifecycle ---------------------------------------------------------------------------

    @abstractmethod
    async def open(self) -> Storage: ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    def is_storage_error(self, error: BaseException) -> bool:
        """Whether ``error`` is the database failing (locked, read-only, full, gone): worth
        retrying, unlike a bug in the caller."""

    def migration_scripts(self) -> list[str]:
        return [script.format(**self.dialect) for script in MIGRATIONS]
