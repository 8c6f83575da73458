"""The icecast source through HTTP against the Icecast simulator: the status page's shapes and
quirks, a mount not found, ICY changes with no status poll between, the same-play rule with no
start time from the host, and the watch announcing each play once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp
import pytest

from bot.announcer.watcher import Announcement, StationWatch
from bot.simulator import TRACKS, ManualClock, Programme
from bot.simulator.hosts.icecast import IcecastSimulator
from bot.station import RetryPolicy, StationInfo, StationNotFound
from bot.station.hosts import source_class
from bot.station.hosts.icecast import IcecastClient, IcyPolicy
from bot.station.source import Feature, NotOffered

from .support.waiting import wait_for

A, B, C, D = TRACKS[0], TRACKS[1], TRACKS[2], TRACKS[3]
FAST_ICY = IcyPolicy(read_timeout=2.0, first_delay=0.05, max_delay=0.2, no_metadata_delay=0.2)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(1_800_000_000.0)


@contextlib.asynccontextmanager
async def icecast(
    clock: ManualClock, slots: list, **options: object
) -> AsyncIterator[IcecastSimulator]:
    sim = IcecastSimulator(clock=clock, metaint=1024, burst_bytes=4096, **options)  # type: ignore[arg-type]
    sim.add_mount("/live", programme=Programme(slots, epoch=clock() - 1.0))
    async with sim:
        yield sim


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as client_session:
        yield client_session


def client_of(
    sim: IcecastSimulator, session: aiohttp.ClientSession, clock: ManualClock, mount: str = "/live"
) -> IcecastClient:
    return IcecastClient(
        sim.base_url,
        mount,
        session=session,
        clock=clock,
        retry=RetryPolicy(tries=1),
        timeout=aiohttp.ClientTimeout(total=2.0),
        icy_policy=FAST_ICY,
    )


async def next_change(changes: AsyncIterator[StationInfo | None]) -> StationInfo | None:
    return await asyncio.wait_for(anext(changes), timeout=5.0)


def test_the_kind_is_registered_with_push_only():
    assert source_class("icecast") is IcecastClient
    assert IcecastClient.features == frozenset({Feature.PUSH})


async def test_info_over_http(clock, session):
    async with icecast(clock, [(A, 60.0)], hostname="radio.example.org") as sim:
        client = client_of(sim, session, clock)
        info = await client.info()
        assert info.name == "OnAir Radio"
        assert info.now_playing == A.cast_title
        assert info.listeners == 3
        assert info.links.listen == f"http://radio.example.org:{sim.port}/live"
        assert info.current_play() is not None
        assert info.current_play().started is None
        with pytest.raises(NotOffered):
            await client.playlist()


async def test_several_mounts_and_a_mount_not_found(clock, session):
    async with icecast(clock, [(A, 60.0)]) as sim:
        sim.add_mount("/lofi", programme=Programme([(B, 60.0)], epoch=clock() - 1.0))
        assert '"source":[' in sim.status_body()
        assert (await client_of(sim, session, clock, "/lofi").info()).now_playing == B.cast_title
        with pytest.raises(StationNotFound):
            await client_of(sim, session, clock, "/nope").info()
        for mount in sim.mounts.values():
            mount.up = False
        assert '"source"' not in sim.status_body()
        with pytest.raises(StationNotFound):
            await client_of(sim, session, clock).info(max_age=0)


async def test_broken_json_of_2_4_is_read(clock, session):
    async with icecast(clock, [(A, 60.0)]) as sim:
        sim.set_quirks({"xml2json_24"})
        client = client_of(sim, session, clock)
        sim.update_title("/live", ".5")
        assert '"title":.5,' in sim.status_body()  # what 2.4.4 writes
        assert (await client.info(max_age=0)).now_playing == ".5"
        sim.update_title("/live", " - ")
        assert '"title": - ,' in sim.status_body()
        info = await client.info(max_age=0)
        assert info.current_play() is None  # nothing named on air
        sim.set_quirks({"startup"})
        for mount in sim.mounts.values():
            mount.up = False
        assert sim.status_body().startswith('{"icestats":"server_start"')
        with pytest.raises(StationNotFound):
            await client.info(max_age=0)


async def test_admin_metadata_as_the_real_server(clock, session):
    async with icecast(clock, [(A, 60.0)]) as sim:
        url = f"{sim.base_url}/admin/metadata"
        query = {"mount": "/live", "mode": "updinfo", "song": "Caf\u00e9 - Song"}
        async with session.get(url, params=query) as response:
            assert response.status == 401
            assert response.headers["WWW-Authenticate"] == 'Basic realm="Icecast2 Server"'
        auth = {"Authorization": aiohttp.encode_basic_auth("admin", "hackme")}
        async with session.get(url, params={**query, "mount": "/x"}, headers=auth) as response:
            assert response.status == 400
        async with session.get(url, params=query, headers=auth) as response:
            assert "Metadata update successful" in await response.text()
        # Without charset=UTF-8 the status page shows the UTF-8 read as Latin-1 (as 2.4 does);
        # OnAir undoes it.
        assert "Caf\u00c3\u00a9" in sim.status_body()
        info = await client_of(sim, session, clock).info()
        assert info.now_playing == "Caf\u00e9 - Song"


async def test_a_change_is_seen_through_icy_with_no_status_poll_between(clock, session):
    async with icecast(clock, [(A, 30.0), (B, 30.0)]) as sim:
        client = client_of(sim, session, clock)
        await client.info()
        changes = client.changes()
        try:
            assert await next_change(changes) is None  # connected: poll now
            assert client.push_live
            polls = sim.counters["status"]
            clock.advance(30.0)  # B, exactly now
            info = await next_change(changes)
            assert info is not None
            assert info.now_playing == B.cast_title
            assert sim.counters["status"] == polls  # no status poll between
            play = info.current_play()
            assert play is not None
            assert play.started is not None
            assert play.started_exact
            assert play.started.timestamp() == clock()  # when OnAir saw it change
            assert client.last_info is info  # a command right after asks nobody
            assert client.icy_connections == 1
        finally:
            await changes.aclose()
        assert not client.push_live


async def test_a_new_connections_stale_first_block_is_not_a_change(clock, session):
    """Icecast's burst carries older audio: its first block names the title before."""
    async with icecast(clock, [(A, 30.0), (B, 30.0), (C, 30.0)]) as sim:
        clock.advance(30.5)  # B since half a second: the burst's audio is A's
        client = client_of(sim, session, clock)
        assert (await client.info()).now_playing == B.cast_title
        changes = client.changes()
        try:
            assert await next_change(changes) is None
            clock.advance(30.0)
            info = await next_change(changes)
            assert info is not None
            assert info.now_playing == C.cast_title
        finally:
            await changes.aclose()


