"""The fake Discord answers the voice channel status, stage instance and scheduled event routes
as Discord does: documented shapes and limits (400, 50035 at the field's path), permissions
(403, 50013), unknown objects (404), the event status machine and the 100-event cap (30038)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from .support import discord_rules as rules
from .support.botenv import fake_discord_fixture
from .support.discord_http import call, fake_http_fixture
from .support.fakediscord import (
    CONNECT,
    CREATE_EVENTS,
    MANAGE_CHANNELS,
    MANAGE_EVENTS,
    SET_VOICE_CHANNEL_STATUS,
    STAGE_MODERATOR,
    FakeDiscord,
)

pytestmark = pytest.mark.e2e

ADMINISTRATOR = 1 << 3  # every permission at once (the fake does not model it)

fake = fake_discord_fixture()


http = fake_http_fixture()


def error_at(body: dict[str, Any], *path: str) -> str:
    node = body["errors"]
    for part in path:
        assert part in node, f"no error at {path}: {json.dumps(body)}"
        node = node[part]
    return str(node["_errors"][0]["code"])


def when(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def external(**changes: Any) -> dict[str, Any]:
    event: dict[str, Any] = {
        "name": "n" * 100,
        "description": "d" * 1000,
        "privacy_level": 2,
        "entity_type": 3,
        "entity_metadata": {"location": "l" * 100},
        "scheduled_start_time": when(60),
        "scheduled_end_time": when(3600),
    }
    for key, value in changes.items():
        if value is None:
            event.pop(key, None)
        else:
            event[key] = value
    return event


# Voice channel status ---------------------------------------------------------------------------


async def test_voice_status_up_to_500_characters_with_the_permission(fake, http):
    guild = fake.guilds[0]
    # (from outside the channel: Manage Channels; the next test is about being in it)
    channel = fake.add_voice_channel(guild, bot_allow=SET_VOICE_CHANNEL_STATUS | MANAGE_CHANNELS)
    status, _ = await call(http, "PUT", f"/channels/{channel}/voice-status", {"status": "s" * 500})
    assert status == 204
    assert guild.voice_channels[0].status == "s" * 500
    status, body = await call(
        http, "PUT", f"/channels/{channel}/voice-status", {"status": "s" * 501}
    )
    assert status == 400
    assert body["code"] == rules.INVALID_FORM_BODY
    assert error_at(body, "status") == "BASE_TYPE_MAX_LENGTH"
    status, _ = await call(http, "PUT", f"/channels/{channel}/voice-status", {"status": None})
    assert status == 204
    assert guild.voice_channels[0].status is None


async def test_voice_status_from_outside_the_channel_needs_manage_channels(fake, http):
    guild = fake.guilds[0]
    channel = fake.add_voice_channel(guild, bot_allow=SET_VOICE_CHANNEL_STATUS)
    status, body = await call(http, "PUT", f"/channels/{channel}/voice-status", {"status": "x"})
    assert (status, body["code"]) == (403, rules.MISSING_PERMISSIONS)
    assert guild.voice_channels[0].status is None


@pytest.mark.parametrize(
    ("allow", "deny"),
    [(0, 0), (SET_VOICE_CHANNEL_STATUS, CONNECT)],
    ids=["without Set Voice Channel Status", "without Connect"],
)
async def test_voice_status_needs_the_permission_and_connect(fake, http, allow, deny):
    guild = fake.guilds[0]
    channel = fake.add_voice_channel(guild, bot_allow=allow, bot_deny=deny)
    status, body = await call(http, "PUT", f"/channels/{channel}/voice-status", {"status": "x"})
    assert (status, body["code"]) == (403, rules.MISSING_PERMISSIONS)
    assert guild.voice_channels[0].status is None


async def test_voice_status_is_not_for_stages_or_text_channels(fake, http):
    guild = fake.guilds[0]
    stage = fake.add_voice_channel(guild, stage=True, bot_allow=SET_VOICE_CHANNEL_STATUS)
    status, body = await call(http, "PUT", f"/channels/{stage}/voice-status", {"status": "x"})
    assert (status, body["code"]) == (400, rules.INVALID_CHANNEL_TYPE)
    status, body = await call(
        http, "PUT", f"/channels/{guild.channels[0]}/voice-status", {"status": "x"}
    )
    assert status == 404


# Stage instances ---------------------------------------------------------------------------------


async def test_stage_topic_is_1_to_120_characters(fake, http):
    guild = fake.guilds[0]
    stage = fake.add_voice_channel(guild, stage=True, bot_allow=STAGE_MODERATOR)
    for topic, code in (("", "BASE_TYPE_MIN_LENGTH"), ("t" * 121, "BASE_TYPE_MAX_LENGTH")):
        status, body = await call(
            http, "POST", "/stage-instances", {"channel_id": str(stage), "topic": topic}
        )
        assert status == 400
        assert error_at(body, "topic") == code
    status, body = await call(http, "POST", "/stage-instances", {"channel_id": str(stage)})
    assert status == 400
    assert error_at(body, "topic") == "BASE_TYPE_REQUIRED"
    status, body = await call(
        http, "POST", "/stage-instances", {"channel_id": str(stage), "topic": "t" * 120}
    )
    assert status == 200
    assert body["topic"] == "t" * 120
    status, body = await call(http, "PATCH", f"/stage-instances/{stage}", {"topic": ""})
    assert status == 400
    assert error_at(body, "topic") == "BASE_TYPE_MIN_LENGTH"
    status, body = await call(http, "PATCH", f"/stage-instances/{stage}", {"topic": "new"})
    assert status == 200
    assert guild.voice_channels[0].topic == "new"


async def test_stage_instances_need_a_stage_moderator_and_exist_once(fake, http):
    guild = fake.guilds[0]
    plain = fake.add_voice_channel(guild, stage=True)
    status, body = await call(
        http, "POST", "/stage-instances", {"channel_id": str(plain), "topic": "x"}
    )
    assert (status, body["code"]) == (403, rules.MISSING_PERMISSIONS)
    moderated = fake.add_voice_channel(guild, stage=True, bot_allow=STAGE_MODERATOR)
    status, body = await call(http, "PATCH", f"/stage-instances/{moderated}", {"topic": "x"})
    assert (status, body["code"]) == (404, rules.UNKNOWN_STAGE_INSTANCE)
    await fake.start_stage(guild, moderated, "a person's stage")
    status, body = await call(
        http, "POST", "/stage-instances", {"channel_id": str(moderated), "topic": "x"}
    )
    assert (status, body["code"]) == (400, rules.STAGE_ALREADY_OPEN)
    status, _ = await call(http, "DELETE", f"/stage-instances/{moderated}")
    assert status == 204
    assert guild.voice_channels[1].topic is None


# Scheduled events --------------------------------------------------------------------------------


@pytest.fixture
def events_guild(fake: FakeDiscord) -> int:
    guild = fake.guilds[0]
    guild.bot_role_permissions = CREATE_EVENTS
    return guild.id


async def test_an_external_event_at_every_limit_is_created(fake, http, events_guild):
    status, body = await call(http, "POST", f"/guilds/{events_guild}/scheduled-events", external())
    assert status == 200, body
    assert body["status"] == rules.SCHEDULED
    assert body["entity_metadata"]["location"] == "l" * 100


@pytest.mark.parametrize(
    ("what", "changes", "path", "code"),
    [
        ("name too long", {"name": "n" * 101}, ("name",), "BASE_TYPE_MAX_LENGTH"),
        ("name empty", {"name": ""}, ("name",), "BASE_TYPE_MIN_LENGTH"),
        ("no name", {"name": None}, ("name",), "BASE_TYPE_REQUIRED"),
        ("description", {"description": "d" * 1001}, ("description",), "BASE_TYPE_MAX_LENGTH"),
        ("privacy", {"privacy_level": 1}, ("privacy_level",), "BASE_TYPE_CHOICES"),
        ("entity type", {"entity_type": 4}, ("entity_type",), "BASE_TYPE_CHOICES"),
        (
            "no location",
            {"entity_metadata": {}},
            ("entity_metadata", "location"),
            "BASE_TYPE_REQUIRED",
        ),
        (
            "location too long",
            {"entity_metadata": {"location": "l" * 101}},
            ("entity_metadata", "location"),
            "BASE_TYPE_MAX_LENGTH",
        ),
        (
            "external without an end",
            {"scheduled_end_time": None},
            ("scheduled_end_time",),
            "GUILD_SCHEDULED_EVENT_REQUIRES_END_TIME",
        ),
        (
            "start in the past",
            {"scheduled_start_time": when(-5)},
            ("scheduled_start_time",),
            "GUILD_SCHEDULED_EVENT_SCHEDULE_PAST",
        ),
        (
            "end before start",
            {"scheduled_end_time": when(30)},
            ("scheduled_end_time",),
            "GUILD_SCHEDULED_EVENT_END_BEFORE_START",
        ),
        (
            "no zone",
            {"scheduled_start_time": "2099-01-01T10:00:00"},
            ("scheduled_start_time",),
            "DATE_TIME_TYPE_PARSE",
        ),
        (
            "external in a channel",
            {"channel_id": "123456789012345678"},
            ("channel_id",),
            "GUILD_SCHEDULED_EVENT_CHANNEL_NOT_ALLOWED",
        ),
        ("status on create", {"status": 2}, ("status",), "UNKNOWN_FIELD"),
    ],
)
async def test_event_rule_rejects(fake, http, events_guild, what, changes, path, code):
    status, body = await call(
        http, "POST", f"/guilds/{events_guild}/scheduled-events", external(**changes)
    )
    assert status == 400, what
    assert error_at(body, *path) == code
    assert fake.guilds[0].events == {}


async def test_event_status_moves_only_forward(fake, http, events_guild):
    base = f"/guilds/{events_guild}/scheduled-events"

    async def new() -> str:
        status, body = await call(http, "POST", base, external())
        assert status == 200
        return str(body["id"])

    async def move(event: str, to: int) -> int | str:
        status, body = await call(http, "PATCH", f"{base}/{event}", {"status": to})
        if status == 400 and body["code"] == rules.FINISHED_EVENT:
            assert body["message"] == "Cannot update a finished event"
            return "finished"
        if status == 400:
            assert error_at(body, "status") == "GUILD_SCHEDULED_EVENT_INVALID_STATUS_TRANSITION"
        return status

    first = await new()
    assert await move(first, rules.COMPLETED) == 400  # not from SCHEDULED
    assert await move(first, rules.ACTIVE) == 200
    assert await move(first, rules.SCHEDULED) == 400
    assert await move(first, rules.CANCELED) == 400  # not from ACTIVE
    assert await move(first, rules.COMPLETED) == 200
    for to in (rules.SCHEDULED, rules.ACTIVE, rules.COMPLETED, rules.CANCELED):
        assert await move(first, to) == "finished"  # COMPLETED is final, even "again"
    status, body = await call(http, "PATCH", f"{base}/{first}", {"name": "renamed"})
    assert (status, body["code"]) == (400, rules.FINISHED_EVENT)
    second = await new()
    assert await move(second, rules.CANCELED) == 200
    assert await move(second, rules.ACTIVE) == "finished"
    assert await move(second, rules.CANCELED) == "finished"
    status, body = await call(http, "PATCH", f"{base}/1234567890123", {"status": 2})
    assert (status, body["code"]) == (404, rules.UNKNOWN_SCHEDULED_EVENT)


async def test_a_deleted_event_is_unknown(fake, http, events_guild):
    base = f"/guilds/{events_guild}/scheduled-events"
    status, body = await call(http, "POST", base, external())
    event = body["id"]
    assert (await call(http, "PATCH", f"{base}/{event}", {"status": rules.ACTIVE}))[0] == 200
    status, _ = await call(http, "DELETE", f"{base}/{event}")
    assert status == 204
    for method, change in (("PATCH", {"status": rules.COMPLETED}), ("GET", None)):
        status, body = await call(http, method, f"{base}/{event}", change)
        assert (status, body["code"]) == (404, rules.UNKNOWN_SCHEDULED_EVENT), method
        assert body["message"] == "Unknown Guild Scheduled Event"
    assert (await call(http, "DELETE", f"{base}/{event}"))[0] == 404


# The fields discord-openapi.json's ExternalScheduledEventResponse requires.
EVENT_RESPONSE_FIELDS = {
    "id",
    "guild_id",
    "name",
    "description",
    "channel_id",
    "creator_id",
    "image",
    "scheduled_start_time",
    "scheduled_end_time",
    "status",
    "entity_type",
    "entity_id",
    "recurrence_rule",
    "privacy_level",
    "guild_scheduled_event_exceptions",
    "entity_metadata",
}


async def test_an_event_carries_what_discord_answers(fake, http, events_guild):
    base = f"/guilds/{events_guild}/scheduled-events"
    sent = external(image="data:image/png;base64,iVBORw0KGgo=")
    status, created = await call(http, "POST", base, sent)
    assert status == 200
    assert set(created) >= EVENT_RESPONSE_FIELDS
    assert created["id"].isdigit()
    assert created["guild_id"] == str(events_guild)
    assert created["creator_id"] == str(fake.bot_id)
    assert created["creator"]["id"] == str(fake.bot_id)
    assert created["status"] == rules.SCHEDULED
    assert created["entity_type"] == rules.EXTERNAL
    assert created["entity_metadata"] == {"location": "l" * 100}
    assert (created["channel_id"], created["entity_id"]) == (None, None)
    assert created["privacy_level"] == rules.GUILD_ONLY
    assert created["guild_scheduled_event_exceptions"] == []
    assert created["image"]
    assert not created["image"].startswith("data:")
    status, changed = await call(http, "PATCH", f"{base}/{created['id']}", {"status": 2})
    assert status == 200
    assert {**created, "status": rules.ACTIVE} == changed
    status, listed = await call(http, "GET", base)
    assert listed == [changed]


async def test_creating_an_event_needs_create_events(fake, http):
    status, body = await call(
        http, "POST", f"/guilds/{fake.guilds[0].id}/scheduled-events", external()
    )
    assert (status, body["code"]) == (403, rules.MISSING_PERMISSIONS)


@pytest.mark.parametrize(
    "permissions",
    [MANAGE_EVENTS, ((1 << 53) - 1) & ~CREATE_EVENTS & ~ADMINISTRATOR],
    ids=["Manage Events", "every other permission"],
)
async def test_since_2026_manage_events_alone_creates_no_event(fake, http, permissions):
    # Discord's change log (2025-11-20, 2025-11-24): from 23 February 2026 a bot needs
    # CREATE_EVENTS to create a scheduled event, whatever else it has.
    guild = fake.guilds[0]
    guild.bot_role_permissions = permissions
    status, body = await call(http, "POST", f"/guilds/{guild.id}/scheduled-events", external())
    assert (status, body["code"]) == (403, rules.MISSING_PERMISSIONS)
    assert guild.events == {}


@pytest.mark.parametrize("permissions", [CREATE_EVENTS, MANAGE_EVENTS])
async def test_the_bots_own_event_is_edited_and_deleted_with_either_permission(
    fake, http, events_guild, permissions
):
    base = f"/guilds/{events_guild}/scheduled-events"
    status, created = await call(http, "POST", base, external())
    assert status == 200
    fake.guilds[0].bot_role_permissions = permissions
    status, started = await call(http, "PATCH", f"{base}/{created['id']}", {"status": 2})
    assert (status, started["status"]) == (200, rules.ACTIVE)
    status, _ = await call(http, "DELETE", f"{base}/{created['id']}")
    assert status == 204
    fake.guilds[0].bot_role_permissions = 0
    status, created = await call(http, "POST", base, external())
    assert status == 403


async def test_someone_elses_event_needs_manage_events(fake, http, events_guild):
    guild = fake.guilds[0]
    theirs = fake.add_event(guild, creator_id=fake.owner_id)
    path = f"/guilds/{events_guild}/scheduled-events/{theirs}"
    for method, body in (("PATCH", {"status": rules.CANCELED}), ("DELETE", None)):
        status, answer = await call(http, method, path, body)
        assert (status, answer["code"]) == (403, rules.MISSING_PERMISSIONS), method
    assert guild.events[theirs]["status"] == rules.SCHEDULED
    guild.bot_role_permissions = MANAGE_EVENTS
    status, answer = await call(http, "PATCH", path, {"status": rules.CANCELED})
    assert (status, answer["status"]) == (200, rules.CANCELED)
    status, _ = await call(http, "DELETE", path)
    assert status == 204
    assert theirs not in guild.events


async def test_a_voice_event_needs_connect_in_its_channel_too(fake, http, events_guild):
    guild = fake.guilds[0]
    channel = fake.add_voice_channel(guild, bot_deny=CONNECT)
    body = external(entity_metadata=None, scheduled_end_time=None)
    body.update(entity_type=rules.VOICE, channel_id=str(channel))
    base = f"/guilds/{events_guild}/scheduled-events"
    status, answer = await call(http, "POST", base, body)
    assert (status, answer["code"]) == (403, rules.MISSING_PERMISSIONS)
    allowed = fake.add_voice_channel(guild)
    status, answer = await call(http, "POST", base, {**body, "channel_id": str(allowed)})
    assert status == 200, answer


async def test_a_guild_holds_at_most_100_live_events(fake, http, events_guild):
    base = f"/guilds/{events_guild}/scheduled-events"
    for _ in range(rules.EVENTS_MAX):
        status, _ = await call(http, "POST", base, external())
        assert status == 200
    status, body = await call(http, "POST", base, external())
    assert (status, body["code"]) == (400, rules.MAX_EVENTS_REACHED)
    # A finished event no longer counts.
    first = next(iter(fake.guilds[0].events))
    status, _ = await call(http, "PATCH", f"{base}/{first}", {"status": rules.CANCELED})
    assert status == 200
    status, _ = await call(http, "POST", base, external())
    assert status == 200
