"""The real bot with one station of kind icecast, on the fake Discord and the Icecast simulator."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from bot.app import create_bot
from bot.config import parse_settings
from bot.runtime.core import OnAirBot
from bot.simulator.hosts.icecast import IcecastSimulator

from .fakediscord import FakeDiscord


def icecast_config(
    sim: IcecastSimulator,
    fake: FakeDiscord,
    mode: str = "post",
    *,
    station_extra: str = "",
    extra: str = "",
) -> str:
    """Station "main" (mount /live of ``sim``) announced in the fake's first channel;
    ``station_extra`` goes in its [[stations]] table, ``extra`` before it."""
    guild = fake.guilds[0]
    return (
        '[bot]\ndefault_station = "main"\n\n[database]\npath = ":memory:"\n\n'
        f"{extra}\n"
        '[[stations]]\nid = "main"\nname = "Main FM"\n'
        f'base_url = "{sim.base_url}"\nkind = "icecast"\nstation_id = "/live"\n'
        f'timezone = "Europe/Berlin"\n{station_extra}\n\n'
        f"[[subscriptions]]\nguild = {guild.id}\nchannel = {guild.channels[0]}\n"
        f'station = "main"\nmode = "{mode}"\n'
    )


@contextlib.asynccontextmanager
async def icecast_bot(
    sim: IcecastSimulator, fake: FakeDiscord, *, station_extra: str = "", extra: str = ""
) -> AsyncIterator[OnAirBot]:
    settings = parse_settings(
        icecast_config(sim, fake, station_extra=station_extra, extra=extra),
        {"ONAIR_DISCORD_TOKEN": fake.expected_token},
    )
    bot = create_bot(settings, connector=fake.connector(), guild_ready_timeout=0.05)
    await bot.login(settings.token or "")
    task = asyncio.create_task(bot.connect(reconnect=True))
    try:
        await asyncio.wait_for(bot.wait_until_ready(), timeout=15)
        yield bot
    finally:
        await bot.close()
        with contextlib.suppress(Exception, asyncio.CancelledError):
            await asyncio.wait_for(task, timeout=10)
