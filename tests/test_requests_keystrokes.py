"""Keystrokes cost neither the station nor the database what they need not: a broader answer
known complete serves narrower keystrokes (the rate is saved for songs nobody searched yet), and
a guild's on/off switch is read once per burst, not once per keystroke."""

from __future__ import annotations

import asyncio

from bot.requests.search import SearchDesk
from bot.simulator import ManualClock
from bot.station import RequestTrack, SearchAnswer
from bot.storage import SqliteStorage
from tests.test_requests_service import GUILD, main, service  # noqa: F401

HARBOUR = RequestTrack("1", "The Lanterns - Harbour Lights")
HARVEST = RequestTrack("2", "Fieldwork - Harvest Moon")
SIGNAL = RequestTrack("3", "Northbound Static - Signal Fire")
LIBRARY = (HARBOUR, HARVEST, SIGNAL)


class Station:
    """Answers as a search-as-you-type station: every word inside the title; counts calls."""

    def __init__(self, library: tuple[RequestTrack, ...] = LIBRARY) -> None:
        self.library = library
        self.calls: list[str] = []

    def fetch(self, text: str):  # type: ignore[no-untyped-def]
        async def run() -> SearchAnswer:
            self.calls.append(text)
            words = text.casefold().split()
            found = [t for t in self.library if all(w in t.title.casefold() for w in words)]
            return SearchAnswer(tuple(found))

        return run

    async def ask(self, desk: SearchDesk, text: str):  # type: ignore[no-untyped-def]
        return await desk.search("main", text, self.fetch(text), wait=1.0)


async def test_a_complete_answer_serves_narrower_keystrokes_and_saves_the_rate():
    desk = SearchDesk(4.0, clock=ManualClock(0.0))
    station = Station()
    assert len((await station.ask(desk, "e - ")).tracks) == 3  # the station's biggest answer
    assert (await station.ask(desk, "har")).tracks == (HARBOUR, HARVEST)  # 2 < 3: complete
    for typed in ("harb", "Harbour", "harbour li", "HARBOUR LIGHTS"):
        found = await station.ask(desk, typed)
        assert (found.source, found.tracks) == ("prefix", (HARBOUR,))
    nothing = await station.ask(desk, "harz")
    assert (nothing.source, nothing.tracks) == ("prefix", ())
    assert station.calls == ["e - ", "har"]
    # The clock has not moved: the rate the narrower keystrokes did not spend serves the
    # listeners typing another song.
    found = await station.ask(desk, "sig")
    assert (found.source, found.tracks) == ("upstream", (SIGNAL,))
    assert (await station.ask(desk, "nor")).source == "upstream"
    assert (await station.ask(desk, "fie")).source == "limited"  # 4 a second, no more
    assert desk.upstream == len(station.calls) == 4


async def test_an_answer_a_cap_may_have_cut_is_searched_again():
    desk = SearchDesk(4.0, clock=ManualClock(0.0))
    station = Station()
    await station.ask(desk, "har")  # 2 tracks, the most so far: the station may cap at 2
    found = await station.ask(desk, "harbour")
    assert (found.source, found.tracks) == ("upstream", (HARBOUR,))
    assert station.calls == ["har", "harbour"]


async def test_a_word_searched_alone_narrows_a_longer_query():
    desk = SearchDesk(4.0, clock=ManualClock(0.0))
    station = Station()
    await station.ask(desk, "e - ")
    await station.ask(desk, "lanterns")
    found = await station.ask(desk, "harbour lanterns")
    assert (found.source, found.tracks) == ("prefix", (HARBOUR,))
    assert station.calls == ["e - ", "lanterns"]


async def test_a_flood_of_listeners_on_many_songs_stays_within_the_rate():
    clock = ManualClock(0.0)
    desk = SearchDesk(2.0, clock=clock)
    library = tuple(RequestTrack(str(n), f"Artist {n} - Song number {n:03d}") for n in range(40))
    station = Station(library)
    for _second in range(5):
        for n in range(200):  # 200 listeners, 20 songs, every keystroke of 12, in one second
            title = library[n % 20].title
            await asyncio.gather(*(station.ask(desk, title[:end]) for end in range(3, 13)))
        clock.advance(1.0)
    assert len(station.calls) <= 2 + 2 * 5
    assert desk.upstream == len(station.calls)


async def test_keystrokes_read_the_switch_once_and_see_this_process_change_at_once(
    service,  # noqa: F811
    clock,
    tmp_path,
):
    station = main(service)
    burst = await asyncio.gather(*(service.suggestions(GUILD, station, "harb") for _ in range(50)))
    assert all(burst)
    # Another process of the fleet turns requests off: this one's keystrokes reuse what they
    # read (no storage round trip per keystroke) until the switch is read again.
    other = await SqliteStorage(str(tmp_path / "db.sqlite3")).open()
    try:
        await other.set_requests_enabled(GUILD, station.slug, False)
    finally:
        await other.close()
    assert await service.suggestions(GUILD, station, "harb")
    clock.advance(31.0)
    assert await service.suggestions(GUILD, station, "harb") == []
    # A change made through this process is seen at once.
    await service.configure(
        GUILD, station, enabled=True, role_id=None, cooldown=None, hourly_cap=None, channel_id=None
    )
    assert await service.suggestions(GUILD, station, "harb")
    await service.configure(
        GUILD, station, enabled=False, role_id=None, cooldown=None, hourly_cap=None, channel_id=None
    )
    assert await service.suggestions(GUILD, station, "harb") == []
