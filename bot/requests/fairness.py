"""A fair share of a station's search rate for every guild and, within one, every user.

The station's rate (``search_tokens``: N a second for the whole fleet) is first come, first
served; in front of it each party asking is held to its share, so one flooding user spends
only their own. Shares are max-min fair by demand (each party's asking rate, decayed over
``DEMAND_SECONDS``): among the guilds that asked for the station within ``HORIZON`` seconds,
one asking less than an equal part gets all it asks, and what it leaves is divided among the
others the same way; then a guild's share among its users alike. Each is taken to ask for
at least an equal part (of the rate; of its guild's), so that part is always its own: a
demand is measured, and a listener asking now and then is not judged by it. What nobody asks
for is divided equally. All of this divides ``rate * G / (G + 1)`` for G guilds asking: the
one share no guild holds keeps a token free for whoever asks next (a newcomer would otherwise
find the window spent by one who floods).

Each (station, guild, user) keeps a token bucket filled at its share, holding ``BURST``
searches (or one second's worth, if more): a newcomer starts full, a flooder's runs dry at
once. Asking costs a token whether or not the station's own rate then has one: a flood
drains itself. A guild is served by one process of a fleet (its shard), so all of this
lives in memory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

HORIZON = 10.0  # seconds a guild or user counts as asking after its last search
DEMAND_SECONDS = 5.0  # how far back a party's asking rate looks (exponential decay)
BURST = 4.0  # searches a bucket holds: a few keystrokes, the queue and a /request at once
SHARES_TTL = 0.2  # seconds a station's shares are reused before they are worked out again
PARTIES = 50_000  # (station, guild, user) remembered; past it all are forgotten (frees tokens)

Party = tuple[int, int]  # (guild id, user id)
K = TypeVar("K", bound=Hashable)


@dataclass(slots=True)
class _Asker:
    last: float  # when it last asked
    demand: float  # its asking rate (searches a second), decayed to ``last``
    level: float  # searches its bucket holds, at ``last``


def max_min(capacity: float, demands: Mapping[K, float]) -> dict[K, float]:
    """``capacity`` divided max-min fairly by ``demands``; what is left over, equally."""
    shares: dict[K, float] = {}
    left = capacity
    waiting = sorted(demands.items(), key=lambda item: item[1])
    for index, (key, demand) in enumerate(waiting):
        shares[key] = min(demand, left / (len(waiting) - index))
        left -= shares[key]
    if shares and left > 0:
        extra = left / len(shares)
        shares = {key: share + extra for key, share in shares.items()}
    return shares


class FairShare:
    """Per-station shares of ``rate`` searches a second among the guilds and users asking."""

    def __init__(
        self, rate: float, *, clock: Callable[[], float] = time.monotonic, horizon: float = HORIZON
    ) -> None:
        self.rate = rate
        self.clock = clock
        self.horizon = horizon
        self._askers: dict[str, dict[int, dict[int, _Asker]]] = {}  # station: guild: user
        self._shares: dict[str, tuple[float, dict[Party, float]]] = {}  # station: (until, …)
        self._pruned: dict[str, float] = {}
        self._count = 0

    def share(self, station: str, party: Party) -> float:
        """Searches a second ``party`` may send to ``station`` now (the share kept free, for
        a guild not asking yet; the least of its guild's, for a user not asking yet)."""
        now = self.clock()
        self._prune(station, now)
        shares = self._shares_of(station, now)
        if party in shares:
            return shares[party]
        guilds = self._askers.get(station, {})
        if party[0] not in guilds:
            return self.rate / (len(guilds) + 1)
        return min(shares[(party[0], user)] for user in guilds[party[0]])

    def admit(self, station: str, party: Party) -> bool:
        """Take one of ``party``'s searches for ``station``; False when its share is spent."""
        now = self.clock()
        self._prune(station, now)
        guild, user = party
        asker = self._askers.get(station, {}).get(guild, {}).get(user)
        if asker is None:
            if self._count >= PARTIES:
                self._askers.clear()
                self._shares.clear()
                self._count = 0
            asker = _Asker(now, 0.0, math.inf)  # starts full
            self._askers.setdefault(station, {}).setdefault(guild, {})[user] = asker
            self._count += 1
            self._shares.pop(station, None)  # a new party: the shares change
        elapsed = max(0.0, now - asker.last)
        # This ask counts in the demand the share is worked from (a party asking every few
        # seconds is not judged by its lowest, just before it asks).
        asker.demand = asker.demand * math.exp(-elapsed / DEMAND_SECONDS) + 1 / DEMAND_SECONDS
        asker.last = now
        share = self.share(station, party)
        asker.level = min(max(BURST, share), asker.level + elapsed * share)
        if asker.level < 1.0:
            return False
        asker.level -= 1.0
        return True

    def _shares_of(self, station: str, now: float) -> dict[Party, float]:
        """Every party's share of ``station``'s rate, worked out at most every SHARES_TTL."""
        known = self._shares.get(station)
        if known is not None and known[0] > now:
            return known[1]
        guilds = self._askers.get(station, {})
        demands = {
            guild: {user: _decayed(a, now) for user, a in users.items()}
            for guild, users in guilds.items()
        }
        capacity = self.rate * len(guilds) / (len(guilds) + 1)
        # Each is taken to want at least an equal part: what it may always use is kept for it.
        wanted = {
            g: max(sum(users.values()), capacity / len(guilds)) for g, users in demands.items()
        }
        per_guild = max_min(capacity, wanted)
        shares: dict[Party, float] = {}
        for guild, users in demands.items():
            equal = per_guild[guild] / len(users)
            asked = {user: max(demand, equal) for user, demand in users.items()}
            for user, share in max_min(per_guild[guild], asked).items():
                shares[(guild, user)] = share
        self._shares[station] = (now + SHARES_TTL, shares)
        return shares

    def _prune(self, station: str, now: float) -> None:
        """Forget who has not asked within the horizon (at most once a second a station)."""
        if self._pruned.get(station, -math.inf) > now - 1.0:
            return
        self._pruned[station] = now
        guilds = self._askers.get(station)
        if not guilds:
            return
        since = now - self.horizon
        for guild in list(guilds):
            users = guilds[guild]
            for user in [u for u, asker in users.items() if asker.last < since]:
                del users[user]
                self._count -= 1
                self._shares.pop(station, None)
            if not users:
                del guilds[guild]


def _decayed(asker: _Asker, now: float) -> float:
    return asker.demand * math.exp(-max(0.0, now - asker.last) / DEMAND_SECONDS)
