"""The request service without Discord: shared searches (cache, single flight, the rate), the
guild's rules, the station's answers in plain words, and the credit of a play."""

from __future__ import annotations

import asyncio
import logging

import aiohttp
import pytest

from bot.catalog.registry import StationRegistry
from bot.config import parse_settings
from bot.errors import BadInput
from bot.requests.search import SearchDesk, query_key
from bot.requests.service import RequestService
from bot.simulator import ManualClock
from bot.station import Play, RequestTrack, SearchAnswer, StationUnavailable
from bot.storage import SqliteStorage

from .support.waiting import wait_for

GUILD = 10
HARBOUR = "The Lanterns - Harbour Lights"


class Upstream:
    """A search function that counts its calls and can be held open."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.release = asyncio.Event()
        self.release.set()

    def fetch(self, text: str):  # type: ignore[no-untyped-def]
        async def run() -> SearchAnswer:
            self.calls.append(text)
            await self.release.wait()
            return SearchAnswer((RequestTrack("1", f"Song {text}"), RequestTrack("2", "Other")))

        return run


async def test_one_search_serves_everyone_asking_the_same_thing():
    clock = ManualClock(0.0)
    desk = SearchDesk(2.0, ttl=60.0, clock=clock)
    upstream = Upstream()
    upstream.release.clear()
    waiting = [
        asyncio.create_task(desk.search("main", typed, upstream.fetch(typed), wait=5.0))
        for typed in ["Harbour", "harbour ", "HARBOUR"] * 30
    ]
    await asyncio.sleep(0)
    upstream.release.set()
    found = await asyncio.gather(*waiting)
    assert len(upstream.calls) == 1
    assert {f.tracks for f in found} == {found[0].tracks}
    # Cached for a minute, for every guild and user; then asked again.
    assert (await desk.search("main", "harbour", upstream.fetch("x"), wait=1.0)).source == "cache"
    clock.advance(61.0)
    await desk.search("main", "harbour", upstream.fetch("harbour"), wait=1.0)
    assert len(upstream.calls) == 2
    # Another station is another search.
    await desk.search("other", "harbour", upstream.fetch("harbour"), wait=1.0)
    assert len(upstream.calls) == 3


async def test_a_flood_of_keystrokes_stays_within_the_rate():
    clock = ManualClock(0.0)
    desk = SearchDesk(2.0, clock=clock)
    upstream = Upstream()
    typed = "harbour lights by the lanterns"
    answers = []
    for _second in range(5):
        for end in range(3, len(typed) + 1):  # every keystroke of 28 within one second
            answers.append(
                await desk.search("main", typed[:end], upstream.fetch(typed[:end]), wait=1)
            )
        clock.advance(1.0)
    # 2 a second (the bucket starts full with 2): at most 2 + 2 * 5 whatever is typed.
    assert len(upstream.calls) <= 12
    assert desk.upstream == len(upstream.calls)
    # Keystrokes past the rate answer at once from a shorter query's answer, filtered.
    sources = {a.source for a in answers}
    assert "prefix" in sources or "limited" in sources
    assert all(a.source != "upstream" or a.tracks for a in answers)


async def test_past_the_rate_a_cached_prefix_answers_filtered():
    clock = ManualClock(0.0)
    desk = SearchDesk(1.0, clock=clock)
    upstream = Upstream()
    await desk.search("main", "son", upstream.fetch("son"), wait=1.0)
    found = await desk.search("main", "song s", upstream.fetch("song s"), wait=1.0)
    assert found.source == "prefix"
    assert found.tracks == (RequestTrack("1", "Song son"),)
    assert len(upstream.calls) == 1


async def test_a_slow_station_does_not_hold_the_autocomplete():
    desk = SearchDesk(5.0)
    upstream = Upstream()
    upstream.release.clear()
    found = await desk.search("main", "harbour", upstream.fetch("harbour"), wait=0.05)
    assert found.source == "limited"
    assert found.tracks == ()
    upstream.release.set()
    # The search sent meanwhile fills the cache for the next keystroke.
    await wait_for(lambda: desk.cached("main", query_key("harbour")) is not None)
    assert (await desk.search("main", "harbour", upstream.fetch("x"), wait=0.05)).tracks


def settings_for(sim, *, requests: bool = True, rate: float = 2.0):  # type: ignore[no-untyped-def]
    return parse_settings(
        f"""
