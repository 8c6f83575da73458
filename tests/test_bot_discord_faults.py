"""The real bot when Discord pushes back, through discord.py against the fake Discord: 429s waited
out and retried in order, 403 and unknown channels, gateway RECONNECT and INVALID_SESSION, an
unexpected error's generic reply, and neither the station key nor a mount's link where it must
not be.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest

from bot.render import station_embeds

from .support.botenv import STATION_KEY
from .support.discord_http import all_text
from .support.discord_rules import (
    EPHEMERAL,
)

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord

MESSAGES = r"^/channels/\d+/messages$"
# asyncio may wake a sleeper up to its clock resolution early; far below any retry_after here.
EARLY = 0.01


def _attempts(fake: Any) -> dict[str, list[Any]]:
    """Every POST of each message content, in the order the fake received them."""
    attempts: dict[str, list[Any]] = {}
    for record in fake.sent("POST", MESSAGES):
        attempts.setdefault(record.json["content"], []).append(record)
    return attempts


@pytest.mark.parametrize("is_global", [False, True], ids=["route", "global"])
async def test_discord_429_is_waited_out_and_retried(onair, is_global):
    """Counted 429s (not a time window), so the outcome never depends on the machine's speed."""
    channel = onair.bot.get_channel(onair.guild.channels[0])
    onair.fake.throttle("POST", MESSAGES, times=2, retry_after=0.3, is_global=is_global)
    await asyncio.gather(*(channel.send(f"m{i}") for i in range(3)))
    attempts = _attempts(onair.fake)
    assert sorted(attempts) == ["m0", "m1", "m2"]
    assert sum(r.status == 429 for tries in attempts.values() for r in tries) == 2
    for tries in attempts.values():
        assert [r.status for r in tries][-1] == 200  # delivered ...
        assert [r.status for r in tries].count(200) == 1  # ... exactly once
        for refused, retry in itertools.pairwise(tries):
            assert retry.at - refused.at >= 0.3 - EARLY  # waited out retry_after


async def test_discord_route_window_is_obeyed_in_order(onair):
    """Discord's per-channel window with its bucket headers: every message, once, in order."""
    channel = onair.bot.get_channel(onair.guild.channels[0])
    onair.fake.rate_limits = True
    onair.fake.channel_limit = (2, 0.3)
    for i in range(5):
        await channel.send(f"w{i}")
    delivered = [r.json["content"] for r in onair.fake.sent("POST", MESSAGES) if r.status == 200]
    assert delivered == [f"w{i}" for i in range(5)]


async def test_forbidden_and_unknown_channel_raise_cleanly(onair):
    import discord

    channel = onair.bot.get_channel(onair.guild.channels[0])
    onair.fake.fail(
        "POST", r"^/channels/\d+/messages$", 403, code=50013, message="Missing Permissions"
    )
    with pytest.raises(discord.Forbidden) as forbidden:
        await channel.send("x")
    assert forbidden.value.code == 50013
    onair.fake.fail("POST", r"^/channels/\d+/messages$", 404, code=10003, message="Unknown Channel")
    with pytest.raises(discord.NotFound):
        await channel.send("x")
    await channel.send("still works")


async def test_gateway_reconnect_mid_session(onair):
    await onair.fake.reconnect()
    await onair.fake.wait_for(
        lambda: onair.fake.resume_count + onair.fake.identify_count >= 2, within=20
    )
    await onair.fake.identified.wait()
    message = await onair.fake.final_message(await onair.fake.slash("nowplaying"))
    assert message["embeds"]


async def test_invalid_session_reidentifies(onair):
    await onair.fake.invalid_session(resumable=False)
    await onair.fake.wait_for(lambda: onair.fake.identify_count >= 2, within=30)
    message = await onair.fake.final_message(await onair.fake.slash("station"), within=15)
    assert message["embeds"]


async def test_unexpected_error_gets_generic_message_and_log(onair, caplog, monkeypatch):

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(station_embeds, "station_embed", broken)
    reply = await onair.fake.final_message(await onair.fake.slash("station"))
    assert reply["flags"] & EPHEMERAL
    assert "something went wrong" in reply["content"]
    assert "boom" in caplog.text