async def test_icy_sends_the_same_title_again_is_no_change(clock, session):
    async with icecast(clock, [(A, 30.0), (B, 30.0)]) as sim:
        client = client_of(sim, session, clock)
        await client.info()
        changes = client.changes()
        try:
            assert await next_change(changes) is None
            sim.update_title("/live", A.cast_title)  # an encoder sends its title again
            sim.update_title("/live", "Other - Thing", utf8=True)
            info = await next_change(changes)
            assert info is not None
            assert info.now_playing == "Other - Thing"
        finally:
            await changes.aclose()


@pytest.mark.parametrize("quirk", ["no_metadata", "metaint_zero"])
async def test_a_mount_without_metadata_is_polled_only(clock, session, quirk):
    async with icecast(clock, [(A, 30.0)]) as sim:
        sim.set_quirks({quirk})
        client = client_of(sim, session, clock)
        task = asyncio.create_task(anext(client.changes()))
        # It asked, gave up, asked again after its backoff.
        await wait_for(lambda: sim.counters["stream"] >= 2)
        assert not task.done()
        assert not client.push_live
        task.cancel()


async def test_icy_reconnects_after_the_server_drops_it(clock, session):
    async with icecast(clock, [(A, 30.0), (B, 30.0)]) as sim:
        client = client_of(sim, session, clock)
        await client.info()
        changes = client.changes()
        try:
            assert await next_change(changes) is None
            assert sim.drop_streams() == 1
            assert await next_change(changes) is None  # connected again
            assert client.icy_connections == 2
            clock.advance(30.0)
            info = await next_change(changes)
            assert info is not None
            assert info.now_playing == B.cast_title
        finally:
            await changes.aclose()


async def test_listeners_leave_out_onairs_own_connection(clock, session):
    async with icecast(clock, [(A, 30.0)]) as sim:
        client = client_of(sim, session, clock)
        changes = client.changes()
        try:
            assert await next_change(changes) is None
            assert '"listeners":4' in sim.status_body()  # 3 and OnAir
            assert (await client.info(max_age=0)).listeners == 3
        finally:
            await changes.aclose()


# The same-play rule with no start time from the host --------------------------------------


async def watch_titles(watch: StationWatch, seen: list[Announcement]) -> list[str]:
    await watch.poll()
    return [a.play.title for a in seen]


async def test_each_play_once_and_a_song_again_after_another_is_announced(clock, session):
    """X (on air when OnAir looked), A, B, A: each poll of a play is one play; the second A,
    after B, is a new one (OnAir saw it replace B); none has a start from Icecast."""
    slots = [(D, 40.0), (A, 40.0), (B, 40.0), (A, 40.0)]
    async with icecast(clock, slots) as sim:
        client = client_of(sim, session, clock)
        watch = StationWatch(client)
        seen: list[Announcement] = []

        async def listener(announcement: Announcement) -> None:
            seen.append(announcement)

        watch.listeners.append(listener)
        for _ in range(3):
            assert await watch_titles(watch, seen) == [D.title]
        for _step in range(3):
            clock.advance(40.0)
            for _ in range(3):
                await watch_titles(watch, seen)
        assert [a.play.title for a in seen] == [D.title, A.title, B.title, A.title]
        first_a, second_a = seen[1].play, seen[3].play
        assert not first_a.same_as(second_a)
        assert first_a.claim_key != second_a.claim_key
        assert seen[0].play.started is None
        assert second_a.started is not None
        assert second_a.started.timestamp() == clock()

        # A restart while A plays: the new client never saw A start, the watch knows A.
        restarted = StationWatch(client_of(sim, session, clock), last_play=second_a)
        again: list[Announcement] = []

        async def listener_again(announcement: Announcement) -> None:
            again.append(announcement)

        restarted.listeners.append(listener_again)
        clock.advance(5.0)
        await restarted.poll()
        assert again == []


async def test_a_source_gone_for_one_poll_is_not_a_new_play(clock, session):
    async with icecast(clock, [(A, 60.0), (B, 60.0)]) as sim:
        client = client_of(sim, session, clock)
        watch = StationWatch(client)
        seen: list[Announcement] = []

        async def listener(announcement: Announcement) -> None:
            seen.append(announcement)

        watch.listeners.append(listener)
        await watch.poll()
        clock.advance(60.0)
        await watch.poll()
        sim.mounts["/live"].up = False  # the source reconnects
        await watch.poll()
        assert watch.status.state != "ok"
        sim.mounts["/live"].up = True
        await watch.poll()
        await watch.poll()
        assert [a.play.title for a in seen] == [A.title, B.title]