[requests]
searches_per_second = {rate}

[bot]
allow_private_station_urls = true
allow_http_station_urls = true

[[stations]]
id = "main"
name = "Main FM"
base_url = "{sim.base_url}"
station_id = 1
requests = {str(requests).lower()}
""",
        {},
    )


@pytest.fixture
async def service(simulator, tmp_path, clock):
    storage = await SqliteStorage(str(tmp_path / "db.sqlite3")).open()
    async with aiohttp.ClientSession() as session:
        settings = settings_for(simulator)
        registry = StationRegistry(settings, session)
        yield RequestService(settings, registry, storage, clock=clock)
    await storage.close()


@pytest.fixture
async def roomy(simulator, tmp_path, clock):
    """A service whose station takes 100 calls a second: for what is worded, not the rate."""
    storage = await SqliteStorage(str(tmp_path / "db.sqlite3")).open()
    async with aiohttp.ClientSession() as session:
        settings = settings_for(simulator, rate=100.0)
        registry = StationRegistry(settings, session)
        yield RequestService(settings, registry, storage, clock=clock)
    await storage.close()


def main(service: RequestService):  # type: ignore[no-untyped-def]
    station = service.registry.station("main")
    assert station is not None
    return station


async def ask(service, typed: str, user: int = 1, **kw):  # type: ignore[no-untyped-def]
    options = {"display_name": "Ana", "role_ids": (), "ping": False}
    options.update(kw)
    return await service.request(
        guild_id=GUILD, station=main(service), user_id=user, typed=typed, **options
    )


async def test_a_picked_suggestion_is_requested_and_credited_once(service, simulator):
    choices = await service.suggestions(GUILD, main(service), "harb")
    assert [(c.name, c.value) for c in choices] == [(HARBOUR, "1001")]
    accepted = await ask(service, "1001")
    assert accepted.title == HARBOUR
    assert simulator.station(1).song_requests.accepted
    play = Play("Harbour Lights", "The Lanterns")
    credits = await service.credit_new_play("main", play, "key-1")
    assert [(c.guild_id, c.user_id, c.name) for c in credits] == [(GUILD, 1, "Ana")]
    assert await service.credit_new_play("main", play, "key-2") == ()


async def test_text_typed_must_match_a_result(service, simulator):
    with pytest.raises(BadInput, match="No song on \\*\\*Main FM\\*\\* matches"):
        await ask(service, "zzzz nothing")
    with pytest.raises(BadInput, match="songs on \\*\\*Main FM\\*\\* match"):
        await ask(service, "the")
    assert not simulator.station(1).song_requests.accepted
    # The full title typed by hand is that song.
    assert (await ask(service, "the lanterns - HARBOUR lights")).title == HARBOUR


async def test_the_stations_reason_and_requests_off(roomy, simulator, clock):
    simulator.station(1).song_requests.refusal = "You can request 1 song per hour"
    with pytest.raises(BadInput, match=r"has taken all the requests it allows for now\. Try again"):
        await ask(roomy, HARBOUR)
    simulator.station(1).song_requests.refusal = None
    await roomy.suggestions(GUILD, main(roomy), "harbour", user_id=1)  # offered: by id
    simulator.station(1).song_requests.off = True
    clock.advance(11.0)  # the queue read with the first refusal is no longer reused
    with pytest.raises(BadInput, match="not taking song requests right now"):
        await ask(roomy, "1001")
    # Refused requests do not count toward the cooldown.
    simulator.station(1).song_requests.off = False
    assert (await ask(roomy, "1001")).title == HARBOUR


async def test_over_the_cooldown_says_when_to_ask_again(service, clock):
    await ask(service, HARBOUR)
    with pytest.raises(BadInput, match=f"ask again <t:{int(clock() + 600.999)}:R>"):
        await ask(service, "Northbound Static - Signal Fire")


async def test_requests_matching_nothing_ask_the_station_once(service, simulator):
    """Sent 30 times: one search (then cached) and one look at the queue (then reused), not
    a call each; the station's calls a listener causes all take its tokens."""
    for _ in range(30):
        with pytest.raises(BadInput, match="No song on \\*\\*Main FM\\*\\* matches"):
            await ask(service, "zzzq")
    assert simulator.counters["songrequestsearch"] == 1
    assert simulator.counters["songrequestlist"] <= 1
    assert simulator.counters["songrequestmake"] == 0


