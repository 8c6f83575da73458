"""The AzuraCast client over HTTP against the AzuraCast simulator (a real local server): now
playing, the static file and its fallback, recent plays, listen URLs, the schedule, the key's
place, a track change announced once, a blip, and the push: each change announced from
AzuraCast's SSE with no poll, a stream cut mid-event, a server without the endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from datetime import UTC

import aiohttp
import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.announcer import Announcement
from bot.announcer.watcher import StationWatch, WatchScheduler
from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, ManualClock, Programme
from bot.simulator.hosts.azuracast import AzuraCastSimulator
from bot.simulator.programme import Slot
from bot.station import RetryPolicy, StationClient
from bot.station.errors import NotOffered, RequestRefused, StationNotFound
from bot.station.hosts.azuracast import AzuraCastClient, AzuraCastRequests
from bot.station.source import Feature

from .support.waiting import wait_for

# Harbour Lights 0-20 s, a jingle 20-25, the second track 25-45, the live show 45-105 (tracks report
# their library length: songs, not jingles).
SLOTS = [
    Slot(TRACKS[0], 20.0),
    (JINGLES[0], 5.0),
    Slot(TRACKS[1], 20.0),
    (LIVE_SHOW, 60.0),
]
KEY = "azura-KEY-0123456789abcdef"


@pytest.fixture
async def azura() -> AsyncIterator[AzuraCastSimulator]:
    clock = ManualClock(1_800_000_000.0)
    sim = AzuraCastSimulator(clock=clock)
    programme = Programme(SLOTS, epoch=clock() - 1.0)
    sim.add_azura(1, "onair_radio", programme=programme, library_durations=True)
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


def make(
    sim: AzuraCastSimulator, session: aiohttp.ClientSession, ref: int | str = "onair_radio", **kw
) -> AzuraCastClient:  # type: ignore[no-untyped-def]
    client = AzuraCastClient(
        sim.base_url,
        ref,
        kw.pop("key", None),
        session=session,
        clock=sim.clock,
        retry=RetryPolicy(tries=1),
        timeout=aiohttp.ClientTimeout(total=2.0),
        **kw,
    )
    client.push_backoff = (0.01, 0.05)
    return client


def polls(sim: AzuraCastSimulator) -> int:
    return sim.counters["nowplaying"] + sim.counters["nowplaying_static"]


async def test_now_playing_recent_and_listen_links(azura, session):
    client = make(azura, session)
    info = await client.info()
    play = info.current_play()
    assert play is not None
    assert (play.artist, play.title) == (TRACKS[0].artist, TRACKS[0].title)
    assert play.started_exact
    assert play.started is not None
    assert int(play.started.timestamp()) == int(azura.clock() - 1.0)
    assert info.next_display == JINGLES[0].cast_title
    assert info.links.listen == "https://127.0.0.1/listen/onair_radio/radio.mp3"
    assert info.artwork is not None
    assert info.artwork.startswith(azura.base_url)
    # The static file answered (no PHP); the API was not asked.
    assert azura.counters["nowplaying_static"] == 1
    assert azura.counters["nowplaying"] == 0
    azura.clock.advance(30)  # the second track, after the jingle and Harbour Lights
    info = await client.info(max_age=0)
    assert [item.track_title for item in info.recent[:3]] == [
        TRACKS[1].title,
        JINGLES[0].title,
        TRACKS[0].title,
    ]
    assert info.playback is not None
    assert info.playback.position is not None
    assert round(info.playback.position.total_seconds()) == 6  # the second track began at 25 s


async def test_a_number_learns_the_shortcode_and_no_static_file_falls_back(azura, session):
    client = make(azura, session, ref=1)
    await client.info()
    assert client.shortcode == "onair_radio"
    assert azura.counters["nowplaying:1"] == 1
    azura.find("onair_radio").static_file = False  # type: ignore[union-attr]
    await client.info(max_age=0)  # the static file 404s (nginx's page): the API answers
    assert client.static_file is False
    await client.info(max_age=0)
    assert azura.counters["nowplaying_static"] == 1  # not asked again
    assert azura.counters["nowplaying:1"] == 3


async def test_unknown_station_is_azuracasts_404(azura, session):
    with pytest.raises(StationNotFound):
        await make(azura, session, ref="nope").info()
    async with session.get(f"{azura.base_url}/api/nowplaying/nope") as response:
        body = await response.json()
    assert response.status == 404
    assert body["type"] == "NotFoundException"
    assert body["message"] == "Station not found."
    assert body["success"] is False


async def test_the_key_travels_in_a_header_never_the_url(azura, session):
    seen: list[tuple[str, str | None]] = []

    async def trace(_session, _ctx, params) -> None:  # type: ignore[no-untyped-def]
        seen.append((str(params.url), params.headers.get("X-API-Key")))

    tracing = aiohttp.TraceConfig()
    tracing.on_request_start.append(trace)
    async with aiohttp.ClientSession(trace_configs=[tracing]) as traced:
        client = make(azura, traced, key=KEY)
        await client.info()
        await client.schedule()
    assert seen
    assert all(KEY not in url and key == KEY for url, key in seen)
    assert KEY not in repr(client)


async def test_schedule_lists_the_live_shows(azura, session):
    client = make(azura, session)
    assert client.offers(Feature.SCHEDULE)
    shows = await client.schedule()
    assert shows[0].title == LIVE_SHOW.artist  # AzuraCast titles a streamer slot by its DJ
    assert shows[0].name == LIVE_SHOW.artist
    assert shows[0].is_live_show
    assert not shows[0].is_now
    assert shows[0].start.tzinfo == UTC
    assert int(shows[0].start.timestamp()) == int(azura.clock() - 1.0 + 45)


async def test_a_host_without_a_schedule_says_so_without_asking(azura, session):
    client = StationClient(azura.base_url, 1, session=session)
    with pytest.raises(NotOffered):
        await client.schedule()
    assert azura.schedule_queries == []


async def test_the_schedule_is_read_in_its_calendar_form_a_week_ahead(azura, session):
    client = make(azura, session)
    await client.schedule()
    (query,) = azura.schedule_queries
    assert query["start"].endswith("Z")
    assert query["end"].endswith("Z")


async def test_a_change_is_announced_once_and_a_blip_is_not_a_new_play(azura, session):
    client = make(azura, session)
    watch = StationWatch(client)
    seen: list[Announcement] = []

    async def listener(announcement: Announcement) -> None:
        seen.append(announcement)

    watch.listeners.append(listener)
    await watch.poll()
    await watch.poll()
    assert [a.play.title for a in seen] == [TRACKS[0].title]
    station = azura.find("onair_radio")
    assert station is not None
    station.quirks.add("offline")  # down for one poll
    azura.clock.advance(2)
    await watch.poll()
    station.quirks.discard("offline")
    azura.clock.advance(2)
    await watch.poll()
    assert [a.play.title for a in seen] == [TRACKS[0].title]
    azura.clock.advance(25)  # the jingle aired between two polls; the second track is on
    await watch.poll()
    await watch.poll()
    titles = [a.play.title for a in seen]
    assert titles[0] == TRACKS[0].title
    assert titles[-1] == TRACKS[1].title
    assert titles.count(TRACKS[1].title) == 1


async def test_the_live_show_is_the_djs(azura, session):
    client = make(azura, session)
    azura.clock.advance(50)
    play = (await client.info()).current_play()
    assert play is not None
    assert (play.artist, play.title, play.live) == (LIVE_SHOW.artist, LIVE_SHOW.title, True)
    station = azura.find("onair_radio")
    assert station is not None
    station.quirks.add("live_no_metadata")
    play = (await client.info(max_age=0)).current_play()
    assert play is not None
    assert (play.title, play.live) == (LIVE_SHOW.artist, True)  # the streamer's name


# Pushes ------------------------------------------------------------------------------------


async def next_change(changes: AsyncIterator[object]) -> object:
    return await asyncio.wait_for(anext(changes), 5)


async def test_each_change_is_pushed_without_a_poll(azura, session):
    client = make(azura, session)
    changes = client.changes()
    try:
        first = await next_change(changes)
        assert client.push_live
        assert first.current_play().title == TRACKS[0].title  # type: ignore[attr-defined]
        asked = polls(azura)
        azura.clock.advance(20)  # the jingle
        pushed = await next_change(changes)
        assert pushed.current_play().title == JINGLES[0].title  # type: ignore[attr-defined]
        assert polls(azura) == asked  # pushed, not polled
        # The pushed answer is the client's latest: /nowplaying right after asks nobody.
        assert (await client.info()).current_play().title == JINGLES[0].title  # type: ignore[union-attr]
        assert polls(azura) == asked
    finally:
        await changes.aclose()  # type: ignore[attr-defined]
    assert not client.push_live


async def test_a_stream_cut_mid_event_reconnects_and_recovers(azura, session):
    client = make(azura, session)
    changes = client.changes()
    try:
        await next_change(changes)
        assert azura.streams("onair_radio") == 1
        assert azura.drop_streams("onair_radio") == 1
        # Reconnected: the connect reply recovers the channel's last publication.
        again = await next_change(changes)
        assert client.push_connects == 2
        assert again.current_play().title == TRACKS[0].title  # type: ignore[attr-defined]
        azura.clock.advance(20)
        pushed = await next_change(changes)
        assert pushed.current_play().title == JINGLES[0].title  # type: ignore[attr-defined]
    finally:
        await changes.aclose()  # type: ignore[attr-defined]


async def test_a_server_without_the_push_endpoint_is_polled(azura, session):
    azura.sse_enabled = False
    client = make(azura, session)
    client.push_missing_retry = 3600.0
    changes = client.changes()
    waiting = asyncio.ensure_future(anext(changes))
    try:
        await wait_for(lambda: azura.counters["sse"] >= 1, within=5)
        await asyncio.sleep(0)
        assert not waiting.done()  # nothing pushed, nothing claimed
        assert not client.push_live
    finally:
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
    # The watch polls as usual.
    watch = StationWatch(client)
    asked = polls(azura)
    await watch.poll()
    assert watch.detector.current is not None
    assert polls(azura) == asked + 1


async def test_the_watch_announces_a_push_with_no_poll_in_between(azura, session):
    scheduler = AsyncIOScheduler(timezone=UTC)
    scheduler.start()
    watches = WatchScheduler(scheduler)
    client = make(azura, session)
    watch = StationWatch(client, job_id="azura")
    seen: list[Announcement] = []

    async def listener(announcement: Announcement) -> None:
        seen.append(announcement)

    watch.listeners.append(listener)
    try:
        watches.add(watch)
        await wait_for(lambda: len(seen) == 1 and client.push_live and not watch.busy)
        asked = polls(azura)
        azura.clock.advance(25)  # the jingle, then the second track
        await wait_for(lambda: seen[-1].play.title == TRACKS[1].title)
        # The jingle that aired between is recovered from song_history, late; each once.
        assert [a.play.title for a in seen] == [TRACKS[0].title, JINGLES[0].title, TRACKS[1].title]
        assert polls(azura) == asked  # announced from the push alone
    finally:
        watches.remove("azura")
        scheduler.shutdown(wait=False)


async def test_requests_search_submit_and_refuse(azura, session):
    requests = AzuraCastRequests(azura.base_url, 1, session=session)
    found = await requests.search("neon")
    assert [t.title for t in found.tracks] == [TRACKS[3].cast_title]
    assert azura.request_queries[-1] == {"searchPhrase": "neon", "rowCount": "25", "current": "1"}
    await requests.request(found.tracks[0].id)
    assert "bot" not in azura.request_queries[-1]["user_agent"].casefold()
    with pytest.raises(RequestRefused) as refused:
        await requests.request(found.tracks[0].id)
    assert refused.value.reason == ("This song was already requested and will play soon.")
    assert await requests.state() == ("on", None)  # the queue needs a key
    azura.find("onair_radio").requests_enabled = False  # type: ignore[union-attr]
    assert await requests.state() == ("off", None)


async def test_an_oversized_event_is_dropped_and_the_stream_reconnects(session):
    from aiohttp import web

    hits: list[str] = []

    async def huge(request: web.Request) -> web.StreamResponse:
        hits.append(request.query.get("cf_connect", ""))
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        np = {
            "station": {"name": "Big", "description": "d" * 200_000},
            "now_playing": {"played_at": 1_800_000_000, "song": {"title": "Too Big"}},
            "is_online": True,
        }
        pub = {"channel": "station:onair_radio", "pub": {"data": {"np": np}, "offset": 1}}
        with contextlib.suppress(ConnectionResetError, RuntimeError):
            await response.write(f"data: {json.dumps(pub)}\n\n".encode())
        return response

    app = web.Application()
    app.router.add_get("/api/live/nowplaying/sse", huge)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    client = AzuraCastClient(f"http://127.0.0.1:{port}", "onair_radio", session=session)
    client.push_backoff = (0.01, 0.02)
    client.push_max_event_bytes = 64 * 1024
    changes = client.changes()
    waiting = asyncio.ensure_future(anext(changes))
    try:
        await wait_for(lambda: len(hits) >= 3)
        assert not waiting.done()  # nothing taken from an event past the bound
        assert client.last_info is None
        assert hits[0] == '{"subs":{"station:onair_radio":{"recover":true}}}'
    finally:
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)
        await runner.cleanup()
