"""The one storage interface: business operations written once in portable SQL.

Each backend supplies the primitives (execute, fetch, atomic and returning writes, the migration
dialect); everything else is shared, so SQLite and PostgreSQL behave the same and one test suite
runs against both. The operations live per domain (``subscriptions.py``, ``outbox.py``,
``history.py``, ``likes.py``, ``guilds.py``, ``voice.py``, ``scheduled.py``, ``shows.py``,
``requests.py``, ``song_links.py``, ``fleet.py``); ``Storage`` composes them into the one
interface every caller uses.
"""

from __future__ import annotations

import logging
from abc import abstractmethod
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, TypeVar

from .fleet import FleetStore
from .guilds import GuildStore
from .health import StorageHealth
from .history import HistoryStore
from .likes import LikeStore
from .migrations import MIGRATIONS
from .outbox import OutboxStore
from .requests import RequestStore
from .scheduled import ScheduledStore
from .shows import ShowStore
from .song_links import SongLinkStore
from .subscriptions import SubscriptionStore
from .users import UserStore
from .voice import VoiceStore
from .votes import VoteStore

T = TypeVar("T")

_LOGGER = logging.getLogger("onair.storage")


class SchemaTooNew(Exception):
    """The database was upgraded by a newer OnAir: this one does not know its tables, and
    writing to them could lose what the newer one keeps there."""

    def __init__(self, found: int, known: int) -> None:
        super().__init__(
            f"the database is at schema {found}, newer than this OnAir knows ({known}): a newer "
            "OnAir upgraded it; run that version (or restore the copy saved before the upgrade)"
        )
        self.found, self.known = found, known


def check_schema(current: int, known: int) -> None:
    """Before migrating: refuse a database a newer OnAir upgraded."""
    if current > known:
        raise SchemaTooNew(current, known)


def log_upgrade(current: int, known: int) -> None:
    """After migrating (committed): one line when anything changed."""
    if current == 0:
        _LOGGER.info("database created (schema %d)", known)
    elif current < known:
        _LOGGER.info("database upgraded from schema %d to %d", current, known)


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
    VoteStore,
    SongLinkStore,
    FleetStore,
    UserStore,
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
    # Whether storage is failing now (one warning line per outage); each backend makes its own.
    health: StorageHealth

    # Lifecycle ---------------------------------------------------------------------------

    @abstractmethod
    async def open(self) -> Storage: ...

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    def is_storage_error(self, error: BaseException) -> bool:
        """Whether ``error`` is the database failing (locked, read-only, full, gone): worth
        retrying, unlike a bug in the caller."""

    def log_fault_or_raise(
        self, error: Exception, logger: logging.Logger, message: str, *args: Any
    ) -> None:
        """Called in an ``except`` block: ``error`` is raised again unless it is the database
        failing; that is logged (``message % args``) as ``health`` decides, and the caller goes
        on without what failed."""
        if not self.is_storage_error(error):
            raise error
        self.health.warn(logger, message, *args)

    async def _monitored(self, operation: Callable[[], Awaitable[T]], *, write: bool = False) -> T:
        """Run one database operation, recording in ``health`` whether storage failed it."""
        began = self.health.begin()
        try:
            result = await operation()
        except Exception as error:
            if self.is_storage_error(error):
                self.health.failed(began, write=write)
                await self._after_failure(error)
            raise
        self.health.succeeded(began, write=write)
        return result

    async def _after_failure(self, error: BaseException) -> None:
        """What a backend does when storage failed an operation (nothing by default)."""

    @abstractmethod
    async def take_search_token(
        self, station: str, per_second: float, *, at: float | None = None
    ) -> bool:
        """Take one of the station's ``per_second`` song searches a second, counted once for
        every process that uses this storage (``search_tokens.py``); False when this window's
        are spent. ``at``: the time to count at instead of the storage's clock (tests)."""

    def migration_scripts(self) -> list[str]:
        return [script.format(**self.dialect) for script in MIGRATIONS]
