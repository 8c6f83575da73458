"""The fake's gateway sessions are per shard, as Discord's are: a RESUME keeps the shard's guilds,
and an unknown session is not resumable. A resumed connection that got every guild's events made
two processes of a fleet answer the same button click (180 callbacks for 120 clicks)."""

from __future__ import annotations

import aiohttp

from tests.support.fakediscord import FakeDiscord


async def _identify(ws: aiohttp.ClientWebSocketResponse, fake: FakeDiscord, shard: int) -> str:
    await ws.receive_json(timeout=5)  # HELLO
    await ws.send_json(
        {"op": 2, "d": {"token": "t", "intents": 1, "shard": [shard, 2], "properties": {}}}
    )
    ready = await ws.receive_json(timeout=5)
    assert ready["t"] == "READY"
    return str(ready["d"]["session_id"])


async def test_a_resumed_shard_gets_only_its_own_guilds_events() -> None:
    fake = FakeDiscord(guild_count=2)
    mine, other = fake.guilds
    for guild, shard in ((mine, 0), (other, 1)):  # Discord's formula: (id >> 22) % shards
        guild.id = ((1234 << 23) | (shard << 22)) | 7
        guild.roles[0] = guild.id
    async with fake, aiohttp.ClientSession(connector=fake.connector()) as http:
        url = f"wss://gateway.discord.gg:{fake.port}/?v=10&encoding=json"
        async with http.ws_connect(url) as first, http.ws_connect(url) as second:
            session = await _identify(first, fake, 0)
            other_session = await _identify(second, fake, 1)
            assert session != other_session  # one gateway session per shard
        async with http.ws_connect(url) as resumed:
            await resumed.receive_json(timeout=5)  # HELLO
            await resumed.send_json({"op": 6, "d": {"token": "t", "session_id": session, "seq": 1}})
            while (await resumed.receive_json(timeout=5)).get("t") != "RESUMED":
                pass
            await fake.dispatch("TEST_EVENT", {"guild_id": str(other.id), "n": 1})
            await fake.dispatch("TEST_EVENT", {"guild_id": str(mine.id), "n": 2})
            event = await resumed.receive_json(timeout=5)
            assert (event["t"], event["d"]["n"]) == ("TEST_EVENT", 2)


async def test_an_unknown_session_is_not_resumable() -> None:
    fake = FakeDiscord()
    async with fake, aiohttp.ClientSession(connector=fake.connector()) as http:
        url = f"wss://gateway.discord.gg:{fake.port}/?v=10&encoding=json"
        async with http.ws_connect(url) as ws:
            await ws.receive_json(timeout=5)  # HELLO
            await ws.send_json({"op": 6, "d": {"token": "t", "session_id": "nope", "seq": 1}})
            answer = await ws.receive_json(timeout=5)
            assert answer == {"op": 9, "d": False}
