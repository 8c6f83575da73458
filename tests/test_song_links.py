"""Song links: the search client against a real local server (the simulator's fake of Apple's
search, strict like it), and the service's one search per song for every process on one
storage, cached found and not found, on SQLite and PostgreSQL. Time is an injected clock;
a slow server is an event the test sets."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from bot.simulator.songsearch import SongSearchSim
from bot.songlinks import SongLinks, song_key, wanted
from bot.songlinks.service import DAY, FOUND_DAYS, MISSING_DAYS
from bot.songsearch import SongSearch, SongSearchAnswerError, SongSearchUnavailable
from bot.songsearch.client import artwork_url
from bot.station import Play
from bot.storage import SongLinkRow

from .support.storage_backends import open_backend

SONG = Play("Harbour Lights", "The Lanterns", duration=timedelta(minutes=3, seconds=42))
OTHER = Play("Signal Fire", "Northbound Static", duration=timedelta(minutes=3, seconds=18))
UNKNOWN = Play("No Such Song", "Nobody At All", duration=timedelta(minutes=3))
FAST = 6000.0  # searches a minute: the rate never in the way unless a test is about it


class Clock:
    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def serving(fake: SongSearchSim) -> AsyncIterator[str]:
    server = TestServer(fake.make_app())
    await server.start_server()
    try:
        yield str(server.make_url("/search"))
    finally:
        await server.close()


@pytest.fixture
async def fake() -> AsyncIterator[tuple[SongSearchSim, str, aiohttp.ClientSession]]:
    sim = SongSearchSim()
    async with serving(sim) as url, aiohttp.ClientSession() as session:
        yield sim, url, session


@pytest.fixture(params=["sqlite", "postgres"])
async def storage(request, tmp_path):  # type: ignore[no-untyped-def]
    store = await open_backend(request.param, tmp_path)
    yield store
    await store.close()


# The client ------------------------------------------------------------------------------


async def test_the_fake_is_strict_like_apple(fake):
    sim, url, session = fake
    async with session.get(url, params={"entity": "song"}) as response:
        assert response.status == 400  # term is required
    async with session.get(url, params={"term": "x", "limit": "201"}) as response:
        assert response.status == 400
    async with session.get(url, params={"term": "lanterns", "limit": "200"}) as response:
        body = await response.json(content_type=None)
    assert body["resultCount"] == len(body["results"]) == 2
    assert sim.searches == 1  # refused requests are not searches


async def test_a_search_gives_checked_frozen_hits(fake):
    _, url, session = fake
    hits = await SongSearch(session, url).search("The Lanterns", "Harbour Lights")
    assert [h.title for h in hits] == ["Harbour Lights (Live)", "Harbour Lights"]
    assert hits[1].artwork is not None
    assert hits[1].artwork.endswith("/600x600bb.jpg")  # asked at 600x600 the way Apple allows


def test_artwork_urls_are_https_and_safe_or_nothing():
    assert artwork_url("https://is1.mzstatic.com/a/b/100x100bb.jpg") == (
        "https://is1.mzstatic.com/a/b/600x600bb.jpg"
    )
    for bad in (
        "http://is1.mzstatic.com/a/100x100bb.jpg",
        "javascript:alert(1)",
        "https://a b/c",
        7,
        None,
    ):
        assert artwork_url(bad) is None


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("status", SongSearchUnavailable),
        ("huge", SongSearchAnswerError),
        ("garbage", SongSearchAnswerError),
    ],
)
async def test_a_failing_or_hostile_server_raises_its_error(fake, fault, error):
    sim, url, session = fake
    sim.fault = fault
    with pytest.raises(error) as raised:
        await SongSearch(session, url).search("The Lanterns", "Harbour Lights")
    assert "Lanterns" not in str(raised.value)  # the song asked is in no log line


async def test_wrong_types_in_every_field_are_no_answer(fake):
    sim, url, session = fake
    sim.fault = "hostile"
    with pytest.raises(SongSearchAnswerError):
        await SongSearch(session, url).search("x", "y")


async def test_a_slow_server_times_out(fake):
    sim, url, session = fake
    sim.delay = asyncio.Event()  # never set: the answer never comes
    with pytest.raises(SongSearchUnavailable):
        await SongSearch(session, url, timeout=0.2).search("The Lanterns", "Harbour Lights")


# The service -----------------------------------------------------------------------------


def service(url: str, session: aiohttp.ClientSession, store, clock: Clock, **options) -> SongLinks:  # type: ignore[no-untyped-def]
    options.setdefault("per_minute", FAST)
    return SongLinks(SongSearch(session, url), store, clock=clock, **options)


async def test_found_is_cached_for_days_and_searched_again_after(fake, storage):
    sim, url, session = fake
    clock = Clock()
    links = service(url, session, storage, clock)
    link = await links.find(SONG)
    assert link is not None
    assert link.url.startswith("https://song.link/i/")
    assert link.artwork is not None
    assert await links.find(SONG) == link
    assert links.known(SONG) == link
    fresh = service(url, session, storage, clock)  # a restart: from storage, not searched
    assert await fresh.find(SONG) == link
    assert sim.searches == 1
    clock.now += FOUND_DAYS * DAY + 1
    assert await service(url, session, storage, clock).find(SONG) == link
    assert sim.searches == 2  # expired: searched again


async def test_not_found_is_cached_shorter(fake, storage):
    sim, url, session = fake
    clock = Clock()
    links = service(url, session, storage, clock)
    assert await links.find(UNKNOWN) is None
    row = await storage.song_link(song_key("Nobody At All", "No Such Song"), clock())
    assert row == SongLinkRow(
        song_key("Nobody At All", "No Such Song"), False, expires_at=clock() + MISSING_DAYS * DAY
    )
    assert await service(url, session, storage, clock).find(UNKNOWN) is None
    assert sim.searches == 1
    clock.now += MISSING_DAYS * DAY + 1
    assert await service(url, session, storage, clock).find(UNKNOWN) is None
    assert sim.searches == 2


async def test_two_processes_on_one_storage_search_a_song_once(fake, storage):
    """The second process finds the first one's claim, waits for its answer and uses it."""
    sim, url, session = fake
    clock = Clock()
    sim.delay = asyncio.Event()
    looked: list[float] = []

    async def sleep(seconds: float) -> None:
        looked.append(seconds)
        if len(looked) == 2:
            sim.delay.set()  # the first process's search answers while the second waits
        await asyncio.sleep(0)

    first = service(url, session, storage, clock, owner="first")
    second = service(url, session, storage, clock, owner="second", sleep=sleep, poll=0.01)
    searching = asyncio.create_task(first.find(SONG))
    await sim.arrived.wait()  # the first holds the claim and its search is at the server
    waiting = await second.find(SONG)
    found = await searching
    assert found is not None
    assert waiting == found
    assert sim.searches == 1
    assert (first.searches, second.searches) == (1, 0)


