"""The bench's bot process for ``bench.voice --through fake`` (a child process): a discord.py
client with every guild of the fake Discord, one voice client each, playing one station through
the process's one ``VoiceSender`` (mode ``sender``) or one discord.py ``AudioPlayer`` per guild
(``players``, ``per-guild``). It prints ``ready {join figures}`` once every guild plays (or the
join deadline passed), and its report (JSON) on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from typing import Any

import aiohttp
import discord

from bot.voice import Broadcasts, VoiceSender, find_ffmpeg
from bot.voice.client import OnAirVoiceClient
from bot.voice.turns import GatewayTurns

from ..common import LoopLag
from .sampler import Sampler
from .shared import JOIN_DEADLINE, TOKEN_ENV, make_source, stream_session


def _fake_connector() -> aiohttp.TCPConnector:
    """The fake's connector as ``tests.support.run_against_fake`` builds it (no connection
    limit, as discord.py's own)."""
    from tests.support.run_against_fake import connector

    return connector()


async def _progress(tasks: list[asyncio.Task[None]], ready: float) -> None:
    """Joins done so far, every 10 s, on stderr (a slow join storm shows its pace)."""
    while True:
        await asyncio.sleep(10)
        done = sum(1 for task in tasks if task.done())
        print(
            f"joined {done}/{len(tasks)} at {time.perf_counter() - ready:.0f} s",
            file=sys.stderr,
            flush=True,
        )


async def child_main(mode: str, url: str, shards: int) -> None:
    """The bench's bot process: join every guild's voice channel and play the station."""
    binary = find_ffmpeg()
    assert binary is not None
    intents = discord.Intents.none()
    intents.guilds = True
    intents.voice_states = True
    client: discord.Client
    if shards > 1:
        client = discord.AutoShardedClient(
            intents=intents,
            connector=_fake_connector(),
            guild_ready_timeout=0.5,
            shard_count=shards,
        )
    else:
        client = discord.Client(
            intents=intents, connector=_fake_connector(), guild_ready_timeout=0.5
        )
    session = stream_session()
    broadcasts = Broadcasts(binary.path, session=session)
    sender = VoiceSender() if mode == "sender" else None
    lag = LoopLag()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    sources: list[discord.AudioSource] = []
    started = time.perf_counter()

    sampler: list[Sampler] = []
    turns = GatewayTurns()  # as OnAir's rejoins after a restart: 100 a minute per shard

    async def join(guild: discord.Guild, gate: asyncio.Semaphore) -> None:
        await turns.turn(guild.shard_id)
        async with gate:
            voice = await guild.voice_channels[0].connect(
                cls=OnAirVoiceClient if sender else discord.VoiceClient,
                self_deaf=True,
                timeout=60,
            )
        source = make_source(mode, broadcasts, url, binary.path)
        if sender is not None and isinstance(voice, OnAirVoiceClient):
            voice.play_on(sender, "bench", source, after=None)
        else:
            sources.append(source)
            voice.play(source)

    async def play() -> None:
        try:
            await client.wait_until_ready()
            ready = time.perf_counter()
            gate = asyncio.Semaphore(10)  # connects under way at once (TLS, DAVE: CPU)
            tasks = [asyncio.create_task(join(guild, gate)) for guild in client.guilds]
            progress = asyncio.create_task(_progress(tasks, ready))
            # A join that has not played within the deadline counts as failed (its guild's
            # frames/s show it); the measurement goes on with the others.
            done, late = await asyncio.wait(tasks, timeout=JOIN_DEADLINE)
        except Exception as error:
            print(f"failed: {type(error).__name__}: {error}", flush=True)
            stop.set()
            return
        progress.cancel()
        lag.start()
        if os.environ.get("ONAIR_BENCH_SAMPLE"):
            sampler.append(Sampler().start())
        failed = len(late) + sum(1 for task in done if task.exception() is not None)
        joined = {
            "shards": shards,
            "ready_seconds": round(ready - started, 1),
            "join_seconds": round(time.perf_counter() - ready, 1),
            "joins_failed": failed,
        }
        print("ready " + json.dumps(joined), flush=True)

    runner = asyncio.create_task(client.start(os.environ[TOKEN_ENV]))
    player = asyncio.create_task(play())
    await stop.wait()
    await lag.stop()
    report: dict[str, Any] = {
        "decoder_restarts": sum(s.restarts for s in broadcasts.stats().values()),
        "loop_worst_lag_ms": round(lag.worst * 1000, 1),
        "loop_spikes": lag.spikes[:10],  # (seconds since the joins, ms) over 20 ms
    }
    if sampler:
        report["sampled"] = sampler[0].stop()
    for voice in list(client.voice_clients):
        voice.stop()  # type: ignore[attr-defined]
    if sender is not None:
        report["sender"] = {
            "ticks": sender.ticks,
            "late": sender.late_ticks,
            "rescues": sender.rescues,
        }
        sender.close()
    for source in sources:
        source.cleanup()  # kills the per-guild FFmpegs; the player threads would too, later
    await broadcasts.close()
    await session.close()
    player.cancel()
    print(json.dumps(report), flush=True)
    # No voice disconnects: 100 leaves after 100 joins exceed discord.py's gateway limit of
    # 110 commands a minute and would take a minute; nothing of the measurement is left.
    runner.cancel()
    sys.stdout.flush()
    os._exit(0)
