"""Listener commands through the real discord.py against the fake Discord."""

from __future__ import annotations


async def test_bot_logs_in_and_syncs(onair):
    names = sorted(c["name"] for c in onair.fake.commands)
    assert names == ["listen", "nowplaying", "playlist", "recent", "station", "stats"]
    assert onair.fake.token == "fake-token"


async def test_nowplaying_wire_body(onair):
    iid = await onair.fake.slash("nowplaying")
    message = await onair.fake.final_message(iid)
    embed = message["embeds"][0]
    assert embed["title"]
    assert message["allowed_mentions"]["parse"] == []
    print(message)
