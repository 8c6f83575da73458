"""A fair share of a station's search rate for every guild and, within one, every user.

The station's rate (``search_tokens``: N a second for the whole fleet) is first come, first
served; in front of it each party asking is held to its share, so one flooding user spends
only their own. Among the guilds that asked for the station within ``HORIZON`` seconds, each
gets ``rate / (guilds + 1)``; among the users of a guild that asked, each gets an equal part
of the guild's. The one share no guild holds keeps a token free for whoever asks next (a
guild or user not asking yet would otherwise find the window spent by one who floods). Each
(station, guild, user) keeps a token bucket filled at its share, holding ``BURST`` searches
(or one second's worth, if more): a newcomer starts full, a flooder's runs dry at once. A
guild is served by one process of a fleet (its shard), so the counts live in memory. Asking
costs a token whether or not the station's own rate then has one: a flood drains itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable

HORIZON = 10.0  # seconds a guild or user counts as asking after its last search
BURST = 4.0  # searches a bucket holds: a few keystrokes, the queue and a /request at once
PARTIES = 50_000  # (station, guild, user) remembered; past it all are forgotten (frees tokens)

Party = tuple[int, int]  # (guild id, user id)


class FairShare:
    """Per-station shares of ``rate`` searches a second among the guilds and users asking."""

    def __init__(
        self, rate: float, *, clock: Callable[[], float] = time.monotonic, horizon: float = HORIZON
    ) -> None:
        self.rate = rate
        self.clock = clock
        self.horizon = horizon
        # station: guild: user: when they last asked
        self._asking: dict[str, dict[int, dict[int, float]]] = {}
        self._buckets: dict[tuple[str, int, int], tuple[float, float]] = {}  # (level, at)
        self._pruned: dict[str, float] = {}

    def share(self, station: str, party: Party) -> float:
        """Searches a second ``party`` may send to ``station`` now (it counts as asking)."""
        self._prune(station, self.clock())
        guilds = self._asking.get(station, {})
        others = len(guilds) - (party[0] in guilds)
        users = guilds.get(party[0], {})
        mates = len(users) - (party[1] in users)
        return self.rate / (others + 2) / (mates + 1)

    def admit(self, station: str, party: Party) -> bool:
        """Take one of ``party``'s searches for ``station``; False when its share is spent."""
        now = self.clock()
        share = self.share(station, party)
        guild, user = party
        self._asking.setdefault(station, {}).setdefault(guild, {})[user] = now
        key = (station, guild, user)
        most = max(BURST, share)
        level, at = self._buckets.get(key, (most, now))
        level = min(most, level + max(0.0, now - at) * share)
        if level < 1.0:
            self._buckets[key] = (level, now)
            return False
        if len(self._buckets) >= PARTIES and key not in self._buckets:
            self._buckets.clear()
            self._asking.clear()
            self._asking.setdefault(station, {}).setdefault(guild, {})[user] = now
        self._buckets[key] = (level - 1.0, now)
        return True

    def _prune(self, station: str, now: float) -> None:
        """Forget who has not asked within the horizon (at most once a second a station)."""
        if self._pruned.get(station, -1e18) > now - 1.0:
            return
        self._pruned[station] = now
        guilds = self._asking.get(station)
        if not guilds:
            return
        since = now - self.horizon
        for guild in list(guilds):
            users = guilds[guild]
            for user in [u for u, at in users.items() if at < since]:
                del users[user]
                self._buckets.pop((station, guild, user), None)
            if not users:
                del guilds[guild]
