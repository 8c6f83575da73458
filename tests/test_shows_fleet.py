"""In a fleet the shows hear of every play of a station they follow once per process, also in
the processes that do not poll it: the poller records the play (even with no channel to announce
it in) and publishes it, and each other process's change listeners are told from the record."""

from __future__ import annotations

from collections import Counter

import aiohttp

from bot.announcer.followers import Followers
from bot.simulator import JINGLES, TRACKS
from tests.support.fleet import fleet
from tests.support.waiting import wait_for


async def test_every_process_hears_each_play_once(postgres_url, session: aiohttp.ClientSession):
    from bot.announcer.watcher import Announcement

    heard: Counter[tuple[str, str, str]] = Counter()

    async def main_only() -> set[str]:
        return {"main"}

    def listener(name: str):  # type: ignore[no-untyped-def]
        async def changed(slug: str, announcement: Announcement) -> None:
            heard[(name, slug, announcement.play.title)] += 1

        return changed

    class Nothing:
        async def deliver(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            raise AssertionError("no channel announces this station")

    slots = [(TRACKS[0], 3600.0), (JINGLES[0], 5.0), (TRACKS[1], 3600.0)]
    async with fleet(postgres_url, session, slots) as rig:
        for name, shard in (("A", 0), ("B", 1)):
            # e.g. played in voice in both processes
            followers = Followers(change_listeners=(listener(name),), followed=(main_only,))
            service = await rig.service(
                name, shard, Nothing(), followers=lambda *_, given=followers: given
            )
            await rig.start_listening(service)  # its LISTEN is connected
            if name == "A":  # A polls the first play and tells of it before B is there
                await wait_for(lambda: heard[("A", "main", TRACKS[0].title)] == 1)
                await service.idle()
        a, b = rig.services["A"], rig.services["B"]
        (watch_a,) = a.watched()
        (watch_b,) = b.watched()
        assert watch_a.owned
        assert not watch_b.owned
        first = TRACKS[0].title
        rig.clock.advance(3600)  # the jingle
        a.poll_now(watch_a)
        await wait_for(lambda: heard[("B", "main", JINGLES[0].title)] == 1)
        await a.idle()
        await b.idle()
        assert heard == {
            ("A", "main", first): 1,
            ("A", "main", JINGLES[0].title): 1,
            ("B", "main", JINGLES[0].title): 1,
        }
        assert watch_b.status.polls == 0  # B heard it all without asking the station
