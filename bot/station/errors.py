"""The station client's error hierarchy.

Every message is written to be shown to a Discord user as it is: it says what failed and what to
do, and never carries the API key (URLs are redacted before they reach a message).
"""

from __future__ import annotations

import json
from dataclasses import dataclass


class StationError(Exception):
    """Base class: anything that went wrong while asking a station."""

    default_message = "The station could not be reached."
    # For staff (the status command, the down alert), set by the client: the server asked
    # (host and port, never the query: it holds the key) and the low-level cause ("timeout",
    # "HTTP 503", "ConnectionRefusedError"), never a listener's advice.
    server: str = ""
    cause: str = ""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or self.default_message)

    @property
    def message(self) -> str:
        return str(self.args[0])


class StationAuthError(StationError):
    """The station refused the API key (401/403, or a body saying the key is wrong)."""

    default_message = "The station refused the API key; ask an admin to check it."


class StationNotFound(StationError):
    """The station id is unknown to the server (404)."""

    default_message = "The station server does not know this station id; check the id."


class StationUnavailable(StationError):
    """Timeouts, connection errors, 5xx and 429: worth trying again later."""

    default_message = "The station is not answering right now; try again in a little while."

    def __init__(self, message: str | None = None, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StationResponseError(StationError):
    """The answer was not the JSON object expected (HTML, truncated, too large, wrong shape)."""

    default_message = "The station sent an answer OnAir cannot read."


class StationRefused(StationResponseError):
    """OnAir will not contact the address (the owner's policy refuses it, now or on a redirect).
    Not retried: the answer will not change until the policy or the station does."""

    default_message = "OnAir does not contact this station's address."


class AddressRefused(OSError):
    """Raised by a resolver that refuses every address a host resolves to (internal ones)."""


class SanitisedCause(Exception):
    """Stands in for a low-level error in a cause chain (aiohttp's carry the URL and the key)."""


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed call as kept for staff (``/onair status``, the down alert): its kind, server and
    cause, without the exception (whose traceback would keep the request's frames alive)."""

    kind: type[StationError]
    server: str
    cause: str
    message: str

    @classmethod
    def of(cls, error: StationError) -> Failure:
        return cls(type(error), error.server, error.cause, error.message)

    def dumps(self) -> str:
        """As stored with a down alert (a JSON object): the render words it when posting."""
        return json.dumps(
            {"kind": self.kind.__name__, "server": self.server, "cause": self.cause},
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, stored: str) -> Failure | None:
        """What :meth:`dumps` wrote; None for anything else (an older OnAir stored the
        listener's message there)."""
        try:
            raw = json.loads(stored) if stored.startswith("{") else None
        except ValueError:
            return None
        if not isinstance(raw, dict):
            return None
        kind = _KINDS.get(str(raw.get("kind")), StationError)
        server, cause = str(raw.get("server") or "")[:200], str(raw.get("cause") or "")[:200]
        return cls(kind, server, cause, kind.default_message)


class RequestsUnavailable(StationUnavailable):
    """The request endpoints answered nothing usable (HTML, empty, not JSON, an error status,
    no answer in time): down or rate limiting, as public clients read it."""

    default_message = "Song requests are unavailable right now; try again in a little while."


class RequestsOff(StationError):
    """The station takes no song requests now (it refuses everything, the queue included)."""

    default_message = "This station is not taking song requests right now."


class RequestRefused(StationError):
    """The station refused one request; ``reason`` is its own words (``message``/``errdetail``),
    already made one plain, bounded line (None when it gave none)."""

    default_message = "The station did not accept the request."

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(f"The station did not accept the request: {reason}" if reason else None)
        self.reason = reason


# The kinds a stored failure names (by class name).
_KINDS: dict[str, type[StationError]] = {
    kind.__name__: kind
    for kind in (
        StationError,
        StationAuthError,
        StationNotFound,
        StationUnavailable,
        StationResponseError,
        StationRefused,
        RequestsUnavailable,
        RequestsOff,
        RequestRefused,
    )
}
