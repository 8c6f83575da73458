"""The bot's presence (gateway op 3, Update Presence): status and activities."""

from __future__ import annotations

from typing import Any

PRESENCE_FIELDS = frozenset({"since", "activities", "status", "afk"})
PRESENCE_STATUSES = frozenset({"online", "dnd", "idle", "invisible", "offline"})
ACTIVITY_TYPES = range(0, 6)  # playing, streaming, listening, watching, custom, competing
ACTIVITY_NAME_MAX = 128
ACTIVITY_TEXT_MAX = 128  # state and details
ACTIVITY_URL_MAX = 512
ACTIVITIES_MAX = 10


def check_presence_update(data: Any) -> str | None:
    """Op 3's ``d`` as Discord documents it (``since`` int or null, ``activities``, ``status``,
    ``afk``; activity ``name`` required, ``type`` 0-5, optional ``state``/``url``): what is
    wrong with it (Discord closes the gateway with 4002), or None.

    discord.py sends ``since: 0.0``, which Discord accepts: an integral float passes. Fields a
    bot cannot set (``flags``, ``buttons``, as discord.py's ``Activity.to_dict`` adds) are
    ignored by Discord and here, but must still have their JSON type."""
    if not isinstance(data, dict):
        return "op 3 without an object"
    if set(data) != PRESENCE_FIELDS:
        return f"op 3 fields {sorted(data)[:8]} are not {sorted(PRESENCE_FIELDS)}"
    since = data["since"]
    if since is not None and (
        isinstance(since, bool)
        or not isinstance(since, int | float)
        or since != int(since)
        or since < 0
    ):
        return "op 3 since is not a unix time in milliseconds or null"
    if data["status"] not in PRESENCE_STATUSES:
        return f"op 3 status {str(data['status'])[:20]!r} is not one of {sorted(PRESENCE_STATUSES)}"
    if not isinstance(data["afk"], bool):
        return "op 3 afk is not a boolean"
    activities = data["activities"]
    if not isinstance(activities, list) or len(activities) > ACTIVITIES_MAX:
        return f"op 3 activities is not a list of at most {ACTIVITIES_MAX}"
    for activity in activities:
        problem = _check_activity(activity)
        if problem is not None:
            return problem
    return None


def _check_activity(activity: Any) -> str | None:
    if not isinstance(activity, dict):
        return "op 3 activity is not an object"
    name = activity.get("name")
    if not isinstance(name, str) or not name.strip():
        return "op 3 activity without a name"
    if len(name) > ACTIVITY_NAME_MAX:
        return f"op 3 activity name is {len(name)} characters (at most {ACTIVITY_NAME_MAX})"
    kind = activity.get("type")
    if isinstance(kind, bool) or not isinstance(kind, int) or kind not in ACTIVITY_TYPES:
        return "op 3 activity type is not 0-5"
    for key, limit in (("state", ACTIVITY_TEXT_MAX), ("details", ACTIVITY_TEXT_MAX)):
        value = activity.get(key)
        if value is not None and (not isinstance(value, str) or len(value) > limit):
            return f"op 3 activity {key} is not a string of at most {limit} characters"
    url = activity.get("url")
    if url is not None and (not isinstance(url, str) or len(url) > ACTIVITY_URL_MAX):
        return "op 3 activity url is not a string"
    flags = activity.get("flags", 0)
    if isinstance(flags, bool) or not isinstance(flags, int):
        return "op 3 activity flags is not an integer"
    if not isinstance(activity.get("buttons", []), list):
        return "op 3 activity buttons is not a list"
    return None
