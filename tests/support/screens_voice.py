"""Scenes of voice: joining, playing in a channel, leaving, and the station they play."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from bot.simulator import StationSimulator

from .botenv import STATION_KEY, running_bot
from .fakediscord import FakeDiscord
from .screens_record import BERLIN, slash_scene


async def voice_station(scenes: str) -> tuple[Any, StationSimulator] | None:
    """A fake Icecast playing a sine and station 1 (random programme, c9 URL, Berlin) for the
    voice and shows scenes; None (said on stderr) where there is no FFmpeg to make the sine."""
    from bot.voice import find_ffmpeg

    from .fakeicecast import FakeIcecast, make_mp3

    binary = find_ffmpeg()
    if binary is None:
        print(f"no FFmpeg: the {scenes} scenes are left out", file=sys.stderr)
        return None
    with tempfile.TemporaryDirectory() as folder:
        mp3 = await asyncio.to_thread(make_mp3, binary.path, Path(folder) / "sine.mp3")
        icecast = FakeIcecast(mp3.read_bytes())
    sim = StationSimulator()
    sim.add_station(1, key=STATION_KEY, seed=3, public_url="https://c9.radioboss.fm", zone=BERLIN)
    return icecast, sim


async def voice_scenes(out: Path) -> None:
    """/nowplaying with the "Play in" button for a listener in a voice channel, /join, and
    /join by someone in no voice channel."""
    rig = await voice_station("voice")
    if rig is None:
        return
    icecast, sim = rig
    fake = FakeDiscord(channels_per_guild=2)
    guild = fake.guilds[0]
    lounge = fake.add_voice_channel(guild, "Lounge")
    listener = 700000000000000001
    await sim.start()
    await icecast.start()
    await fake.start()
    await fake.set_member_voice(guild, listener, lounge, name="listener")
    try:
        extra = f'stream_url = "{icecast.url}"\n'
        async with running_bot(sim, fake=fake, extra_config=extra):
            scenes = (
                ("nowplaying-voice", "nowplaying", listener),
                ("join", "join", listener),
                ("join-not-in-voice", "join", None),  # someone in no voice channel
            )
            for scene, name, user in scenes:
                await slash_scene(fake, out / f"{scene}.jsonl", f"/{name}", name, user_id=user)
            # An admin makes the Lounge the 24/7 home channel; /leave then says it stays set; a
            # stream address for a config-file station is the owner's, said politely.
            admin: tuple[tuple[str, str, dict[str, Any], list[str]], ...] = (
                (
                    "voice-settings",
                    "/onair voice channel:Lounge leave_when_empty:300",
                    {"channel": str(lounge), "leave_when_empty": 300},
                    ["voice"],
                ),
                ("leave-home", "/leave", {}, []),
                (
                    "voice-stream-config-station",
                    "/onair voice station:main stream_url:…",
                    {"station": "main", "stream_url": "https://radio.example/live"},
                    ["voice"],
                ),
            )
            for scene, label, options, sub in admin:
                command = "onair" if sub else "leave"
                path = out / f"{scene}.jsonl"
                await slash_scene(
                    fake, path, label, command, options, sub=sub or None, user_id=listener
                )
    finally:
        await fake.stop()
        await icecast.stop()
        await sim.stop()
