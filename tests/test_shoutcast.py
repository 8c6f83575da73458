"""The Shoutcast DNAS source: its answers parsed as the DNAS writes them (sc_serv 2.6's
protocol_HTTPStyle.cpp, and answers of real 2.4.7 / 2.6.1 servers), and the real client over HTTP
against the DNAS simulator on a manual clock: plays, their exact starts, a stream without a
source, a sid the DNAS does not have, a 1.x DNAS."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest

from bot.announcer.watcher import StationWatch
from bot.console.summary import now_playing_lines
from bot.simulator import JINGLES, TRACKS, ManualClock, Programme
from bot.simulator.hosts.shoutcast import SILENT_FRAME, ShoutcastSimulator
from bot.simulator.programme import Slot
from bot.station import RetryPolicy
from bot.station.errors import NotOffered, StationResponseError
from bot.station.hosts import source_class
from bot.station.hosts.shoutcast import ShoutcastClient
from bot.station.hosts.shoutcast.models import StreamStats, parse_played, station_info
from bot.station.info import Links
from bot.station.source import Feature

from .support.stations import serving

# track A 0-40 s, a jingle 40-45, track B 45-85, then A again (the programme repeats).
SLOTS = [Slot(TRACKS[0], 40.0), (JINGLES[0], 5.0), Slot(TRACKS[1], 40.0)]

# A real 2.6.1.777 answer (kept by a project that parses it), names and order as sent.
REAL_STATS: dict[str, Any] = {
    "currentlisteners": 1,
    "peaklisteners": 3,
    "maxlisteners": 200,
    "uniquelisteners": 1,
    "averagetime": 37,
    "servergenre": "Education",
    "servergenre2": "",
    "servergenre3": "",
    "servergenre4": "",
    "servergenre5": "",
    "serverurl": "https://www.example.fr/",
    "servertitle": "SMB Star Radio",
    "songtitle": "Neffex - Ready to kill",
    "streamhits": 169,
    "streamstatus": 1,
    "backupstatus": 0,
    "streamlisted": 0,
    "streamlistederror": 9,
    "streampath": "/",
    "streamuptime": 235845,
    "bitrate": "128",
    "samplerate": "44100",
    "content": "audio/mpeg",
    "version": "2.6.1.777 (posix(linux x86))",
}


def make_client(sim: ShoutcastSimulator, session: aiohttp.ClientSession, sid: int = 1) -> Any:
    return ShoutcastClient(
        sim.base_url,
        sid,
        session=session,
        retry=RetryPolicy(tries=1),
        timeout=aiohttp.ClientTimeout(total=2.0),
        clock=sim.clock,
    )


@pytest.fixture
async def dnas() -> AsyncIterator[ShoutcastSimulator]:
    clock = ManualClock(1_800_000_000.0)
    sim = ShoutcastSimulator(clock=clock)
    sim.add_station(1, key=None, programme=Programme(SLOTS, epoch=clock() - 1.0))
    async with serving(sim):
        yield sim


def started(sim: ShoutcastSimulator, number: int) -> datetime:
    """The exact start /played gives for the ``number``-th play of station 1."""
    return datetime.fromtimestamp(int(sim.station(1).programme.airing(number).started), UTC)


# Parsing -------------------------------------------------------------------------------------


def test_a_real_stats_answer_is_read_with_its_numbers_as_sent():
    stats = StreamStats.parse(REAL_STATS)
    assert stats.on_air
    assert stats.title == "Neffex - Ready to kill"
    assert stats.name == "SMB Star Radio"
    assert stats.genre == "Education"
    assert stats.listeners == 1
    assert stats.path == "/"
    assert stats.next_title is None  # written only when the source sends one


def test_numbers_as_strings_and_hostile_values_are_read_or_left_unknown():
    stats = StreamStats.parse(
        REAL_STATS
        | {
            "currentlisteners": "17",
            "streamstatus": "1",
            "servertitle": "x" * 5000,
            "streampath": "//evil.example/",
            "servergenre": {"nested": True},
            "nexttitle": "Next - One",
        }
    )
    assert stats.listeners == 17
    assert stats.on_air
    assert stats.name is not None
    assert len(stats.name) == 512
    assert stats.path is None  # not a path on this DNAS
    assert stats.genre is None
    assert stats.next_title == "Next - One"
    with pytest.raises(StationResponseError):
        StreamStats.parse([REAL_STATS])


def test_no_source_means_nothing_on_air_even_with_the_last_title_kept():
    # The DNAS keeps the last title after its source leaves; streamstatus says there is none.
    stats = StreamStats.parse(REAL_STATS | {"streamstatus": 0, "currentlisteners": 0})
    assert not stats.on_air
    assert stats.title is None
    info = station_info(stats, (), Links(), datetime.now(UTC))
    assert info.current_play() is None


def test_played_newest_first_with_exact_starts_and_tags():
    played = parse_played(
        [
            {
                "playedat": 1800000100,
                "title": "Artist B - Song B",
                "metadata": {"tit2": "Song B", "tpe1": "Artist B"},
            },
            {"playedat": "1800000000", "title": "Artist A - Song A"},  # the document's string
            {"playedat": 10**40, "title": "Far Future - Song"},  # hostile: no start, still a play
            {"title": ""},  # nothing to show
            "not an entry",
            {"playedat": 1799999000, "title": "Old - Song", "metadata": {"tit2": "Old - Song"}},
        ]
    )
    assert [p.title for p in played] == [
        "Artist B - Song B",
        "Artist A - Song A",
        "Far Future - Song",
        "Old - Song",
    ]
    assert played[0].started == datetime.fromtimestamp(1800000100, UTC)
    assert played[0].artist_and_title == ("Artist B", "Song B")
    assert played[1].started == datetime.fromtimestamp(1800000000, UTC)
    assert played[2].started is None
    # A 1.x source's whole title as TIT2 alone: split like the title itself.
    assert played[3].artist_and_title == ("Old", "Song")
    assert parse_played({"weird": "shape"}) == ()


def test_the_play_on_air_starts_at_the_history_head_when_its_title_matches():
    stats = StreamStats.parse(REAL_STATS)
    head = parse_played([{"playedat": 1800000000, "title": "Neffex - Ready to kill"}])
    info = station_info(stats, head, Links(), datetime.fromtimestamp(1800000030, UTC))
    play = info.current_play()
    assert play is not None
    assert (play.artist, play.title) == ("Neffex", "Ready to kill")
    assert play.started == datetime.fromtimestamp(1800000000, UTC)
    assert play.started_exact
    # A head that is another title (the history a second behind) gives no start, not its start.
    other = parse_played([{"playedat": 1799999000, "title": "Someone - Else"}])
    play = station_info(stats, other, Links(), datetime.now(UTC)).current_play()
    assert play is not None
    assert play.started is None


def test_the_7html_line_of_a_1x_dnas():
    stats = StreamStats.parse_7html(
        "<html><body>12,1,40,UNLIMITED,9,128,Simon &amp; Garfunkel - Cecilia, Live</body></html>"
    )
    assert stats.on_air
    assert stats.listeners == 12
    assert stats.title == "Simon & Garfunkel - Cecilia, Live"  # commas in the title stay
    assert not StreamStats.parse_7html(
        "<html><body>0,0,40,100,0,128,Old - Title</body></html>"
    ).on_air
    with pytest.raises(ValueError, match=r"not a 7\.html line"):
        StreamStats.parse_7html("<html><body>Invalid resource</body></html>")


def test_kind_and_features():
    assert source_class("shoutcast") is ShoutcastClient
    assert ShoutcastClient.features == frozenset({Feature.RECENT})


# Over HTTP against the DNAS simulator ---------------------------------------------------------


async def test_info_over_http(dnas, session):
    client = make_client(dnas, session)
    info = await client.info()
    assert info.name == "OnAir Radio"
    assert info.genre == "Eclectic"
    assert info.now_playing == TRACKS[0].cast_title
    assert info.next_title == JINGLES[0].cast_title
    assert info.listeners == dnas.station(1).listeners_at(dnas.clock())
    play = info.current_play()
    assert play is not None
    assert (play.artist, play.title) == (TRACKS[0].artist, TRACKS[0].title)
    assert play.started == started(dnas, 0)
    assert play.started_exact
    # sid 1 plays at "/" by default: "/;" is the stream (never the DNAS's page) for any client.
    assert info.links.listen == f"{dnas.base_url}/;"
    assert info.links.pls == f"{dnas.base_url}/listen.pls?sid=1"
    assert info.artwork is None
    with pytest.raises(NotOffered):
        await client.playlist()


async def test_a_configured_key_is_never_sent_and_the_user_agent_says_mozilla(dnas, session):
    client = ShoutcastClient(dnas.base_url, 1, "SECRET-key-123", session=session)
    await client.info()
    assert dnas.received
    for query, agent in dnas.received:
        assert "SECRET-key-123" not in str(query)
        assert agent.startswith("Mozilla/5.0 (compatible; OnAir/")  # a 1.x DNAS needs it
    assert "SECRET" not in repr(client)


async def test_the_listen_url_serves_audio(dnas, session):
    info = await make_client(dnas, session).info()
    assert info.links.listen is not None
    async with session.get(info.links.listen) as response:
        assert response.headers["Content-Type"] == "audio/mpeg"
        first = await response.content.readexactly(len(SILENT_FRAME))
    assert first[:2] == b"\xff\xfb"  # an MPEG audio frame's sync word


async def test_a_stream_path_configured_on_the_dnas_is_the_listen_url(dnas, session):
    dnas.paths[1] = "/live"
    info = await make_client(dnas, session).info()
    assert info.links.listen == f"{dnas.base_url}/live"


async def test_each_change_is_seen_once_and_history_is_asked_only_on_a_change(dnas, session):
    watch = StationWatch(make_client(dnas, session))
    seen: list[Any] = []

    async def listener(announcement: Any) -> None:
        seen.append(announcement.play)

    watch.listeners.append(listener)
    for _ in range(3):
        await watch.poll()
        dnas.clock.advance(5)
    assert [p.title for p in seen] == [TRACKS[0].title]
    assert dnas.counters["info"] == 3
    assert dnas.counters["played"] == 1  # the title did not change: one poll, one request
    dnas.clock.advance(30)  # t = 46 s: track B (the jingle aired in between)
    await watch.poll()
    assert [p.title for p in seen] == [TRACKS[0].title, JINGLES[0].title, TRACKS[1].title]
    assert seen[1].started == started(dnas, 1)  # the jingle, recovered from /played
    assert dnas.counters["played"] == 2


async def test_the_same_song_after_something_else_is_a_new_play(dnas, session):
    watch = StationWatch(make_client(dnas, session))
    seen: list[Any] = []

    async def listener(announcement: Any) -> None:
        seen.append(announcement.play)

    watch.listeners.append(listener)
    for moment in (0, 42, 50, 88):  # A, the jingle, B, A again
        dnas.clock.advance(moment - (dnas.clock() - dnas.station(1).programme.epoch - 1.0))
        await watch.poll()
    titles = [p.title for p in seen]
    assert titles == [TRACKS[0].title, JINGLES[0].title, TRACKS[1].title, TRACKS[0].title]
    assert seen[0].started == started(dnas, 0)
    assert seen[3].started == started(dnas, 3)
    assert seen[3].started != seen[0].started


async def test_a_stream_without_a_source_has_nothing_on_air_and_its_return_is_not_new(
    dnas, session
):
    watch = StationWatch(make_client(dnas, session))
    seen: list[Any] = []

    async def listener(announcement: Any) -> None:
        seen.append(announcement.play)

    watch.listeners.append(listener)
    await watch.poll()
    dnas.down.add(1)
    dnas.clock.advance(5)
    await watch.poll()
    assert watch.status.state == "ok"  # the DNAS answered: the stream has no source
    assert watch.last_info is not None
    assert watch.last_info.current_play() is None
    dnas.down.clear()
    dnas.clock.advance(5)
    await watch.poll()
    assert [p.title for p in seen] == [TRACKS[0].title]  # the same play, back: not again


async def test_a_blip_of_one_poll_is_not_a_new_play(dnas, session):
    watch = StationWatch(make_client(dnas, session))
    seen: list[Any] = []

    async def listener(announcement: Any) -> None:
        seen.append(announcement.play)

    watch.listeners.append(listener)
    await watch.poll()
    dnas.inject("stopped", endpoint="info", times=1)  # one answer without a source
    await watch.poll()
    assert watch.last_info is not None
    assert watch.last_info.now_playing is None
    await watch.poll()
    assert [p.title for p in seen] == [TRACKS[0].title]
    assert dnas.counters["played"] == 2  # asked again once the title came back


async def test_a_sid_the_dnas_does_not_have_answers_like_a_stream_without_a_source(dnas, session):
    # sc_serv writes /stats for any sid: zeros, empty titles, streamstatus 0, path /stream/N/.
    info = await make_client(dnas, session, sid=9).info()
    assert info.current_play() is None
    assert info.name is None
    assert info.listeners == 0
    assert info.links.listen == f"{dnas.base_url}/stream/9/;"
    assert dnas.counters["played"] == 0


async def test_a_dnas_with_its_history_off_still_gives_the_play_without_a_start(dnas, session):
    dnas.history_off.add(1)  # /played redirects to index.html
    info = await make_client(dnas, session).info()
    play = info.current_play()
    assert play is not None
    assert play.title == TRACKS[0].title
    assert play.started is None
    assert info.recent == ()


async def test_the_simulator_is_strict_like_the_dnas(dnas, session):
    async with session.get(f"{dnas.base_url}/stats?sid=1") as response:
        assert response.headers["Content-Type"].startswith("text/xml")
        body = await response.text()
    assert body.startswith('<?xml version="1.0"')
    assert f"<SONGTITLE>{TRACKS[0].cast_title}</SONGTITLE>" in body
    async with session.get(f"{dnas.base_url}/played?sid=1&type=json") as response:
        history = await response.json()
    assert isinstance(history[0]["playedat"], int)
    assert history[0]["title"] == TRACKS[0].cast_title


async def test_a_1x_dnas_is_read_through_its_7html(session):
    clock = ManualClock(1_800_000_000.0)
    sim = ShoutcastSimulator(clock=clock, version=1)
    sim.add_station(1, key=None, programme=Programme(SLOTS, epoch=clock() - 1.0))
    async with serving(sim):
        client = make_client(sim, session)
        info = await client.info()
        assert client.legacy
        assert info.now_playing == TRACKS[0].cast_title
        assert info.listeners == sim.station(1).listeners_at(clock())
        assert info.links.listen == f"{sim.base_url}/;"
        assert info.links.pls is None
        await client.info(max_age=0)
        assert sim.counters["info"] == 1  # learnt once: 7.html from then on
        assert sim.counters["7.html"] == 2


async def test_a_page_that_is_not_the_stats_is_an_error_not_a_1x_dnas(dnas, session):
    # A proxy's error page (or a DNAS hiding its statistics) in place of /stats: this poll
    # fails, and the next reads /stats and /played as before (no switch to 7.html for good).
    client = make_client(dnas, session)
    dnas.inject("html", endpoint="info", times=1)
    with pytest.raises(StationResponseError):
        await client.info(max_age=0)
    assert not client.legacy
    info = await client.info(max_age=0)
    assert info.recent
    assert dnas.counters["7.html"] == 0


def test_onair_check_shows_the_start_and_no_autodj_badge_for_a_dnas():
    stats = StreamStats.parse(REAL_STATS)
    head = parse_played([{"playedat": 1800000000, "title": "Neffex - Ready to kill"}])
    info = station_info(stats, head, Links(), datetime.fromtimestamp(1800000030, UTC))
    lines = now_playing_lines(info)
    assert lines[1] == "Now playing: Neffex - Ready to kill"
    assert lines[2] == "             since 2027-01-15 08:00:00 UTC"
    assert not [line for line in lines if "AutoDJ" in line or "?" in line]


async def test_once_a_titles_length_is_known_its_end_is_found_in_time(session):
    """A DNAS tells no position or length: the watch learns each title's length from its
    airings and, from the second, polls for its end. The start it counts from is the DNAS's
    own ``playedat`` (between the last answer that showed the play before and the one that
    found this one), not when the watch happened to see the change: up to the steady cadence
    (10 s) later, which made every expected end that much late."""
    clock = ManualClock(1_800_000_000.75)
    slots = [(TRACKS[0], 61.0), (TRACKS[1], 47.0), (TRACKS[2], 53.0)]
    programme = Programme(slots, epoch=clock() - 0.5)
    sim = ShoutcastSimulator(clock=clock)
    sim.add_station(1, key=None, programme=programme)
    async with serving(sim):
        client = make_client(sim, session)
        watch = StationWatch(client, rng=random.Random(1), timer=clock)
        seen: list[tuple[float, Any]] = []

        async def listener(announcement: Any) -> None:
            seen.append((clock(), announcement))

        watch.listeners.append(listener)
        last = programme.airing(9)
        while clock() < last.started + 15.0:  # found within the steady cadence at the latest
            clock.advance(await watch.poll())
    airings = [programme.airing(number) for number in range(10)]
    assert [a.play.title for _, a in seen][:10] == [a.item.title for a in airings]
    late = []
    for number in range(4, 10):  # each title aired once (twice for the first) before
        found = next(at for at, a in seen if at >= airings[number].started - 0.01)
        late.append(round(found - airings[number].started, 2))
    assert max(late) <= 3.0, late


def test_a_titles_length_is_read_from_its_last_airing_in_the_history():
    stats = StreamStats.parse(REAL_STATS | {"songtitle": "Radio - Station ID"})
    played = parse_played(
        [
            {"playedat": 1000, "title": "Radio - Station ID"},
            {"playedat": 960, "title": "B - Song"},
            {"playedat": 920, "title": "A - Song"},
            {"playedat": 915, "title": "Radio - Station ID"},  # ran until A: 5 s
            {"playedat": 875, "title": "C - Song"},
        ]
    )
    play = station_info(stats, played, Links(), datetime.now(UTC)).current_play()
    assert play is not None
    assert play.duration == timedelta(seconds=5)  # a jingle, known as one from this airing on
    first = station_info(stats, played[:3], Links(), datetime.now(UTC)).current_play()
    assert first is not None
    assert first.duration is None  # never aired before in the history: no length


async def test_a_jingle_is_known_as_one_from_its_second_airing(dnas, session):
    client = make_client(dnas, session)
    dnas.clock.advance(41)  # the jingle, first airing: nothing says how long it runs
    first = (await client.info(max_age=0)).current_play()
    assert first is not None
    assert first.title == JINGLES[0].title
    assert first.duration is None
    dnas.clock.advance(85)  # its second airing: the history shows the first, 5 s
    again = (await client.info(max_age=0)).current_play()
    assert again is not None
    assert again.title == JINGLES[0].title
    assert again.duration == timedelta(seconds=5)
    assert again.started == started(dnas, 4)
