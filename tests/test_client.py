"""The station client against the simulator over real HTTP on loopback."""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from datetime import date
from typing import Any

import aiohttp
import pytest

from bot.simulator import QUIRKS, StationSimulator
from bot.station import (
    RetryPolicy,
    StationAuthError,
    StationClient,
    StationError,
    StationNotFound,
    StationResponseError,
    StationUnavailable,
)

from .support.stations import KEY, make_client
from .support.waiting import wait_for


async def test_info_playlist_stats(simulator, session):
    client = make_client(simulator, session)
    info = await client.info()
    airing = simulator.station(1).programme.at(simulator.clock())
    play = info.current_play()
    assert play is not None
    assert (play.artist, play.title) == (airing.item.artist, airing.item.title)
    assert play.started_exact
    assert len(info.recent) == 10
    assert info.links.listen
    assert info.links.listen.startswith("https://")
    assert info.recent[0].artwork
    assert "ARTID" not in info.recent[0].artwork

    playlist = await client.playlist()
    assert len(playlist.items) == 51
    assert any(i.played for i in playlist.items)
    assert any(not i.played for i in playlist.items)

    stats = await client.stats(date(2026, 11, 1), date(2026, 11, 7))
    assert stats.days[0].day == date(2026, 10, 31)  # outside the range, as the spec recorded
    assert len(stats.days_between(date(2026, 11, 1), date(2026, 11, 7))) == 7
    assert stats.total_sessions == sum(
        d.sessions for d in stats.days_between(date(2026, 11, 1), date(2026, 11, 7))
    )


@pytest.mark.parametrize("available", ["api/getplaylist", "api/info/getplaylist"])
async def test_playlist_works_on_either_path_and_remembers_it(simulator, session, available):
    simulator.playlist_paths = {available}
    StationClient.forget_playlist_path(simulator.base_url)
    client = make_client(simulator, session, cache=None)
    first = await client.playlist()
    assert first.items
    other = make_client(simulator, session)  # a second client for the same base URL
    before = dict(simulator.counters)
    await other.playlist()
    assert simulator.counters[available] == before.get(available, 0) + 1
    missing = ({"api/getplaylist", "api/info/getplaylist"} - {available}).pop()
    assert simulator.counters[missing] == before.get(missing, 0)  # no second 404 once learned


async def test_playlist_not_found_on_both_paths(simulator, session):
    simulator.playlist_paths = set()
    StationClient.forget_playlist_path(simulator.base_url)
    with pytest.raises(StationNotFound):
        await make_client(simulator, session).playlist()


@pytest.mark.parametrize("quirk", sorted(QUIRKS))
async def test_every_quirk_still_parses(simulator, session, quirk):
    simulator.set_quirks([quirk])
    client = make_client(simulator, session)
    info = await client.info()
    play = info.current_play()
    assert play is not None
    assert play.title
    assert info.listener_count is not None
    playlist = await client.playlist()
    assert playlist.items


async def test_key_is_required_and_missing_key_is_auth_error(simulator, session):
    with pytest.raises(StationAuthError):
        await make_client(simulator, session, key="wrong").info()
    with pytest.raises(StationAuthError):
        await make_client(simulator, session, key=None).info()
    simulator.station(1).allow_keyless = True
    assert (await make_client(simulator, session, key=None).info()).name


async def test_unknown_station(simulator, session):
    client = StationClient(simulator.base_url, 99, KEY, session=session)
    with pytest.raises(StationNotFound):
        await client.info()


FAULTS = [
    ({"kind": "status", "status": 500}, StationUnavailable),
    ({"kind": "status", "status": 502}, StationUnavailable),
    ({"kind": "status", "status": 429}, StationUnavailable),
    ({"kind": "status", "status": 418}, StationResponseError),
    ({"kind": "status", "status": 401}, StationAuthError),
    ({"kind": "delay", "seconds": 5}, StationUnavailable),
    ({"kind": "html"}, StationResponseError),
    ({"kind": "truncated"}, StationResponseError),
    ({"kind": "json_array"}, StationResponseError),
    ({"kind": "json_null"}, StationResponseError),
    ({"kind": "empty"}, StationResponseError),
    ({"kind": "huge"}, StationResponseError),
    ({"kind": "drop"}, StationUnavailable),
    ({"kind": "error_json"}, StationAuthError),
]

# A "delay" fault answers after 5 s: the client gives up after its timeout on every try, so a
# short one keeps the test fast (the mapping and the retries are the same).
SHORT_TIMEOUT = aiohttp.ClientTimeout(total=0.2)


def fault_client(
    simulator: StationSimulator, session: aiohttp.ClientSession, fault: dict[str, Any]
) -> StationClient:
    if fault["kind"] == "delay":
        return make_client(simulator, session, timeout=SHORT_TIMEOUT)
    return make_client(simulator, session)


@pytest.mark.parametrize(
    ("fault", "error"), FAULTS, ids=[f[0]["kind"] + str(f[0].get("status", "")) for f in FAULTS]
)
async def test_every_fault_maps_to_its_error_within_budget(simulator, session, fault, error):
    simulator.inject(**fault)
    client = fault_client(simulator, session, fault)
    with pytest.raises(error) as caught:
        await client.info()
    # Bounded by attempts, not by a stopwatch (a loaded machine is slow, not wrong): the client
    # gave up after at most its ``tries`` (test_the_budget_cuts_a_slow_try_short proves the
    # time budget itself). aiohttp resends a GET once by itself when a reused keep-alive
    # connection turns out closed ("drop"), hence up to two requests a try.
    assert 1 <= simulator.counters["info"] <= 2 * client.retry.tries
    assert KEY not in str(caught.value)
    simulator.faults.clear()
    assert (await client.info(max_age=0)).name  # recovers on the next call