async def test_refusals_repeated_reuse_the_queue(roomy, simulator):
    simulator.station(1).song_requests.refusal = "Requests are paused for the news"
    for user in range(10):
        with pytest.raises(BadInput, match="paused for the news"):
            await ask(roomy, HARBOUR, user=user)
    assert simulator.counters["songrequestmake"] == 10
    assert simulator.counters["songrequestlist"] <= 1


async def test_suggestions_only_for_members_who_may_request(service, simulator):
    station = main(service)
    await service.configure(
        GUILD, station, enabled=None, role_id=77, cooldown=None, hourly_cap=None, channel_id=None
    )
    assert await service.suggestions(GUILD, station, "harbour", user_id=1, role_ids=(5,)) == []
    assert simulator.counters["songrequestsearch"] == 0  # no search spent on them
    choices = await service.suggestions(GUILD, station, "harbour", user_id=2, role_ids=(77,))
    assert [c.value for c in choices] == ["1001"]
    # The role changed in this process: seen at once.
    await service.configure(
        GUILD, station, enabled=None, role_id=0, cooldown=None, hourly_cap=None, channel_id=None
    )
    assert await service.suggestions(GUILD, station, "harbour", user_id=1, role_ids=(5,))


async def test_no_suggestions_within_the_cooldown(roomy, simulator, clock):
    """/request would refuse them: the keystrokes spend no search either."""
    station = main(roomy)
    await ask(roomy, HARBOUR, user=1)
    searches = simulator.counters["songrequestsearch"]
    assert await roomy.suggestions(GUILD, station, "signal", user_id=1) == []
    assert simulator.counters["songrequestsearch"] == searches
    assert await roomy.suggestions(GUILD, station, "signal", user_id=2)
    clock.advance(601.0)  # the cooldown is over
    assert await roomy.suggestions(GUILD, station, "signal", user_id=1)


async def test_a_role_and_an_off_switch(service):
    station = main(service)
    await service.configure(
        GUILD, station, enabled=None, role_id=77, cooldown=None, hourly_cap=None, channel_id=None
    )
    with pytest.raises(BadInput, match="<@&77>"):
        await ask(service, HARBOUR)
    assert (await ask(service, HARBOUR, role_ids=(77,))).title == HARBOUR
    await service.configure(
        GUILD, station, enabled=False, role_id=None, cooldown=None, hourly_cap=None, channel_id=None
    )
    with pytest.raises(BadInput, match="off in this server"):
        await ask(service, HARBOUR, user=2, role_ids=(77,))
    assert await service.suggestions(GUILD, station, "harbour") == []


async def test_unavailable_answers_and_nothing_typed_in_a_log(service, simulator, caplog):
    caplog.set_level(logging.DEBUG)
    marker = "Private Typing 123"
    simulator.inject("html", endpoint="songrequestsearch")
    assert await service.suggestions(GUILD, main(service), marker) == []
    with pytest.raises(StationUnavailable):
        await ask(service, marker + " again", display_name="SECRET NAME")
    assert all(marker not in r.getMessage() for r in caplog.records)
    assert all("SECRET NAME" not in r.getMessage() for r in caplog.records)


async def test_queue_and_own_positions(service, simulator):
    await ask(service, HARBOUR)
    await ask(service, "Northbound Static - Signal Fire", user=2)
    service.forget_queue(main(service))
    overview = await service.overview(GUILD, main(service), 2)
    assert [s.title for s in overview.queue][:2] == ["Northbound Static - Signal Fire", HARBOUR]
    assert overview.mine == (("Northbound Static - Signal Fire", 2),)