async def test_key_never_in_discord_traffic_or_logs(onair, caplog):
    onair.sim.inject("status", status=500, times=10)
    onair.bot.registry.clients["main"].forget_cached()
    await onair.fake.final_message(await onair.fake.slash("recent"), within=30)
    onair.sim.faults.clear()
    assert STATION_KEY not in all_text(onair.fake)
    assert STATION_KEY not in caplog.text


PHISH = "https://phish.example"


def _refused(fake) -> list[Any]:
    """Every request the fake Discord refused as Discord would (4xx), with its answer."""
    return [(r.method, r.route, r.response) for r in fake.requests if 400 <= r.status < 500]


def _url_fields(message: dict[str, Any]) -> list[str]:
    """Every URL a message carries in a field Discord reads as a URI."""
    urls = [
        str(button["url"])
        for row in message.get("components") or []
        for button in row.get("components") or []
        if button.get("url")
    ]
    for embed in message.get("embeds") or []:
        urls += [embed.get("url"), (embed.get("author") or {}).get("url")]
        urls += [(embed.get(part) or {}).get("url") for part in ("image", "thumbnail")]
        urls += [(embed.get(part) or {}).get("icon_url") for part in ("author", "footer")]
    return [url for url in urls if url]


async def test_a_mount_cannot_add_a_link_to_the_stream_reply_or_the_listen_card(onair):
    # Mount names and URLs are the station owner's text: a name written as a masked link, or a
    # URL that closes <…> early and adds one (issue 27: Discord refuses it in a button's url, a
    # URI, so the whole reply was lost), must reach listeners as inert text or not at all.
    bad_url = f"https://r.example/m>[Free]({PHISH}/y)"
    hostile = [
        {"name": f"[Claim your prize]({PHISH}/x)", "ssl": "https://r.example/prize"},
        {"name": "/free", "ssl": bad_url},
    ]
    hostile += [{"name": f"/m{n}", "ssl": f"https://r.example/m{n}"} for n in range(30)]
    # And once past the menu's 25 options, where it is a link in the card.
    hostile += [
        {"name": f"[Claim your prize]({PHISH}/z)", "ssl": "https://r.example/z"},
        {"name": "/z", "ssl": f"https://r.example/z>[F]({PHISH})"},
    ]
    onair.sim.station(1).extra_mounts = hostile
    onair.bot.registry.clients["main"].forget_cached()
    iid = await onair.fake.slash("listen")
    await onair.fake.final_message(iid)
    message = onair.fake.original(iid)
    card = message["embeds"][0].get("description", "")
    menu = message["components"][1]["components"][0]
    labels = [option["label"] for option in menu["options"]]
    assert any("Claim your prize" in label for label in [*labels, card])  # shown, as text
    assert f"]({PHISH}" not in card
    assert "/z>" not in card
    picks = ("Claim", "free")  # "free": offered only while its broken link is offered
    chosen = [o for o in menu["options"] if any(p in o["label"] for p in picks)]
    chosen += [o for o in menu["options"] if o["value"].endswith("0")]
    for option in chosen:
        choice = await onair.fake.choose(message, menu["custom_id"], [option["value"]])
        reply = await onair.fake.final_message(choice)
        assert _refused(onair.fake) == []  # Discord takes the reply (it refused a broken URL)
        assert f"]({PHISH}" not in reply["content"], reply["content"]
        (button,) = reply["components"][0]["components"]  # the stream's link, to open
        assert button["label"] == "Open"
        for url in _url_fields(reply):
            assert "phish" not in url
    assert not any("free" in label for label in labels)  # its link is broken: left out
    for record in onair.fake.requests:
        for url in _url_fields(record.json if isinstance(record.json, dict) else {}):
            assert "phish" not in url, url
        data = (record.json or {}).get("data") if isinstance(record.json, dict) else None
        for url in _url_fields(data if isinstance(data, dict) else {}):
            assert "phish" not in url, url
