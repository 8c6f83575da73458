"""What the show tests through the real bot share: the manual clock moved on, a poll of the
station's watch, the status text a play shows, the voice status writes Discord received, and a
fake Discord where OnAir may make Scheduled Events in one guild (Create Events) and not in the other
(Manage Events only).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.shows.text import voice_status
from bot.simulator import ManualClock, StationSimulator
from bot.station import Play

from .botenv import BotEnv
from .fakediscord import (
    CREATE_EVENTS,
    MANAGE_EVENTS,
    FakeDiscord,
    Guild,
)
from .waiting import poll_watch, wait_for


def advance(sim: StationSimulator, seconds: float) -> None:
    clock = sim.clock
    assert isinstance(clock, ManualClock)
    clock.advance(seconds)


async def poll(env: BotEnv) -> None:
    """Run the station's watch now; wait for its listeners (the shows hook included)."""
    announcer = env.bot.announcer
    await wait_for(lambda: len(announcer.watched()) == 1, within=10)
    await poll_watch(announcer)
    await announcer.idle()


def shown(item: Any, *, live: bool = False) -> str:
    text = voice_status(Play(title=item.title, artist=item.artist, live=live))
    assert text is not None
    return text


def status_puts(fake: FakeDiscord, channel: int) -> list[Any]:
    return [r.json["status"] for r in fake.sent("PUT", rf"^/channels/{channel}/voice-status$")]


def channel_of(fake: FakeDiscord, guild: Guild, channel_id: int) -> Any:
    return next(vc for vc in guild.voice_channels if vc.id == channel_id)


@pytest.fixture(name="events_fake")
async def events_fake_fixture() -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord(guild_count=2)
    # The first guild lets OnAir create events (and so start and end its own); the second was
    # invited before Discord's split: Manage Events, which creates none since 23 February 2026.
    fake.guilds[0].bot_role_permissions = CREATE_EVENTS
    fake.guilds[1].bot_role_permissions = MANAGE_EVENTS
    async with fake:
        yield fake


def event_writes(fake: FakeDiscord, guild: Guild) -> list[tuple[str, Any]]:
    return [
        (r.method, (r.json or {}).get("status"))
        for r in fake.sent(None, rf"^/guilds/{guild.id}/scheduled-events")
        if r.method in ("POST", "PATCH")
    ]


async def turn_on(env: BotEnv, guild: Guild) -> str:
    iid = await env.fake.slash("onair", {"enabled": True}, sub=["events"], guild=guild)
    message = await env.fake.final_message(iid)
    return str(message["content"])
