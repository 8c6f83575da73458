"""A fleet of two processes (PostgreSQL, one shard each) credits a requested play once: the
poller decides who asked while it fans the play out and records it with the play; the other
process delivers to its own guild's channel from that record, naming its own guild's
requester, and credits nothing itself."""

from __future__ import annotations

from typing import Any

import aiohttp

from bot.simulator import TRACKS
from tests.support.fleet import fleet
from tests.support.waiting import wait_for

GUILD_A = 1 << 23  # shard 0 of 2
GUILD_B = 1 << 22  # shard 1 of 2


async def test_two_processes_credit_a_play_once(postgres_url, session: aiohttp.ClientSession):
    from bot.announcer.followers import Followers
    from bot.delivery.announcements import credits_in
    from bot.requests.service import RequestService
    from bot.station import Play
    from bot.storage import NewRequest, Subscription

    subs = (
        Subscription(0, guild_id=GUILD_A, channel_id=11, station="main"),
        Subscription(0, guild_id=GUILD_B, channel_id=22, station="main"),
    )
    delivered: list[tuple[str, int, str, tuple[str, ...]]] = []
    credit_calls: dict[str, int] = {"A": 0, "B": 0}

    class Recorder:
        def __init__(self, name: str) -> None:
            self.name = name

        async def deliver(self, sub, announcement, station, **kw: Any) -> int:  # type: ignore[no-untyped-def]
            names = tuple(c.name for c in credits_in(sub, announcement))
            delivered.append((self.name, sub.guild_id, announcement.play.title, names))
            return len(delivered)

    slots = [(TRACKS[0], 3600.0), (TRACKS[1], 3600.0)]
    async with fleet(postgres_url, session, slots, requests=True) as rig:
        for name, shard in (("A", 0), ("B", 1)):

            def counting(tag: str, inner):  # type: ignore[no-untyped-def]
                async def credit(slug: str, play: Play, key: str):  # type: ignore[no-untyped-def]
                    credit_calls[tag] += 1
                    return await inner(slug, play, key)

                return credit

            def followers(settings, registry, storage, tag=name):  # type: ignore[no-untyped-def]
                requests = RequestService(settings, registry, storage)
                return Followers(credit=counting(tag, requests.credit_new_play))

            service = await rig.service(name, shard, Recorder(name), subs, followers)
            await rig.start_listening(service)
            if name == "A":
                await wait_for(lambda: len(delivered) == 1)  # A's guild, the first play
                await service.idle()
            # A listener of this process's guild requests the next song.
            guild = GUILD_A if name == "A" else GUILD_B
            request = NewRequest(
                guild_id=guild,
                station="main",
                user_id=100 + shard,
                display_name=f"listener {name}",
                track_id="1002",
                title=TRACKS[1].cast_title,
                title_key=TRACKS[1].cast_title.casefold(),
            )
            request_id = await service.storage.reserve_request(
                request, now=rig.clock(), cooldown=600.0, hourly_cap=30
            )
            assert request_id is not None
            await service.storage.request_accepted(request_id)
        a, b = rig.services["A"], rig.services["B"]
        (watch_a,) = a.watched()
        assert watch_a.owned
        rig.clock.advance(3600)
        a.poll_now(watch_a)
        second = TRACKS[1].title
        await wait_for(lambda: sum(d[2] == second for d in delivered) == 2)
        await a.idle()
        await b.idle()
        played = sorted(d for d in delivered if d[2] == second)
        assert played == [
            ("A", GUILD_A, second, ("listener A",)),
            ("B", GUILD_B, second, ("listener B",)),
        ]
        assert credit_calls["B"] == 0  # decided once, where the play was fanned out
        rows = await a.storage.fetch(
            "SELECT COUNT(DISTINCT play_key), COUNT(*) FROM song_requests "
            "WHERE play_key IS NOT NULL"
        )
        assert tuple(rows[0]) == (1, 2)  # both credited, to the one play