async def test_one_process_searches_a_song_once_for_every_caller(fake, storage):
    sim, url, session = fake
    links = service(url, session, storage, Clock())
    sim.delay = asyncio.Event()
    callers = [asyncio.create_task(links.find(SONG)) for _ in range(20)]
    await sim.arrived.wait()
    sim.delay.set()
    answers = await asyncio.gather(*callers)
    assert len(set(answers)) == 1
    assert answers[0] is not None
    assert sim.searches == 1


@pytest.mark.parametrize("fault", ["status", "huge", "garbage", "hostile"])
async def test_a_failing_search_stores_nothing(fake, storage, fault):
    sim, url, session = fake
    clock = Clock()
    sim.fault = fault
    links = service(url, session, storage, clock)
    assert await links.find(SONG) is None
    assert await storage.song_link(song_key("The Lanterns", "Harbour Lights"), clock()) is None
    sim.fault = None
    assert await service(url, session, storage, clock).find(SONG) is not None  # not remembered


async def test_over_the_rate_a_song_goes_without_a_link_and_nothing_is_stored(fake, storage):
    """20 a minute for the fleet: the second song in the same window gets no link now (its
    wait for a token is spent), and is not stored as not found."""
    sim, url, session = fake
    clock = Clock()
    links = service(url, session, storage, clock, per_minute=20.0, token_wait=0.0)
    assert await links.find(SONG) is not None
    assert await links.find(OTHER) is None
    assert sim.searches == 1
    assert await storage.song_link(song_key("Northbound Static", "Signal Fire"), clock()) is None


