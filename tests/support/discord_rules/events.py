"""Guild scheduled events (/guilds/{guild}/scheduled-events[/{event}]): fields, times, status
transitions, the guild's limit, and who may create, edit or delete one.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .errors import (
    FINISHED_EVENT,
    MAX_EVENTS_REACHED,
    UNKNOWN_SCHEDULED_EVENT,
    FormErrors,
    Path,
    Rejection,
    _refusal,
)
from .fields import _iso8601, _object, _snowflake, _text

# Since 2026-02-23 (change log, 2025-11-20 and 2025-11-24) a bot needs CREATE_EVENTS to create
# an event; MANAGE_EVENTS alone no longer does. CREATE_EVENTS also edits and deletes the events
# it made; MANAGE_EVENTS edits and deletes anyone's.
MANAGE_EVENTS = 1 << 33
CREATE_EVENTS = 1 << 44
# What a VOICE or STAGE_INSTANCE event needs besides, in its channel (guild-scheduled-event.mdx).
_VIEW_CHANNEL, _CONNECT = 1 << 10, 1 << 20
_MANAGE_CHANNELS, _MUTE_MEMBERS, _MOVE_MEMBERS = 1 << 4, 1 << 22, 1 << 24
EVENT_NAME_MAX = 100
EVENT_DESCRIPTION_MAX = 1000
EVENT_LOCATION_MAX = 100
EVENTS_MAX = 100  # SCHEDULED and ACTIVE events a guild may have at once
STAGE_INSTANCE, VOICE, EXTERNAL = 1, 2, 3
SCHEDULED, ACTIVE, COMPLETED, CANCELED = 1, 2, 3, 4
GUILD_ONLY = 2
# Discord: SCHEDULED → ACTIVE or CANCELED; ACTIVE → COMPLETED; COMPLETED and CANCELED are final.
EVENT_TRANSITIONS: dict[int, frozenset[int]] = {
    SCHEDULED: frozenset({ACTIVE, CANCELED}),
    ACTIVE: frozenset({COMPLETED}),
    COMPLETED: frozenset(),
    CANCELED: frozenset(),
}

FINISHED_STATUSES = frozenset({COMPLETED, CANCELED})

EVENT_FIELDS = frozenset(
    {
        "name",
        "description",
        "image",
        "scheduled_start_time",
        "scheduled_end_time",
        "privacy_level",
        "entity_type",
        "channel_id",
        "entity_metadata",
        "recurrence_rule",
        "status",
    }
)


def _moment(errors: FormErrors, path: Path, value: Any, *, required: bool) -> datetime | None:
    """An ISO 8601 timestamp with a zone (Discord refuses one without)."""
    if value is None:
        if required:
            errors.add(path, "BASE_TYPE_REQUIRED", "This field is required")
        return None
    if not _iso8601(value):
        errors.add(path, "DATE_TIME_TYPE_PARSE", "Could not parse the date.")
        return None
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        errors.add(path, "DATE_TIME_TYPE_PARSE", "Could not parse the date.")
        return None
    return moment


def check_scheduled_event(
    body: Any,
    errors: FormErrors,
    *,
    current: Mapping[str, Any] | None,
    now: datetime,
) -> None:
    """Create (``current`` None) or modify a scheduled event, per discord-openapi.json and
    Discord's documentation: name 1-100, description at most 1000, privacy_level 2 (guild only),
    entity_type 1-3; an EXTERNAL event needs entity_metadata.location (1-100) and a
    scheduled_end_time, and no channel_id; a new event starts in the future and ends after it
    starts; ``status`` moves only SCHEDULED → ACTIVE → COMPLETED or SCHEDULED → CANCELED (and is
    not settable on create)."""
    if not isinstance(body, dict):
        errors.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
        return
    create = current is None
    for name in sorted(set(body) - EVENT_FIELDS)[:10]:
        errors.add((name,), "UNKNOWN_FIELD", "This field is not accepted here.")
    _text(errors, ("name",), body.get("name"), EVENT_NAME_MAX, minimum=1, required=create)
    _text(errors, ("description",), body.get("description"), EVENT_DESCRIPTION_MAX)
    level = body.get("privacy_level")
    if (create or level is not None) and level != GUILD_ONLY:
        errors.add(("privacy_level",), "BASE_TYPE_CHOICES", "Value must be one of {2}.")
    merged: dict[str, Any] = {**(current or {}), **body}
    kind = merged.get("entity_type")
    if kind not in (STAGE_INSTANCE, VOICE, EXTERNAL):
        errors.add(("entity_type",), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3}.")
    start = _moment(
        errors, ("scheduled_start_time",), body.get("scheduled_start_time"), required=create
    )
    end = _moment(errors, ("scheduled_end_time",), body.get("scheduled_end_time"), required=False)
    if create and start is not None and start <= now:
        errors.add(
            ("scheduled_start_time",),
            "GUILD_SCHEDULED_EVENT_SCHEDULE_PAST",
            "Cannot schedule event in the past.",
        )
    if start is None and current is not None and merged.get("scheduled_start_time"):
        start = datetime.fromisoformat(str(merged["scheduled_start_time"]))
    if end is not None and start is not None and end <= start:
        errors.add(
            ("scheduled_end_time",),
            "GUILD_SCHEDULED_EVENT_END_BEFORE_START",
            "Cannot schedule event to end before starting.",
        )
    if kind == EXTERNAL:
        if merged.get("channel_id") is not None:
            errors.add(
                ("channel_id",),
                "GUILD_SCHEDULED_EVENT_CHANNEL_NOT_ALLOWED",
                "External events cannot have a channel.",
            )
        metadata = _object(errors, ("entity_metadata",), merged.get("entity_metadata"))
        location = (metadata or {}).get("location")
        _text(
            errors,
            ("entity_metadata", "location"),
            location,
            EVENT_LOCATION_MAX,
            minimum=1,
            required=True,
        )
        if merged.get("scheduled_end_time") is None:
            errors.add(
                ("scheduled_end_time",),
                "GUILD_SCHEDULED_EVENT_REQUIRES_END_TIME",
                "External events require an end time.",
            )
    elif kind in (STAGE_INSTANCE, VOICE) and not _snowflake(merged.get("channel_id")):
        errors.add(("channel_id",), "BASE_TYPE_REQUIRED", "This field is required")
    status = body.get("status")
    if status is None:
        return
    if create:
        errors.add(("status",), "UNKNOWN_FIELD", "This field is not accepted here.")
    elif status not in EVENT_TRANSITIONS:
        errors.add(("status",), "BASE_TYPE_CHOICES", "Value must be one of {1, 2, 3, 4}.")
    elif (
        current is not None
        and status != current.get("status")
        and status not in EVENT_TRANSITIONS[int(current.get("status") or 0)]
    ):
        errors.add(
            ("status",),
            "GUILD_SCHEDULED_EVENT_INVALID_STATUS_TRANSITION",
            "Invalid status transition.",
        )


def may_change_event(allowed: int, *, entity_type: Any, creating: bool, own: bool) -> bool:
    """Whether permissions ``allowed`` (guild-level for an EXTERNAL event, the event's channel's
    for VOICE and STAGE_INSTANCE) let the caller create (``creating``) or edit or delete an
    event, per guild-scheduled-event.mdx: creating takes CREATE_EVENTS; editing or deleting
    takes CREATE_EVENTS or MANAGE_EVENTS for the caller's ``own`` event and MANAGE_EVENTS for
    anyone else's; a VOICE event also VIEW_CHANNEL and CONNECT, a STAGE_INSTANCE event
    MANAGE_CHANNELS, MUTE_MEMBERS and MOVE_MEMBERS."""
    if creating:
        events = bool(allowed & CREATE_EVENTS)
    elif own:
        events = bool(allowed & (CREATE_EVENTS | MANAGE_EVENTS))
    else:
        events = bool(allowed & MANAGE_EVENTS)
    channel = {
        VOICE: _VIEW_CHANNEL | _CONNECT,
        STAGE_INSTANCE: _MANAGE_CHANNELS | _MUTE_MEMBERS | _MOVE_MEMBERS,
    }.get(entity_type, 0)
    return events and allowed & channel == channel


def too_many_events() -> Rejection:
    return Rejection(
        400,
        {
            "code": MAX_EVENTS_REACHED,
            "message": f"Maximum number of guild scheduled events reached ({EVENTS_MAX})",
        },
    )


unknown_scheduled_event = _refusal(404, UNKNOWN_SCHEDULED_EVENT, "Unknown Guild Scheduled Event")
# Any change to a COMPLETED or CANCELED event (Discord's JSON error 180000).
finished_event = _refusal(400, FINISHED_EVENT, "Cannot update a finished event")
