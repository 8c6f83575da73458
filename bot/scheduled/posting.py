"""What the alert and recap services stand on: the same four services handed in, and the same
rule for which guilds a process serves."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

from ..catalog.registry import StationRegistry
from ..config import Settings
from ..storage import Storage
from .outbox import PostOutbox


@dataclass(eq=False)
class GuildPosts:
    """A service that records posts for guilds (alerts, recaps) and sends them via the outbox."""

    settings: Settings
    registry: StationRegistry
    storage: Storage
    outbox: PostOutbox
    _: KW_ONLY
    clock: Callable[[], float] = time.time

    def __post_init__(self) -> None:
        """A subclass sets up its own state here (the generated ``__init__`` calls it)."""

    def _handles(self, guild_id: int) -> bool:
        """A guild of this process's shards; in a fleet any guild (every process records, the
        stored key makes it once)."""
        return self.storage.fleet or self.settings.handles_guild(guild_id)
