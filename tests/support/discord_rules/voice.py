"""Voice: gateway op 4, the bot's own voice state on a stage (suppress, request to speak), a
voice channel's status line and a stage's instance.
"""

from __future__ import annotations

from typing import Any

from .errors import (
    INVALID_CHANNEL_TYPE,
    UNKNOWN_STAGE_INSTANCE,
    UNKNOWN_VOICE_STATE,
    FormErrors,
    _refusal,
)
from .fields import _iso8601, _snowflake, _text

VOICE_STATE_FIELDS = frozenset({"guild_id", "channel_id", "self_mute", "self_deaf"})
MY_VOICE_STATE_FIELDS = frozenset({"channel_id", "suppress", "request_to_speak_timestamp"})


def check_gateway_voice_state(data: Any) -> str | None:
    """Op 4's ``d``: what is wrong with it (Discord closes the gateway with 4002), or None."""
    if not isinstance(data, dict):
        return "op 4 without an object"
    if set(data) != VOICE_STATE_FIELDS:
        return f"op 4 fields {sorted(data)[:8]} are not {sorted(VOICE_STATE_FIELDS)}"
    if not _snowflake(data["guild_id"]) or isinstance(data["guild_id"], bool):
        return "op 4 guild_id is not a snowflake"
    channel = data["channel_id"]
    if channel is not None and (isinstance(channel, bool) or not _snowflake(channel)):
        return "op 4 channel_id is not a snowflake or null"
    if not isinstance(data["self_mute"], bool) or not isinstance(data["self_deaf"], bool):
        return "op 4 self_mute/self_deaf are not booleans"
    return None


def check_my_voice_state(body: Any, errors: FormErrors) -> None:
    """Modify Current User Voice State: three optional fields (the fake rejects any other)."""
    if not isinstance(body, dict):
        errors.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    for name in sorted(set(body) - MY_VOICE_STATE_FIELDS)[:10]:
        errors.add((name,), "UNKNOWN_FIELD", "This field is not accepted here.")
    channel = body.get("channel_id")
    if channel is not None and (isinstance(channel, bool) or not _snowflake(channel)):
        errors.add(("channel_id",), "NUMBER_TYPE_COERCE", f'Value "{channel}" is not snowflake.')
    suppress = body.get("suppress")
    if suppress is not None and not isinstance(suppress, bool):
        errors.add(("suppress",), "BASE_TYPE_BOOLEAN", "Must be either true or false.")
    stamp = body.get("request_to_speak_timestamp")
    if stamp is not None and not _iso8601(stamp):
        errors.add(
            ("request_to_speak_timestamp",), "DATE_TIME_TYPE_PARSE", "Could not parse the date."
        )


VOICE_STATUS_MAX = 500
SET_VOICE_CHANNEL_STATUS = 1 << 48


def check_voice_status(body: Any, errors: FormErrors) -> None:
    """``{"status": string or null}``, at most 500 characters (discord-openapi.json)."""
    if not isinstance(body, dict):
        errors.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    for name in sorted(set(body) - {"status"})[:10]:
        errors.add((name,), "UNKNOWN_FIELD", "This field is not accepted here.")
    _text(errors, ("status",), body.get("status"), VOICE_STATUS_MAX)


STAGE_TOPIC_MIN, STAGE_TOPIC_MAX = 1, 120


def check_stage_instance(body: Any, errors: FormErrors, *, create: bool) -> None:
    """A stage instance's ``topic`` (1-120 characters; required on create, with ``channel_id``)
    and ``privacy_level`` (2, guild only: public stages are gone)."""
    if not isinstance(body, dict):
        errors.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    allowed = {"topic", "privacy_level"} | (
        {"channel_id", "send_start_notification", "guild_scheduled_event_id"} if create else set()
    )
    for name in sorted(set(body) - allowed)[:10]:
        errors.add((name,), "UNKNOWN_FIELD", "This field is not accepted here.")
    _text(
        errors,
        ("topic",),
        body.get("topic"),
        STAGE_TOPIC_MAX,
        minimum=STAGE_TOPIC_MIN,
        required=create,
    )
    if create and not _snowflake(body.get("channel_id")):
        errors.add(("channel_id",), "BASE_TYPE_REQUIRED", "This field is required")
    level = body.get("privacy_level")
    if level is not None and level != 2:
        errors.add(("privacy_level",), "BASE_TYPE_CHOICES", "Value must be one of {2}.")


# What Discord answers a stage route it cannot follow.
unknown_voice_state = _refusal(404, UNKNOWN_VOICE_STATE, "Unknown Voice State")
invalid_channel_type = _refusal(
    400, INVALID_CHANNEL_TYPE, "Cannot execute action on this channel type"
)
unknown_stage_instance = _refusal(404, UNKNOWN_STAGE_INSTANCE, "Unknown Stage Instance")