async def test_the_budget_cuts_a_slow_try_short(simulator, session):
    """A budget shorter than one try: that try is cut at the budget and none follows, however
    many tries the policy allows (the server answers after 5 s, far past the budget)."""
    simulator.inject("delay", seconds=5)
    client = make_client(simulator, session, retry=RetryPolicy(tries=5, budget=0.3))
    started = time.monotonic()
    with pytest.raises(StationUnavailable):
        await client.info()
    assert simulator.counters["info"] == 1
    assert time.monotonic() - started >= 0.29  # it did wait out the budget (a lower bound only)


async def test_retries_5xx_then_succeeds(simulator, session):
    simulator.inject("status", status=503, times=2)
    info = await make_client(simulator, session).info()
    assert info.name
    assert simulator.counters["info"] == 3


async def test_no_retry_on_4xx(simulator, session):
    simulator.inject("status", status=403, times=1)
    with pytest.raises(StationAuthError):
        await make_client(simulator, session).info()
    assert simulator.counters["info"] == 1


async def test_retry_after_is_honoured_within_budget(simulator, session):
    simulator.inject("status", status=429, retry_after=0.2, times=1)
    started = time.monotonic()
    info = await make_client(simulator, session).info()
    assert info.name
    assert time.monotonic() - started >= 0.2
    simulator.inject("status", status=503, retry_after=60, times=1)
    with pytest.raises(StationUnavailable) as caught:
        await make_client(simulator, session).info()
    assert caught.value.retry_after == 60


async def test_big_body_refused_while_streaming(simulator, session):
    simulator.inject("huge", times=1)
    client = make_client(simulator, session, max_bytes=64 * 1024)
    with pytest.raises(StationResponseError, match="too large"):
        await client.info()


async def test_single_flight_100_concurrent_calls_one_request(simulator, session):
    client = make_client(simulator, session)
    simulator.latency = 0.05
    results = await asyncio.gather(*(client.info() for _ in range(100)))
    assert simulator.counters["info"] == 1
    assert all(r is results[0] for r in results)
    await client.info()  # cached
    assert simulator.counters["info"] == 1
    await client.info(max_age=0)  # forced refresh
    assert simulator.counters["info"] == 2


async def test_single_flight_shares_errors_and_survives_cancellation(simulator, session):
    client = make_client(simulator, session)
    simulator.latency = 0.1
    first = asyncio.create_task(client.info())
    second = asyncio.create_task(client.info())
    # The shared request reached the station (which answers 0.1 s later): both are waiting on it.
    await wait_for(lambda: simulator.counters["info"] == 1)
    first.cancel()
    assert (await second).name
    assert simulator.counters["info"] == 1


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


@pytest.mark.parametrize(
    "fault",
    [
        {"kind": "status", "status": 500},
        {"kind": "delay", "seconds": 5},
        {"kind": "drop"},
        {"kind": "html"},
        {"kind": "status", "status": 403},
        {"kind": "status", "status": 404},
    ],
)
async def test_key_never_in_exception_chain_or_logs(simulator, session, caplog, fault):
    caplog.set_level(logging.DEBUG)
    simulator.inject(**fault)
    client = fault_client(simulator, session, fault)
    with pytest.raises(StationError) as caught:
        await client.info()
    chain = _chain(caught.value)
    formatted = "".join(traceback.format_exception(caught.value))
    for exc in chain:
        assert KEY not in str(exc)
        assert KEY not in repr(exc)
        for arg in exc.args:
            assert KEY not in repr(arg)
    assert KEY not in formatted
    assert KEY not in caplog.text
    assert KEY not in repr(client)


async def test_connection_refused_is_unavailable_without_key(session):
    client = StationClient(
        "http://127.0.0.1:9",
        1,
        KEY,
        session=session,
        retry=RetryPolicy(tries=2, base_delay=0.01, budget=2),
    )
    with pytest.raises(StationUnavailable) as caught:
        await client.info()
    assert all(KEY not in repr(e) for e in _chain(caught.value))


async def test_client_closes_only_its_own_session(simulator, session):
    shared = make_client(simulator, session)
    await shared.close()
    assert not session.closed
    own = StationClient(simulator.base_url, 1, KEY)
    await own.info()
    own_session = own.session
    await own.close()
    assert own_session is not None
    assert own_session.closed


async def test_a_key_that_is_not_text_fails_as_a_station_error(session):
    # A lone surrogate (from a modal's JSON or a key_env variable of non-UTF-8 bytes) has no
    # UTF-8 form: the request fails, and so must the redaction of its error path, as a
    # StationError, never a UnicodeEncodeError.
    client = StationClient(
        "http://127.0.0.1:9", 1, "abc\ud800", session=session, retry=RetryPolicy(tries=1)
    )
    with pytest.raises(StationError):
        await client.info()


@pytest.mark.parametrize("blip", ["stopped", "nothing"])
async def test_a_blip_shapes_one_info_answer_and_no_other_endpoint(simulator, session, blip):
    """The simulator's play-out blips (issue 27): the station answers, with nothing playing,
    for ``times`` answers of ``info``; the playlist is served as ever meanwhile."""
    simulator.inject(blip, times=1)
    client = make_client(simulator, session)
    await client.playlist()
    assert len(simulator.faults) == 1  # not taken by the playlist
    blipped = await client.info(max_age=0)
    assert (blipped.current_play() is None) == (blip == "nothing")
    assert not blipped.now_playing
    assert blipped.playback is not None
    assert blipped.playback.state == ("stop" if blip == "stopped" else "play")
    assert (blipped.recent == ()) == (blip == "nothing")
    again = await client.info(max_age=0)
    assert again.now_playing
    assert len(simulator.faults) == 0