@pytest.mark.parametrize(
    "play",
    [
        Play("Station ID", "OnAir FM", duration=timedelta(seconds=8)),  # a jingle
        Play("The Morning Show", "Host", live=True),  # a live show
        Play("Harbour Lights", None, duration=timedelta(minutes=3)),  # no artist
    ],
)
async def test_jingles_live_shows_and_songs_without_artist_are_never_searched(fake, storage, play):
    sim, url, session = fake
    links = service(url, session, storage, Clock())
    assert not wanted(play)
    assert await links.find(play) is None
    assert sim.searches == 0


async def test_turned_off_it_searches_nothing(fake, storage):
    sim, url, session = fake
    links = service(url, session, storage, Clock(), enabled=False)
    assert await links.find(SONG) is None
    assert sim.searches == 0


def test_the_songs_artwork_fills_in_only_where_the_station_gives_none():
    from datetime import UTC, datetime

    from bot.songlinks import SongLink, with_artwork
    from bot.station import Links, StationInfo

    link = SongLink("https://song.link/i/1", "https://is1.mzstatic.com/a/600x600bb.jpg")
    bare = StationInfo(fetched_at=datetime(2026, 11, 29, tzinfo=UTC))
    assert with_artwork(bare, link).links.artwork == link.artwork
    own = StationInfo(fetched_at=bare.fetched_at, links=Links(artwork="https://r.example/a.png"))
    assert with_artwork(own, link) is own
    assert with_artwork(bare, None) is bare
    assert with_artwork(bare, SongLink("https://song.link/i/1")) is bare


async def test_the_history_prune_forgets_expired_answers_only(fake, storage):
    from datetime import UTC, datetime

    _, url, session = fake
    clock = Clock()
    links = service(url, session, storage, clock)
    await links.find(SONG)
    await links.find(UNKNOWN)
    later = clock() + MISSING_DAYS * DAY + 1  # the not-found answer expired, the found one not
    await storage.prune(30, now=datetime.fromtimestamp(later, UTC))
    assert await storage.song_link(song_key("Nobody At All", "No Such Song"), 0.0) is None
    assert await storage.song_link(song_key("The Lanterns", "Harbour Lights"), later) is not None


def test_the_button_goes_in_the_first_row_with_room_and_only_with_a_url_discord_takes():
    import discord

    from bot.songlinks import SongLink
    from bot.ui.songlinks import with_song_link

    good = SongLink("https://song.link/i/123")
    view = with_song_link(None, good)
    assert view is not None
    [button] = view.children
    assert isinstance(button, discord.ui.Button)
    assert (button.url, button.label, button.row) == (good.url, "Find this song", 0)
    full_row = discord.ui.View(timeout=None)
    for index in range(5):
        full_row.add_item(discord.ui.Button(label=str(index), url=f"https://x.example/{index}"))
    placed = with_song_link(full_row, good)
    assert placed is not None
    assert [item.row or 0 for item in placed.children] == [0, 0, 0, 0, 0, 1]
    assert len(full_row.children) == 5  # the shared rendering is left as it was
    for bad in ("https://song.link/i/1 2", "javascript:x", "https://song.link/" + "a" * 600):
        assert with_song_link(full_row, SongLink(bad)) is full_row
