"""Leave a voice channel nobody listens in: after ``leave_when_empty`` seconds with no member
but bots in it, unless someone comes back first, and never in the guild's 24/7 home channel."""

from __future__ import annotations

from collections.abc import Callable

from .timers import Cancellable, Timers


class EmptyChannelWatch:
    """One pending leave per guild at most; ``update`` after every change in a player's channel."""

    def __init__(self, timers: Timers, on_empty: Callable[[int], None]) -> None:
        self.timers = timers
        self.on_empty = on_empty
        self._pending: dict[int, Cancellable] = {}

    def update(self, guild_id: int, listeners: int, *, home: bool, leave_after: float) -> None:
        """``listeners``: non-bot members in the player's channel now. ``leave_after`` 0: stay."""
        if listeners > 0 or home or leave_after <= 0:
            self.cancel(guild_id)
            return
        if guild_id in self._pending:
            return  # already counting since the channel emptied

        def fire() -> None:
            self._pending.pop(guild_id, None)
            self.on_empty(guild_id)

        self._pending[guild_id] = self.timers.call_later(leave_after, fire)

    def cancel(self, guild_id: int) -> None:
        pending = self._pending.pop(guild_id, None)
        if pending is not None:
            pending.cancel()

    def waiting(self, guild_id: int) -> bool:
        return guild_id in self._pending

    def close(self) -> None:
        for guild_id in list(self._pending):
            self.cancel(guild_id)
