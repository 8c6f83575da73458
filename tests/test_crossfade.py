"""The real watch against a crossfaded programme served over HTTP, on a manual clock."""

from __future__ import annotations

import aiohttp
import pytest

from bot.announcer import Announcement, StationWatch
from bot.simulator import LIVE_SHOW, TRACKS, ManualClock, Programme, Slot, StationSimulator
from bot.station import StationClient
from tests.support.stations import KEY

from .support.stations import serving

# Every switch comes before the reported length predicts (``early``); slot 2 is a track cut
# after 4 s and restarted from the beginning; the live show names what follows 8 s before it
# ends.
SLOTS = [
    Slot(TRACKS[0], 20.0, early=1.2),  # t = 0
    Slot(TRACKS[0], 20.0, early=1.4),  # t = 20: the same title again, straight after
    Slot(TRACKS[1], 4.0, early=16.0),  # t = 40: cut after 4 s ...
    Slot(TRACKS[1], 20.0, early=1.0),  # t = 44: ... and restarted from the beginning
    Slot(LIVE_SHOW, 30.0, cue=8.0),  # t = 64
    Slot(TRACKS[2], 20.0, early=1.1),  # t = 94
]


@pytest.fixture
async def crossfaded(clock: ManualClock):
    sim = StationSimulator(clock=clock)
    sim.add_station(1, key=KEY, programme=Programme(SLOTS, epoch=clock() - 1.0))
    async with serving(sim):
        yield sim


async def watch_with_log(
    sim: StationSimulator, session: aiohttp.ClientSession
) -> tuple[StationWatch, list[Announcement]]:
    watch = StationWatch(StationClient(sim.base_url, 1, KEY, session=session))
    seen: list[Announcement] = []

    async def listener(announcement: Announcement) -> None:
        seen.append(announcement)

    watch.listeners.append(listener)
    return watch, seen


async def test_crossfaded_replay_of_the_same_title_is_a_new_play(crossfaded, clock, session):
    watch, seen = await watch_with_log(crossfaded, session)
    await watch.poll()  # t = 1
    clock.advance(17.5)  # t = 18.5: 2.7 s before the reported end, still the first airing
    await watch.poll()
    assert len(seen) == 1
    clock.advance(2.0)  # t = 20.5: the crossfade put the same title on air again at t = 20
    await watch.poll()
    await watch.poll()
    assert [a.play.title for a in seen] == [TRACKS[0].title] * 2
    first, again = seen[0].play, seen[1].play
    assert first.started_exact
    assert again.started_exact
    assert first.started is not None
    assert again.started is not None
    assert (again.started - first.started).total_seconds() == pytest.approx(20, abs=1)
    assert seen[1].info.playback is not None
    assert seen[1].info.playback.length is not None
    assert seen[1].info.playback.length.total_seconds() == pytest.approx(21.4)


async def test_crossfaded_track_restarted_from_the_beginning_is_a_new_play(
    crossfaded, clock, session
):
    clock.advance(40.0)  # t = 41: the track that is about to be cut
    watch, seen = await watch_with_log(crossfaded, session)
    await watch.poll()
    clock.advance(2.0)  # t = 43: same play polled again
    await watch.poll()
    assert [a.play.title for a in seen] == [TRACKS[1].title]
    clock.advance(2.5)  # t = 45.5: restarted at t = 44, 16 s before the reported end
    await watch.poll()
    await watch.poll()
    assert [a.play.title for a in seen] == [TRACKS[1].title] * 2
    first, again = seen[0].play, seen[1].play
    assert first.started is not None
    assert again.started is not None
    assert (again.started - first.started).total_seconds() == pytest.approx(4, abs=1)


async def test_live_show_naming_what_follows_is_polled_quickly_until_it_ends(
    crossfaded, clock, session
):
    clock.advance(65.0)  # t = 66: the live show, 28 s before its end
    watch, seen = await watch_with_log(crossfaded, session)
    assert await watch.poll() >= 9.0  # nothing says when it ends: the steady cadence
    assert seen[-1].play.live
    assert seen[-1].info.next_display is None
    clock.advance(10.0)  # t = 76
    assert await watch.poll() >= 9.0
    clock.advance(10.0)  # t = 86: 8 s before the end the station names the next track
    assert await watch.poll() <= 2.5
    assert seen[-1].play.live
    clock.advance(2.5)  # t = 88.5
    assert await watch.poll() <= 2.5
    clock.advance(6.0)  # t = 94.5: the show is over
    await watch.poll()
    assert seen[-1].play.title == TRACKS[2].title
