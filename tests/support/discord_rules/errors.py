"""How the fake refuses, as Discord does: the 400 Invalid Form Body (50035) with its errors
nested by field path, and Discord's plain JSON errors (status, numeric code, message).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

INVALID_FORM_BODY = 50035
EMPTY_MESSAGE = 50006
ALREADY_ACKNOWLEDGED = 40060
UNKNOWN_INTERACTION = 10062
UNKNOWN_WEBHOOK = 10015
NOT_AUTHOR = 50005
ENTITY_TOO_LARGE = 40005

UNKNOWN_VOICE_STATE = 10065
MISSING_PERMISSIONS = 50013
MISSING_ACCESS = 50001  # a channel the bot cannot see: not in its guild, or a DM of others
INVALID_CHANNEL_TYPE = 50024

UNKNOWN_STAGE_INSTANCE = 10067
STAGE_ALREADY_OPEN = 150006

UNKNOWN_SCHEDULED_EVENT = 10070
FINISHED_EVENT = 180000  # Cannot update a finished event (COMPLETED and CANCELED are final)

MAX_EVENTS_REACHED = 30038

Path = tuple[str | int, ...]


@dataclass
class FormErrors:
    """Collects violations and renders Discord's nested ``errors`` object."""

    tree: dict[str, Any] = field(default_factory=dict)

    def add(self, path: Path, code: str, message: str) -> None:
        node = self.tree
        for part in path:
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def __bool__(self) -> bool:
        return bool(self.tree)

    def body(self) -> dict[str, Any]:
        return {"code": INVALID_FORM_BODY, "message": "Invalid Form Body", "errors": self.tree}


@dataclass(frozen=True)
class Rejection:
    """What the fake answers instead of performing the request."""

    status: int
    body: dict[str, Any]

    @classmethod
    def error(cls, status: int, code: int, message: str) -> Rejection:
        """Discord's JSON error body: its numeric ``code`` and the ``message`` it says."""
        return cls(status, {"code": code, "message": message})


def rejection(errors: FormErrors) -> Rejection | None:
    return Rejection(400, errors.body()) if errors else None


def _refusal(status: int, code: int, message: str) -> Callable[[], Rejection]:
    """One of Discord's plain JSON errors, as a factory: ``rules.not_author()``."""
    return partial(Rejection.error, status, code, message)


empty_message = _refusal(400, EMPTY_MESSAGE, "Cannot send an empty message")
already_acknowledged = _refusal(
    400, ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged."
)
unknown_interaction = _refusal(404, UNKNOWN_INTERACTION, "Unknown interaction")
# A follow-up (webhook) before the interaction was answered: its webhook does not exist.
unknown_webhook = _refusal(404, UNKNOWN_WEBHOOK, "Unknown Webhook")
not_author = _refusal(403, NOT_AUTHOR, "Cannot edit a message authored by another user")
too_large = _refusal(413, ENTITY_TOO_LARGE, "Request entity too large")
missing_permissions = _refusal(403, MISSING_PERMISSIONS, "Missing Permissions")
missing_access = _refusal(403, MISSING_ACCESS, "Missing Access")
