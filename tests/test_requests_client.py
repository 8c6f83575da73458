"""The song-request client against the simulator over HTTP: every shape of the field notes,
refusals in the station's words, requests off told apart, failures as "unavailable", the query
and the id URL-encoded, and nothing a listener typed in a log line."""

from __future__ import annotations

import logging

import aiohttp
import pytest

from bot.simulator import TRACKS, StationSimulator
from bot.station import (
    Problem,
    RequestRefused,
    RequestsClient,
    RequestsOff,
    RequestTrack,
    StationUnavailable,
)
from bot.station.requests import parse_made, parse_queue, parse_search


def client(sim: StationSimulator, session: aiohttp.ClientSession, **kw) -> RequestsClient:
    kw.setdefault("timeout", aiohttp.ClientTimeout(total=1.0))
    return RequestsClient(sim.base_url, 1, session=session, **kw)


def harbour() -> str:
    return next(t.cast_title for t in TRACKS if t.title == "Harbour Lights")


async def test_search_finds_tracks_with_ids_as_numbers_or_strings(simulator, session):
    requests = client(simulator, session)
    found = await requests.search("harbour")
    assert found.tracks == (RequestTrack("1001", harbour()),)
    assert found.refusal is None
    simulator.station(1).song_requests.shape = "strings"
    assert (await requests.search("Harbour")).tracks == found.tracks
    simulator.station(1).song_requests.shape = "bare_list"
    assert (await requests.search("HARBOUR")).tracks == found.tracks


async def test_nothing_found_is_an_empty_answer_with_the_reason(simulator, session):
    found = await client(simulator, session).search("zzzzzz")
    assert found.tracks == ()
    assert found.refusal == "Nothing found"


async def test_the_query_and_the_id_are_url_encoded(simulator, session):
    requests = client(simulator, session)
    typed = "a&b=c#d ?e+f%20/ü"
    await requests.search(typed)
    assert simulator.request_queries[-1] == {"u": "1", "q": typed}
    with pytest.raises(RequestRefused):
        await requests.request("7&u=2#x")
    assert simulator.request_queries[-1] == {"u": "1", "id": "7&u=2#x"}


async def test_an_accepted_request_plays_next_and_is_queued(simulator, session, clock):
    requests = client(simulator, session)
    station = simulator.station(1)
    now = station.programme.at(clock()).number
    await requests.request("1001")
    [(number, item)] = station.song_requests.accepted
    assert item.cast_title == harbour()
    # The next slot, unless that is a live show (then the one after).
    assert number == now + 1 or station.programme.airing(now + 1).item.kind == "live"
    assert await requests.queue() == (parse_queue([{"title": harbour(), "played": False}])[0],)
    clock.advance(station.programme.airing(number).started - clock() + 0.01)
    assert station.programme.at(clock()).item.cast_title == harbour()
    assert (await requests.queue())[0].played is True


async def test_refusals_carry_the_stations_reason(simulator, session):
    requests = client(simulator, session)
    await requests.request("1001")
    with pytest.raises(RequestRefused) as refused:
        await requests.request("1001")
    assert refused.value.reason == "This song has already been requested"
    simulator.station(1).song_requests.refusal = "Limit reached: 2 requests an hour"
    simulator.station(1).song_requests.refusal_key = "errdetail"
    with pytest.raises(RequestRefused) as refused:
        await requests.request("1002")
    assert refused.value.reason == "Limit reached: 2 requests an hour"
    assert "Limit reached" in refused.value.message


async def test_success_instead_of_error_is_accepted(simulator, session):
    simulator.station(1).song_requests.shape = "success_key"
    await client(simulator, session).request("1003")
    assert simulator.station(1).song_requests.accepted


async def test_requests_off_is_told_apart_by_the_queue(simulator, session):
    simulator.station(1).song_requests.off = True
    requests = client(simulator, session)
    with pytest.raises(RequestsOff):
        await requests.queue()
    with pytest.raises(RequestRefused) as refused:
        await requests.request("1001")
    assert "disabled" in (refused.value.reason or "")
    assert (await requests.search("harbour")).tracks == ()


@pytest.mark.parametrize("kind", ["html", "empty", "truncated", "json_null", "status"])
@pytest.mark.parametrize("endpoint", ["songrequestsearch", "songrequestmake", "songrequestlist"])
async def test_html_empty_or_broken_answers_mean_unavailable(simulator, session, kind, endpoint):
    simulator.inject(kind, endpoint=endpoint, status=502)
    requests = client(simulator, session)
    calls = {
        "songrequestsearch": lambda: requests.search("harbour"),
        "songrequestmake": lambda: requests.request("1001"),
        "songrequestlist": lambda: requests.queue(),
    }
    with pytest.raises(StationUnavailable) as failed:
        await calls[endpoint]()
    assert failed.value.problem is Problem.REQUESTS_UNAVAILABLE


async def test_a_slow_answer_times_out_as_unavailable(simulator, session):
    simulator.inject("delay", endpoint="songrequestsearch", seconds=5.0)
    requests = client(simulator, session, timeout=aiohttp.ClientTimeout(total=0.2))
    with pytest.raises(StationUnavailable):
        await requests.search("harbour")


async def test_what_a_listener_typed_never_reaches_a_log_line(simulator, session, caplog):
    caplog.set_level(logging.DEBUG)
    simulator.inject("html", endpoint="songrequestsearch")
    marker = "SECRET-LISTENER-TEXT"
    with pytest.raises(StationUnavailable) as failed:
        await client(simulator, session).search(marker)
    assert marker not in failed.value.message
    assert any("songrequestsearch" in r.getMessage() for r in caplog.records)
    assert all(marker not in r.getMessage() for r in caplog.records)


def test_every_member_optional_any_body_possible():
    assert parse_search({}).tracks == ()
    assert parse_search({"tracks": None}).tracks == ()
    assert parse_search({"tracks": {"id": 5, "title": "One"}}).tracks == (RequestTrack("5", "One"),)
    weird = [
        {"id": True, "title": "bool id"},
        {"id": 1.5, "title": "fraction"},
        {"id": 2.0, "title": "whole float"},
        {"id": "", "title": "empty id"},
        {"id": "x" * 65, "title": "long id"},
        {"id": 3},
        {"title": "no id"},
        {"id": 4, "title": "\u202e\u0000 spaced\n\ttitle "},
        {"id": 4, "title": "duplicate"},
        "not an object",
        None,
    ]
    assert parse_search(weird).tracks == (
        RequestTrack("2", "whole float"),
        RequestTrack("4", "spaced title"),
    )
    with pytest.raises(StationUnavailable):
        parse_search("text")
    with pytest.raises(StationUnavailable):
        parse_made({})  # neither key: no telling whether the station took it
    with pytest.raises(RequestRefused) as refused:
        parse_made({"error": "Already requested"})
    assert refused.value.reason == "Already requested"
    with pytest.raises(RequestRefused):
        parse_made({"success": False})
    parse_made({"error": False})
    parse_made({"error": "false"})
    parse_made({"success": 1})
    long = parse_search({"error": True, "message": "m" * 5000}).refusal
    assert long is not None
    assert len(long) <= 200
    assert parse_queue([{"title": "A", "played": "1"}, {"title": ""}, {"played": True}]) == (
        parse_queue([{"title": "A", "played": True}])
    )
    with pytest.raises(RequestsOff):
        parse_queue({"error": True})
