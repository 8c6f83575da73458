"""One user flooding song searches against everyone else: the station's rate shared fairly.

A script in guild A sends ``--flood`` new searches a second (each one the cache cannot serve)
for ``--seconds``; meanwhile a listener in guild A, two in guild B and one in guild C type a
new song every few seconds (each at its own phase, off the windows' edges). Run on the same
manual clock through the real :class:`SearchDesk` and the station's per-second tokens (in
memory, as on SQLite): without the script and with it (what the listeners get when nobody
floods, and when someone does), each first come, first served (no party given: every search
before the fair share) and with each search's (guild, user). Reports, per party, the
searches that got suggestions out of those asked, and the searches sent upstream (at most
``--rate`` a second every time). Deterministic: no network, no wall clock.

    .venv/bin/python -m bench.request_fairness [--seconds 60] [--flood 40] [--rate 2]
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from typing import Any

from bot.requests.search import SearchDesk
from bot.simulator import ManualClock
from bot.station import RequestTrack, SearchAnswer

from .common import emit

TICKS = 40  # clock steps a second
# (name, guild, user, every this many seconds, first at this second)
LISTENERS = (
    ("A: another listener", 1, 101, 4.0, 3.1),
    ("B: listener 1", 2, 201, 2.0, 2.5),
    ("B: listener 2", 2, 202, 5.0, 5.3),
    ("C: listener", 3, 301, 6.0, 4.9),
)
FLOODER = ("A: the flooding script", 1, 100)


def _fetch(text: str):  # type: ignore[no-untyped-def]
    async def run() -> SearchAnswer:
        return SearchAnswer((RequestTrack(text, f"Artist - {text}"),))

    return run


async def run(seconds: int, flood: float, rate: float, fair: bool) -> dict[str, Any]:
    """One run; ``flood`` 0: the listeners alone."""
    clock = ManualClock(0.0)
    desk = SearchDesk(rate, clock=clock)
    asked: Counter[str] = Counter()
    found: Counter[str] = Counter()
    per_second: Counter[int] = Counter()

    async def search(name: str, guild: int, user: int, text: str) -> None:
        before = desk.upstream
        answer = await desk.search(
            "main", text, _fetch(text), wait=1.0, party=(guild, user) if fair else None
        )
        per_second[int(clock())] += desk.upstream - before
        asked[name] += 1
        found[name] += bool(answer.tracks)

    due = {name: first for name, _, _, _, first in LISTENERS}
    flood_step = TICKS / flood if flood else float("inf")
    next_flood = 0.0 if flood else float("inf")
    for tick in range(seconds * TICKS):
        now = tick / TICKS
        while next_flood <= tick:
            await search(*FLOODER, f"flood {next_flood:.3f}")
            next_flood += flood_step
        for name, guild, user, every, _ in LISTENERS:
            if due[name] <= now:
                await search(name, guild, user, f"{name} song {due[name]:.1f}")
                due[name] += every
        clock.advance(1 / TICKS)
    names = [FLOODER[0]] if flood else []
    names += [name for name, *_ in LISTENERS]
    return {
        "suggestions": {name: f"{found[name]} of {asked[name]}" for name in names},
        "upstream_searches": desk.upstream,
        "most_in_one_second": max(per_second.values(), default=0),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--flood", type=float, default=40.0)
    parser.add_argument("--rate", type=float, default=2.0)
    args = parser.parse_args()
    emit(
        {
            "bench": "request_fairness",
            "seconds": args.seconds,
            "flood_per_second": args.flood,
            "rate": args.rate,
            "no_flood_first_come_first_served": await run(args.seconds, 0.0, args.rate, False),
            "no_flood_fair_share": await run(args.seconds, 0.0, args.rate, True),
            "flood_first_come_first_served": await run(args.seconds, args.flood, args.rate, False),
            "flood_fair_share": await run(args.seconds, args.flood, args.rate, True),
        }
    )


if __name__ == "__main__":
    asyncio.run(main())
