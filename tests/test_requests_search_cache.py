"""The shared song-search cache stays bounded by the characters it holds, whatever a station
answers."""

from __future__ import annotations

from bot.requests.search import SearchDesk, query_key
from bot.simulator import ManualClock
from bot.station import RequestTrack, SearchAnswer
from bot.station.requests import parse_search


async def test_a_hostile_station_cannot_fill_the_search_cache_past_its_size() -> None:
    """The shared search cache was bounded by answers only (5000), each up to 100 tracks of
    300 characters: a guild's own station answering every search with that, while one member
    typed distinct queries, could hold ~350 MB (measured with tracemalloc; four times that in
    astral characters), and pushed every other station's answers out. It is bounded by the
    characters it holds too; a small answer is still kept."""
    clock = ManualClock(0.0)
    desk = SearchDesk(1000.0, clock=clock)
    body = {"tracks": [{"id": f"{i:064d}", "title": f"{i} " + "é" * 297} for i in range(100)]}

    answer = parse_search(body)  # (parsed once: each search is a new answer upstream)

    async def hostile() -> SearchAnswer:
        return answer

    letters = "abcdefghijklmnopqrstuvwxyz"
    # Three letters each: no query is broader than another (each is searched upstream).
    queries = [a + b + c for a in letters[:6] for b in letters[:10] for c in letters[:10]]
    for query in queries:
        clock.advance(0.01)
        await desk.search("hostile", query, hostile, wait=5.0)
    held = 0
    for query in queries:
        for track in desk.cached("hostile", query_key(query)) or ():
            held += len(track.id) + len(track.title)
    assert 0 < held <= 10_000_000  # 600 answers of 36,400 characters: 21.8 M before

    async def small() -> SearchAnswer:
        return SearchAnswer((RequestTrack("1", "The Lanterns - Harbour Lights"),))

    await desk.search("main", "harbour", small, wait=5.0)
    assert desk.cached("main", "harbour") is not None
