"""The fake Discord answers polls as Discord does: the create request's limits (400, 50035 at
the field's path), SEND_POLLS (403, 50013), End Poll for the author's own poll once (50005,
520001, 520006), no edit of a posted poll (520003), members' votes counted in ``poll.results``
and the tally finalised after the end, with MESSAGE_UPDATE."""

from __future__ import annotations

import json
from typing import Any

import pytest

from .support import discord_rules as rules
from .support.botenv import fake_discord_fixture
from .support.discord_http import call, fake_http_fixture
from .support.fakediscord import FakeDiscord

pytestmark = pytest.mark.e2e

fake = fake_discord_fixture()
http = fake_http_fixture()


def error_at(body: dict[str, Any], *path: str) -> str:
    node = body["errors"]
    for part in path:
        assert part in node, f"no error at {path}: {json.dumps(body)}"
        node = node[part]
    return str(node["_errors"][0]["code"])


def poll(count: int = 3, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "question": {"text": "Which song next?"},
        "answers": [{"poll_media": {"text": f"Song {i}"}} for i in range(count)],
        "duration": 1,
        "allow_multiselect": False,
        "layout_type": 1,
    }
    return {**body, **changes}


def allow_polls(fake: FakeDiscord) -> int:
    guild = fake.guilds[0]
    guild.bot_role_permissions |= rules.SEND_POLLS
    return guild.channels[0]


async def post(http: Any, channel: int, body: dict[str, Any]) -> tuple[int, Any]:
    return await call(http, "POST", f"/channels/{channel}/messages", {"poll": body})


async def test_a_poll_needs_send_polls_in_the_channel(fake: FakeDiscord, http: Any) -> None:
    channel = fake.guilds[0].channels[0]
    status, body = await post(http, channel, poll())
    assert (status, body["code"]) == (403, rules.MISSING_PERMISSIONS)
    allow_polls(fake)
    status, body = await post(http, channel, poll())
    assert status == 200
    assert [a["answer_id"] for a in body["poll"]["answers"]] == [1, 2, 3]
    assert body["poll"]["results"] == {"is_finalized": False, "answer_counts": []}


async def test_a_channel_overwrite_takes_send_polls_away_there_only(
    fake: FakeDiscord, http: Any
) -> None:
    """The role allows polls; a deny on the bot in one channel refuses them there (and in its
    threads) and nowhere else, until it is removed; the overwrite is in the channel's payload
    (what CHANNEL_UPDATE carries)."""
    guild = fake.guilds[0]
    channel = allow_polls(fake)
    other = guild.channels[1]
    await fake.set_bot_overwrite(guild, channel, deny=rules.SEND_POLLS)
    assert fake._channel(guild, channel, 0)["permission_overwrites"] == [
        {"id": str(fake.bot_id), "type": 1, "allow": "0", "deny": str(rules.SEND_POLLS)}
    ]
    for where, refused in ((channel, True), (guild.threads[0], True), (other, False)):
        status, body = await post(http, where, poll())
        assert (status == 403 and body["code"] == rules.MISSING_PERMISSIONS) == refused, where
    await fake.set_bot_overwrite(guild, channel)
    status, _ = await post(http, channel, poll())
    assert status == 200


@pytest.mark.parametrize(
    ("change", "path", "code"),
    [
        ({"question": {"text": "q" * 301}}, ("question", "text"), "BASE_TYPE_MAX_LENGTH"),
        ({"question": {"text": ""}}, ("question", "text"), "BASE_TYPE_MIN_LENGTH"),
        ({"question": None}, ("question",), "BASE_TYPE_REQUIRED"),
        ({"answers": []}, ("answers",), "BASE_TYPE_MIN_LENGTH"),
        ({"answers": [{"poll_media": {"text": "s"}}] * 11}, ("answers",), "BASE_TYPE_MAX_LENGTH"),
        (
            {"answers": [{"poll_media": {"text": "s" * 56}}]},
            ("answers", "0", "poll_media", "text"),
            "BASE_TYPE_MAX_LENGTH",
        ),
        ({"answers": [{}]}, ("answers", "0", "poll_media"), "BASE_TYPE_REQUIRED"),
        (
            {"answers": [{"poll_media": {}}]},
            ("answers", "0", "poll_media", "text"),
            "BASE_TYPE_REQUIRED",
        ),
        ({"duration": 0}, ("duration",), "NUMBER_TYPE_MIN"),
        ({"duration": 769}, ("duration",), "NUMBER_TYPE_MAX"),
        ({"duration": 1.5}, ("duration",), "NUMBER_TYPE_COERCE"),
        ({"layout_type": 2}, ("layout_type",), "BASE_TYPE_CHOICES"),
    ],
)
async def test_the_fake_refuses_what_discord_refuses_in_a_poll(
    fake: FakeDiscord, http: Any, change: dict[str, Any], path: tuple[str, ...], code: str
) -> None:
    channel = allow_polls(fake)
    status, body = await post(http, channel, poll(**change))
    assert (status, body["code"]) == (400, rules.INVALID_FORM_BODY)
    assert error_at(body, "poll", *path) == code


