"""A station's search rate is shared fairly: each guild asking gets an equal part and each
user in a guild an equal part of the guild's, so one user flooding new searches spends only
their own suggestions (on a manual clock: the same every run)."""

from __future__ import annotations

import pytest

from bot.requests.fairness import BURST, SHARES_TTL, FairShare, max_min
from bot.requests.search import SearchDesk
from bot.simulator import ManualClock
from bot.station import RequestTrack, SearchAnswer

FLOODER, OTHER, GUEST = (1, 100), (1, 101), (2, 200)  # (guild, user): two in A, one in B


def fetch(text: str):  # type: ignore[no-untyped-def]
    async def run() -> SearchAnswer:
        return SearchAnswer((RequestTrack(text, f"Artist - {text}"),))

    return run


async def test_a_flooding_user_spends_only_their_own_share():
    clock = ManualClock(0.0)
    desk = SearchDesk(2.0, clock=clock)  # the default rate: 2 searches a second
    found: dict[tuple[int, int], list[bool]] = {FLOODER: [], OTHER: [], GUEST: []}

    async def search(party: tuple[int, int], text: str) -> None:
        answer = await desk.search("main", text, fetch(text), wait=1.0, party=party)
        found[party].append(bool(answer.tracks))

    guest_at = {100 + 80 * n for n in range(5)}  # every 2 s from 2.5 s: 5 new songs
    other_at = {124 + 160 * n for n in range(3)}  # every 4 s from 3.1 s: 3 new songs
    for tick in range(40 * 12):  # 12 s of 40 new searches a second from the flooder
        await search(FLOODER, f"flood {tick:05d}")
        if tick in guest_at:
            await search(GUEST, f"guest song {tick}")
        if tick in other_at:
            await search(OTHER, f"other song {tick}")
        clock.advance(1 / 40)
    assert found[GUEST] == [True] * 5
    assert found[OTHER] == [True] * 3
    # The flooder: its burst, then its share (half the rate alone, less once others ask).
    assert sum(found[FLOODER]) <= BURST + 2.0 / 2 * 12
    assert desk.upstream <= 2 + 2 * 12  # the station's own rate holds as ever


def test_max_min_gives_the_modest_all_they_ask_and_splits_the_rest():
    assert max_min(6.0, {"a": 1.0, "b": 10.0, "c": 10.0}) == {"a": 1.0, "b": 2.5, "c": 2.5}
    assert max_min(6.0, {"a": 1.0, "b": 1.0}) == {"a": 3.0, "b": 3.0}  # nobody wants more
    assert max_min(6.0, {}) == {}


def test_shares_follow_demand_and_keep_one_share_free():
    clock = ManualClock(0.0)
    fair = FairShare(6.0, clock=clock)
    for _ in range(100):
        fair.admit("main", FLOODER)
        clock.advance(0.01)
    assert fair.share("main", FLOODER) == pytest.approx(3.0)  # alone: half, half kept free
    fair.admit("main", GUEST)
    fair.admit("main", OTHER)
    clock.advance(SHARES_TTL)
    flooder, other, guest = (fair.share("main", p) for p in (FLOODER, OTHER, GUEST))
    # Two guilds: a third kept free, a third each; A's third halved between its users, the
    # one who asked once keeping half of it, whatever the other asks.
    assert (flooder, other, guest) == pytest.approx((1.0, 1.0, 2.0))
    clock.advance(11.0)
    fair.admit("main", GUEST)  # the others stopped asking 11 s ago: forgotten
    clock.advance(SHARES_TTL)
    assert fair.share("main", GUEST) == pytest.approx(3.0)
    assert fair.share("other", GUEST) == 6.0  # each station's rate is its own


def test_a_spent_share_refuses_and_refills_at_its_rate():
    clock = ManualClock(0.0)
    fair = FairShare(2.0, clock=clock)
    granted = sum(fair.admit("main", FLOODER) for _ in range(20))
    assert granted == BURST
    clock.advance(1.0)  # alone: 1 a second
    assert fair.admit("main", FLOODER)
    assert not fair.admit("main", FLOODER)
