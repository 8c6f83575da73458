"""The fake Discord's strictness seen from outside: discord.py raises ``HTTPException``, unknown
routes answer 404 and are recorded, ``strict=False`` lets a violation through, the JSONL
recording, follow-ups, edits of others' messages, big uploads, and component interactions.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import aiohttp
import discord
import pytest

from .support import discord_rules as rules
from .support.discord_http import call
from .support.fakediscord import RECORD_ENV, FakeDiscord
from .support.strict_payloads import JSON_TYPE, fake_fixture, http_fixture  # noqa: F401

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


async def test_discord_py_raises_http_exception(fake):
    client = discord.Client(intents=discord.Intents.none(), connector=fake.connector())
    await client.login(fake.expected_token)
    try:
        channel = client.get_partial_messageable(fake.guilds[0].channels[0])
        with pytest.raises(discord.HTTPException) as raised:
            await channel.send(embed=discord.Embed(title="t" * 257))
        assert raised.value.status == 400
        assert raised.value.code == 50035
        assert "embeds.0.title" in str(raised.value)
        with pytest.raises(discord.HTTPException) as raised:
            await channel.send(content="")
        assert raised.value.code == 50006
        sent = await channel.send(embed=discord.Embed(title="t" * 256))
        assert sent.embeds[0].title == "t" * 256
    finally:
        await client.close()


async def test_unknown_routes_answer_404_and_are_recorded(fake, http):
    status, body = await call(http, "POST", "/no/such/route", {"x": 1})
    assert (status, body) == (404, {"code": 0, "message": "404: Not Found"})
    assert fake.sent("POST", r"^/no/such/route$")[0].status == 404


async def test_strict_off_lets_a_violation_through(http):
    async with (
        FakeDiscord(strict=False) as lax,
        aiohttp.ClientSession(connector=lax.connector()) as session,
    ):
        channel = lax.guilds[0].channels[0]
        status, _ = await call(
            session, "POST", f"/channels/{channel}/messages", {"content": "c" * 2001}
        )
        assert status == 200


async def test_requests_are_recorded_as_json_lines(fake, http, tmp_path, monkeypatch):
    target = tmp_path / "requests.jsonl"
    monkeypatch.setenv(RECORD_ENV, str(target))
    channel = fake.guilds[0].channels[0]
    _, posted = await call(http, "POST", f"/channels/{channel}/messages", {"content": "hi"})
    iid = fake.pending_interaction(2)
    fake.interactions[iid].command = "/nowplaying station:main"
    await call(
        http,
        "POST",
        f"/interactions/{iid}/itoken-{iid}/callback",
        {"type": rules.CHANNEL_MESSAGE, "data": {"content": "np"}},
    )
    form = aiohttp.FormData()
    form.add_field(
        "payload_json",
        json.dumps(
            {
                "embeds": [{"image": {"url": "attachment://c.png"}}],
                "attachments": [{"id": 0, "filename": "c.png"}],
            }
        ),
        content_type="application/json",
    )
    form.add_field("files[0]", b"\x89PNG", filename="c.png", content_type="image/png")
    async with http.post(
        f"https://discord.com/api/v10/webhooks/{fake.app_id}/itoken-{iid}", data=form
    ) as response:
        assert response.status == 200
    await call(http, "POST", "/no/such/route", {})
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert [line["method"] for line in lines] == ["POST"] * 4
    first, reply, upload, unknown = lines
    assert first["path"] == f"/api/v10/channels/{channel}/messages"
    assert first["json"] == {"content": "hi"}
    assert first["response_id"] == posted["id"]
    assert isinstance(first["at"], float)
    assert first["at"] > 1.7e9
    assert reply["command"] == "/nowplaying station:main"
    assert reply["user"] == "listener"
    assert reply["response_id"] == fake.original(iid)["id"]
    assert upload["json"]["attachments"][0]["filename"] == "c.png"
    assert upload["files"] == [
        {"filename": "c.png", "base64": base64.b64encode(b"\x89PNG").decode()}
    ]
    assert upload["command"] == "/nowplaying station:main"
    assert unknown["status"] == 404
    assert "response_id" not in unknown


async def test_follow_up_needs_an_answered_interaction(fake, http):
    iid = fake.pending_interaction(2)
    follow_up = f"/webhooks/{fake.app_id}/itoken-{iid}"
    status, body = await call(http, "POST", follow_up, {"content": "too early"})
    assert (status, body) == (404, {"code": 10015, "message": "Unknown Webhook"})
    await call(
        http,
        "POST",
        f"/interactions/{iid}/itoken-{iid}/callback",
        {"type": rules.DEFERRED_CHANNEL_MESSAGE},
    )
    status, _ = await call(http, "POST", follow_up, {"content": "now"})
    assert status == 200


async def test_only_the_bots_own_messages_can_be_edited(fake, http):
    channel = fake.guilds[0].channels[0]
    theirs = fake.user_message(channel)
    status, body = await call(
        http, "PATCH", f"/channels/{channel}/messages/{theirs['id']}", {"content": "mine now"}
    )
    assert (status, body["code"]) == (403, 50005)
    assert fake.messages[int(theirs["id"])]["content"] == "chatter"


async def test_uploads_above_10_mib_are_refused(fake, http):
    channel = fake.guilds[0].channels[0]
    for size, expected in ((rules.UPLOAD_MAX, 200), (rules.UPLOAD_MAX + 1, 413)):
        form = aiohttp.FormData()
        form.add_field("payload_json", json.dumps({"content": "file"}), content_type=JSON_TYPE)
        form.add_field("files[0]", b"\0" * size, filename="big.bin")
        url = f"https://discord.com/api/v10/channels/{channel}/messages"
        async with http.post(url, data=form) as response:
            assert response.status == expected
            if expected == 413:
                assert (await response.json())["code"] == 40005


def _button_message(fake: FakeDiscord) -> dict[str, Any]:
    channel = fake.guilds[0].channels[0]
    row = {"type": 1, "components": [{"type": 2, "style": 2, "label": "❤", "custom_id": "x"}]}
    return fake.message(channel, {"embeds": [{"title": "Song"}], "components": [row]})


async def test_update_message_edits_the_message_the_component_is_on(fake, http):
    message = _button_message(fake)
    iid = await fake.click(message, "x", user_id=5)
    row = {"type": 1, "components": [{"type": 2, "style": 2, "label": "❤ 1", "custom_id": "x"}]}
    path = f"/interactions/{iid}/itoken-{iid}/callback"
    status, _ = await call(
        http, "POST", path, {"type": rules.UPDATE_MESSAGE, "data": {"components": [row]}}
    )
    assert status == 200
    stored = fake.messages[int(message["id"])]
    assert stored["components"][0]["components"][0]["label"] == "❤ 1"
    assert stored["embeds"][0]["title"] == "Song"  # the parts the response does not name stay
    assert len(fake.channel_messages[int(message["channel_id"])]) == 1  # no new message


async def test_ephemeral_replies_are_not_in_the_channels_history(fake, http):
    message = _button_message(fake)
    iid = await fake.click(message, "x", user_id=5)
    path = f"/interactions/{iid}/itoken-{iid}/callback"
    reply = {"type": rules.CHANNEL_MESSAGE, "data": {"content": "Liked", "flags": 64}}
    assert (await call(http, "POST", path, reply))[0] == 200
    status, history = await call(http, "GET", f"/channels/{message['channel_id']}/messages")
    assert status == 200
    assert [m["id"] for m in history] == [message["id"]]  # only the message clicked on


async def test_a_first_response_after_3_seconds_is_an_unknown_interaction(fake, http):
    fake.callback_window = 3.0
    message = _button_message(fake)
    late = await fake.click(message, "x")
    fake.interactions[late].created -= 3.5  # as if it had arrived 3.5 s ago
    body = {"type": rules.DEFERRED_UPDATE_MESSAGE}
    status, answer = await call(http, "POST", f"/interactions/{late}/itoken-{late}/callback", body)
    assert (status, answer["code"]) == (404, 10062)
    prompt = await fake.click(message, "x")
    status, _ = await call(http, "POST", f"/interactions/{prompt}/itoken-{prompt}/callback", body)
    assert status == 200


async def test_interaction_responses_are_not_bound_to_the_global_rate_limit(fake, http):
    fake.rate_limits = True
    fake.global_limit = 2
    message = _button_message(fake)
    body = {"type": rules.DEFERRED_UPDATE_MESSAGE}
    for _ in range(5):
        iid = await fake.click(message, "x")
        status, _ = await call(http, "POST", f"/interactions/{iid}/itoken-{iid}/callback", body)
        assert status == 200
    statuses = [
        (await call(http, "GET", f"/channels/{message['channel_id']}"))[0] for _ in range(3)
    ]
    assert statuses == [200, 200, 429]