async def test_the_limits_themselves_pass(fake: FakeDiscord, http: Any) -> None:
    channel = allow_polls(fake)
    answers = [{"poll_media": {"text": "s" * 55}}] * 10
    status, _ = await post(http, channel, poll(question={"text": "q" * 300}, answers=answers))
    assert status == 200
    status, body = await post(http, channel, poll(duration=768.0))  # discord.py sends floats
    assert status == 200, body


async def test_a_poll_cannot_go_with_components_v2(fake: FakeDiscord, http: Any) -> None:
    channel = allow_polls(fake)
    status, body = await call(
        http, "POST", f"/channels/{channel}/messages", {"poll": poll(), "flags": 1 << 15}
    )
    assert status == 400
    assert "poll" in body["errors"]


async def test_members_vote_and_ending_tallies_once(fake: FakeDiscord, http: Any) -> None:
    channel = allow_polls(fake)
    _, message = await post(http, channel, poll())
    mid = int(message["id"])
    await fake.vote(mid, 1, 2)
    await fake.vote(mid, 2, 2)
    await fake.vote(mid, 3, 1)
    await fake.vote(mid, 3, 3)  # a member changes their vote
    status, ended = await call(http, "POST", f"/channels/{channel}/polls/{mid}/expire")
    assert status == 200
    assert ended["poll"]["results"]["is_finalized"] is False  # the tally comes after
    await fake.wait_for(lambda: fake.messages[mid]["poll"]["results"]["is_finalized"])
    _, final = await call(http, "GET", f"/channels/{channel}/messages/{mid}")
    assert final["poll"]["results"]["answer_counts"] == [
        {"id": 2, "count": 2, "me_voted": False},
        {"id": 3, "count": 1, "me_voted": False},
    ]
    status, body = await call(http, "POST", f"/channels/{channel}/polls/{mid}/expire")
    assert (status, body["code"]) == (400, rules.POLL_EXPIRED)
    with pytest.raises(AssertionError):
        await fake.vote(mid, 4, 1)


async def test_only_a_poll_of_ones_own_can_be_ended(fake: FakeDiscord, http: Any) -> None:
    channel = allow_polls(fake)
    _, plain = await call(http, "POST", f"/channels/{channel}/messages", {"content": "hi"})
    status, body = await call(http, "POST", f"/channels/{channel}/polls/{plain['id']}/expire")
    assert (status, body["code"]) == (400, rules.NOT_A_POLL)
    _, message = await post(http, channel, poll())
    fake.messages[int(message["id"])]["author"] = fake.user(fake.owner_id)
    status, body = await call(http, "POST", f"/channels/{channel}/polls/{message['id']}/expire")
    assert (status, body["code"]) == (403, 50005)
    status, body = await call(http, "POST", f"/channels/{channel}/polls/1/expire")
    assert (status, body["code"]) == (404, 10008)


async def test_a_posted_poll_cannot_be_edited(fake: FakeDiscord, http: Any) -> None:
    channel = allow_polls(fake)
    _, message = await post(http, channel, poll())
    status, body = await call(
        http, "PATCH", f"/channels/{channel}/messages/{message['id']}", {"poll": poll(2)}
    )
    assert (status, body["code"]) == (400, rules.POLL_NOT_EDITABLE)
