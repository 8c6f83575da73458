"""What a fleet, a redirect and a hostile host must not do to the station hosts: a takeover
re-announcing an Icecast play, a push kept across a lost lease, an API key sent to another
host, a mount that escapes its path, parses that grow quadratically with what a server sends,
and push streams starving the shared session."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from datetime import UTC

import aiohttp
import pytest
from aiohttp import web
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.announcer.watcher import Announcement, StationWatch, WatchScheduler
from bot.app import create_bot
from bot.config import Settings
from bot.simulator import JINGLES, TRACKS, ManualClock, Programme
from bot.simulator.hosts.azuracast import AzuraCastSimulator
from bot.simulator.hosts.icecast import IcecastSimulator
from bot.simulator.programme import Slot
from bot.station import RetryPolicy, StationError
from bot.station.hosts.azuracast import AzuraCastClient
from bot.station.hosts.azuracast.client import _events
from bot.station.hosts.icecast import IcecastClient
from bot.station.hosts.shoutcast.models import StreamStats
from bot.station.source import station_ref

from .support.waiting import wait_for

A, B = TRACKS[0], TRACKS[1]
KEY = "azura-SECRET-KEY-0123456789"
SLOTS = [Slot(TRACKS[0], 20.0), (JINGLES[0], 5.0), Slot(TRACKS[1], 20.0)]


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


async def test_icecast_takeover_by_a_process_whose_client_saw_the_change_late(session):
    """Process A (the lease holder) announces B with the start A observed. Process B's client
    of the same mount was asked by /nowplaying (registry.snapshot -> client.info(): the shared
    state is only used when <= 5 s old, and a pushing watch stores it rarely) before and after
    the change, so its client holds its OWN observed start for B, 20 s later. When B takes the
    lease over (a rolling deploy, A's kill -9), its watch announces B again: both starts are
    'exact', they differ by > 1 s, so neither the fan-out's sub.last_play check nor
    _known_key sees the same play: the channels get B twice."""
    clock = ManualClock(1_800_000_000.0)
    sim = IcecastSimulator(clock=clock, metaint=1024, burst_bytes=4096)
    sim.add_mount("/live", programme=Programme([(A, 60.0), (B, 300.0)], epoch=clock() - 1.0))
    async with sim:

        def client() -> IcecastClient:
            return IcecastClient(
                sim.base_url,
                "/live",
                session=session,
                clock=clock,
                retry=RetryPolicy(tries=1),
                timeout=aiohttp.ClientTimeout(total=2.0),
            )

        owner, other = client(), client()
        watch_a = StationWatch(owner)
        seen_a: list[Announcement] = []

        async def on_a(announcement: Announcement) -> None:
            seen_a.append(announcement)

        watch_a.listeners.append(on_a)
        await watch_a.poll()  # A on air when OnAir looked
        await other.info()  # a /nowplaying on process B
        clock.advance(60.0)  # B starts
        await watch_a.poll()
        announced = seen_a[-1].play
        assert announced.title == B.title
        clock.advance(20.0)
        await other.info()  # another /nowplaying on process B, 20 s into B

        # Process B takes the lease over: its watch, idle while the lease was A's (as the
        # announcer registers it in a fleet), now polls.
        watch_b = StationWatch(other)
        watch_b.owned = False
        watch_b.owned = True
        seen_b: list[Announcement] = []

        async def on_b(announcement: Announcement) -> None:
            seen_b.append(announcement)

        watch_b.listeners.append(on_b)
        clock.advance(5.0)
        await watch_b.poll()
        # What the fan-out does with it (fanout.py: sub.last_play.same_as / _known_key):
        doubled = [a.play for a in seen_b if not a.play.same_as(announced)]
        assert doubled == [], (
            f"the takeover re-announces {doubled[0].title!r}: start {doubled[0].started} vs "
            f"{announced.started} announced by the first process"
        )


@contextlib.asynccontextmanager
async def redirecting_pair() -> AsyncIterator[tuple[str, list[str | None]]]:
    """`origin` redirects every GET to `elsewhere` (another origin), which records the
    X-API-Key it got."""
    got: list[str | None] = []

    async def collect(request: web.Request) -> web.Response:
        got.append(request.headers.get("X-API-Key"))
        return web.json_response({"station": {"shortcode": "x"}, "now_playing": {}})

    other_app = web.Application()
    other_app.router.add_get("/{tail:.*}", collect)
    other_runner = web.AppRunner(other_app)
    await other_runner.setup()
    other_site = web.TCPSite(other_runner, "127.0.0.1", 0)
    await other_site.start()
    other_port = other_runner.addresses[0][1]

    async def bounce(request: web.Request) -> web.Response:
        raise web.HTTPFound(f"http://localhost:{other_port}{request.path_qs}")

    app = web.Application()
    app.router.add_get("/{tail:.*}", bounce)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", got
    finally:
        await runner.cleanup()
        await other_runner.cleanup()


@pytest.mark.parametrize("guarded", [True, False], ids=["bot-guarded", "cli-unguarded"])
async def test_the_api_key_is_not_sent_to_a_redirect_target_on_another_host(session, guarded):
    """The bot's clients always have a guard, so StationClient._attempt follows redirects by
    hand and sends {**self._headers, **self._auth_headers()} to every hop, whatever its host
    (client.py _attempt). `onair check/watch --kind azuracast --key` build clients without a
    guard: aiohttp follows the redirect itself and drops only Authorization/Cookie, never
    X-API-Key."""
    async with redirecting_pair() as (base_url, got):
        client = AzuraCastClient(
            base_url,
            "x",
            KEY,
            session=session,
            retry=RetryPolicy(tries=1),
            redirect_guard=(lambda url: None) if guarded else None,
            url_guard=(lambda url: None) if guarded else None,
        )
        with contextlib.suppress(StationError):
            await client.info()
        assert got, "the redirect target was not asked"
        assert KEY not in got, "the AzuraCast API key was sent to the redirect's other host"


async def test_a_push_left_from_before_a_lost_lease_is_not_used_on_takeover(session):
    """WatchScheduler.set_owned(False) cancels the follower but leaves watch.pushed; when the
    lease comes back (minutes or hours later) the first poll takes that stale push as the
    station's state instead of asking (watcher.py _poll: info, self.pushed = self.pushed,
    None): it is offered to the history, stored as station_state for the fleet, and its play
    announced when the watch had not seen it."""
    clock = ManualClock(1_800_000_000.0)
    sim = AzuraCastSimulator(clock=clock)
    sim.add_azura(1, "onair_radio", programme=Programme(SLOTS, epoch=clock() - 1.0))
    await sim.start()
    scheduler = AsyncIOScheduler(timezone=UTC)
    scheduler.start()
    watches = WatchScheduler(scheduler)
    client = AzuraCastClient(
        sim.base_url, "onair_radio", session=session, clock=clock, retry=RetryPolicy(tries=1)
    )
    watch = StationWatch(client, job_id="azura")
    try:
        watches.add(watch)
        await wait_for(lambda: client.push_live and watch.detector.current is not None)
        stale = client.last_info
        assert stale is not None
        # A push arrived while a poll was busy (poll_again), then the lease was lost.
        watch.pushed = stale
        watches.set_owned("azura", False)
        clock.advance(45.0)  # two plays later the lease comes back
        asked = sim.counters["nowplaying"] + sim.counters["nowplaying_static"]
        watch.busy = True  # keep the scheduler's own poll out of the way; poll by hand
        watches.set_owned("azura", True)
        watch.busy = False
        await watch.poll()
        assert watch.last_info is not stale, "the first poll after the takeover used a stale push"
        assert sim.counters["nowplaying"] + sim.counters["nowplaying_static"] > asked
    finally:
        watches.remove("azura")
        scheduler.shutdown(wait=False)
        await sim.stop()


def test_an_icecast_mount_with_encoded_dot_segments_is_refused():
    """station_ref's _MOUNT admits '%', and only '/../' is looked for: '/%2e%2e/admin/stats'
    passes, and yarl decodes and removes the dot segments (the ICY GET goes to /admin/stats,
    and a base_url path prefix is escaped)."""
    for mount in ("/%2e%2e/admin/stats", "/live/%2E%2E/%2e%2e/x", "/a%3fkey=x", "/a%5c.."):
        with pytest.raises(ValueError, match="expected the mount"):
            station_ref("icecast", mount)
    assert station_ref("icecast", "/live%20two") == "/live%20two"  # an encoded space is fine


def growth(run: Callable[[int], object], size: int) -> float:
    """How much longer ``run`` takes on 4x the input than on 1x (best of three each): about 4
    for a linear parse, 16 for a quadratic one."""

    def best(n: int) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            run(n)
            times.append(time.perf_counter() - started)
        return min(times)

    return best(4 * size) / max(best(size), 1e-6)


def test_a_shoutcast_7html_of_unclosed_tags_is_read_in_linear_time():
    """A server may answer /7.html with nothing but "<": a tag pattern that scans to the end
    for each of them holds the event loop for seconds per poll."""

    def parse(n: int) -> None:
        with contextlib.suppress(ValueError):
            StreamStats.parse_7html("<html><body>" + "<" * n)

    assert growth(parse, 40_000) < 8


async def test_an_sse_flood_of_short_lines_is_split_in_linear_time():
    """A stream of SSE comment lines in big chunks: splitting them must cost what arrives, not
    its square; and the lines count towards the event bound."""

    class Content:
        def __init__(self, lines: int) -> None:
            self.lines = lines

        async def iter_any(self) -> AsyncIterator[bytes]:
            yield b":\n" * self.lines

    class Response:
        def __init__(self, lines: int) -> None:
            self.content = Content(lines)

    async def split(n: int) -> None:
        with contextlib.suppress(StationError):
            async for _ in _events(Response(n), 8 * 1024 * 1024):  # type: ignore[arg-type]
                pass

    loop = asyncio.get_running_loop()
    times = {}
    for n in (32_000, 128_000):
        runs = []
        for _ in range(3):
            started = loop.time()
            await split(n)
            runs.append(loop.time() - started)
        times[n] = min(runs)
    assert times[128_000] / max(times[32_000], 1e-6) < 8
    with pytest.raises(StationError):  # a flood of comments with no event end is bounded
        async for _ in _events(Response(600_000), 1024 * 1024):  # type: ignore[arg-type]
            pass


async def test_push_streams_do_not_starve_the_polls_of_the_shared_session():
    """Each AzuraCast SSE or Icecast ICY follower holds a connection of the bot's one session
    for good: with a cap on its connections, as many pushing stations as the cap would leave
    every other station's polls waiting. Two streams, then a poll, on the bot's own session."""
    bot = create_bot(
        Settings(
            token="x",
            allowed_station_hosts=("*",),
            allow_http_station_urls=True,
            allow_private_station_urls=True,
        )
    )
    shared = bot.registry.session
    clock = ManualClock(1_800_000_000.0)
    sim = AzuraCastSimulator(clock=clock)
    for number, code in enumerate(("one", "two", "three"), start=1):
        sim.add_azura(number, code, programme=Programme(SLOTS, epoch=clock() - 1.0))
    await sim.start()
    followers: list[asyncio.Task[object]] = []
    try:
        assert isinstance(shared.connector, aiohttp.TCPConnector)
        assert shared.connector.limit == 0  # no cap: what pushes is bounded by the stations
        pushing = [
            AzuraCastClient(sim.base_url, code, session=shared, clock=clock)
            for code in ("one", "two")
        ]
        for client in pushing:
            followers.append(asyncio.ensure_future(anext(aiter(client.changes()))))
        await wait_for(lambda: all(c.push_live for c in pushing), within=5)
        polled = AzuraCastClient(
            sim.base_url,
            "three",
            session=shared,
            clock=clock,
            retry=RetryPolicy(tries=1),
            timeout=aiohttp.ClientTimeout(total=3.0, connect=2.0),
        )
        assert (await polled.info()).now_playing
    finally:
        for task in followers:
            task.cancel()
        await asyncio.gather(*followers, return_exceptions=True)
        await shared.close()
        await sim.stop()


async def test_onair_watch_ends_its_push_follower_before_its_session(caplog):
    """`onair watch` on a pushing host stops its stream follower with the watch: none is left
    reconnecting on the closed session (a traceback at every exit)."""
    from bot.console.modes import watch_station

    clock = ManualClock(1_800_000_000.0)
    sim = AzuraCastSimulator(clock=clock)
    sim.add_azura(1, "onair_radio", programme=Programme(SLOTS, epoch=clock() - 1.0))
    stop = asyncio.Event()
    plays: list[Announcement] = []

    async def on_play(announcement: Announcement) -> None:
        plays.append(announcement)

    async def on_error(error: StationError) -> None:
        raise AssertionError(error)

    async with sim:
        with caplog.at_level("DEBUG", logger="onair"):
            watching = asyncio.ensure_future(
                watch_station(
                    sim.base_url,
                    "onair_radio",
                    None,
                    on_play,
                    on_error,
                    kind="azuracast",
                    stop=stop,
                )
            )
            await wait_for(lambda: bool(plays) and sim.counters["sse"] >= 1)
            stop.set()  # as a Ctrl+C does
            await watching
            left = [t for t in asyncio.all_tasks() if t.get_name().startswith("pushes:")]
    assert [t for t in left if not t.done()] == []  # none left to reconnect on a closed session
    failed = [r for r in caplog.records if r.name.startswith("onair") and r.levelno >= 40]
    assert failed == []
