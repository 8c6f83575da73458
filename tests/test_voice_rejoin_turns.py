"""Rejoins after a restart take turns at Discord's per-shard gateway limit (issue 26): at most
``budget`` voice joins per window on each shard, first come first served, shards independent;
the rejoins a restart schedules go in that order, and a guild waiting shows as rejoining."""

from __future__ import annotations

import asyncio

from bot.render.admin_embeds import voice_line
from bot.storage import VoiceSession
from bot.voice.players import VoiceStatus
from bot.voice.rejoins import Rejoins
from bot.voice.turns import GatewayTurns

from .support.waiting import wait_for


class Clock:
    """A clock that moves only when a turn sleeps (then by exactly that long)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)


async def test_each_shard_grants_its_budget_per_window_in_order() -> None:
    clock = Clock()
    turns = GatewayTurns(budget=3, window=60.0, clock=clock, sleep=clock.sleep)
    granted: list[tuple[int, int, float]] = []

    async def rejoin(shard: int, guild: int) -> None:
        await turns.turn(shard)
        granted.append((shard, guild, clock.now))

    tasks = [asyncio.create_task(rejoin(0, n)) for n in range(8)]
    tasks += [asyncio.create_task(rejoin(1, 100 + n)) for n in range(2)]
    await asyncio.gather(*tasks)
    shard0 = [(guild, at) for shard, guild, at in granted if shard == 0]
    assert [guild for guild, _ in shard0] == list(range(8))  # first come, first served
    times = [at for _, at in shard0]
    for index, at in enumerate(times):
        inside = [t for t in times if at <= t < at + 60.0]
        assert len(inside) <= 3, (index, times)  # never more than the budget in a window
    assert times[:3] == [0.0, 0.0, 0.0]
    assert times[3] == 60.0
    assert times[6] == 120.0
    # The other shard has a budget of its own: its guilds did not wait behind shard 0's.
    assert sorted(at for shard, _, at in granted if shard == 1)[-1] <= 60.0
    assert turns.waiting(0) == 0


async def test_rejoins_wait_for_their_shards_turn_and_say_so() -> None:
    clock = Clock()
    release = asyncio.Event()

    async def slow(seconds: float) -> None:
        await release.wait()
        await clock.sleep(seconds)

    turns = GatewayTurns(budget=2, window=60.0, clock=clock, sleep=slow)
    played: list[int] = []

    async def attempt(session: VoiceSession) -> bool:
        played.append(session.guild_id)
        return True

    rejoins = Rejoins(attempt, (0.0,), shard_of=lambda guild_id: guild_id % 2, turns=turns)
    for guild_id in (10, 12, 14, 16, 11):
        rejoins.schedule(VoiceSession(guild_id, guild_id * 100, "main"), first_delay=0.0)
    # Shard 0 has four, budget two: two play, two wait; shard 1's one plays at once.
    await wait_for(lambda: len(played) == 3 and turns.waiting(0) == 2)
    assert played == [10, 12, 11]
    assert 14 in rejoins
    session = rejoins.session(14)
    assert session is not None
    assert session.channel_id == 1400
    line = voice_line(VoiceStatus("rejoining", 1400, "main", turns.waiting(0)))
    assert "rejoining <#1400>" in line
    assert "2 channels wait" in line
    release.set()
    await wait_for(lambda: len(played) == 5)
    assert played[3:] == [14, 16]
    assert played == [10, 12, 11, 14, 16]  # the order the attempts got their turns
    assert 14 not in rejoins
    assert rejoins.session(14) is None


def test_onair_status_shows_voice_first() -> None:
    from bot.render.admin_embeds import status

    playing = status([], lambda _: None, [], {}, voice=VoiceStatus("playing", 55, "main"))
    assert playing.fields[0].name == "Voice"
    assert playing.fields[0].value == "🔊 playing `main` in <#55>"
    assert not status([], lambda _: None, [], {}).fields  # no voice: no field
