"""The station client's error hierarchy.

Each error carries what went wrong as a :class:`Problem` and the values that describe it
(``server``, ``status``, ...): the bot words it for people, in their language (``bot.errors``);
``str(error)`` is the technical line for logs. The API key is in neither: a server is named by
host and port, never by a URL with its query.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import Enum


class Problem(Enum):
    """What went wrong with a station call (its value is the log's word for it)."""

    UNREACHABLE = "could not be reached"
    KEY_REFUSED = "API key refused"
    UNKNOWN_STATION = "unknown station id"
    NO_PLAYLIST = "neither playlist path"
    NOT_ANSWERING = "not answering"
    TIMEOUT = "no answer in time"
    HOST_NOT_FOUND = "host name not found"
    TLS_UNTRUSTED = "TLS certificate not trusted"
    TLS_FAILED = "TLS error"
    CONNECTION_REFUSED = "connection refused"
    CONNECT_FAILED = "could not connect"
    CLOSED = "connection closed without an answer"
    RATE_LIMITED = "rate limited"
    REJECTED = "request rejected"
    ERROR_ANSWER = "an error instead of data"
    UNREADABLE = "unreadable answer"
    TOO_LARGE = "answer too large"
    EMPTY = "empty answer"
    NOT_JSON = "not valid JSON"
    NOT_OBJECT = "not a JSON object"
    WRONG_SHAPE = "a part is not a JSON object"
    BAD_VALUES = "unreadable values"
    TOO_MANY_REDIRECTS = "redirected too many times"
    NOT_CONTACTED = "address not contacted"
    NO_LONGER_CONTACTED = "address refused by the policy"
    REDIRECT_REFUSED = "redirected to an address not contacted"
    INTERNAL_ADDRESS = "internal address"
    REQUESTS_UNAVAILABLE = "song requests unavailable"
    REQUESTS_OFF = "song requests off"
    REQUEST_REFUSED = "request refused"
    NOT_OFFERED = "not offered by this host"


class StationError(Exception):
    """Base class: anything that went wrong while asking a station. ``values`` describe it
    (``server``, ``status``, ``what``, ``reason``: plain text, no key; ``why``: the guard's
    refusal, which the bot says in the reader's language)."""

    problem = Problem.UNREACHABLE  # each class's usual problem; an error may name another
    # For staff (the status command, the down alert), set by the client: the server asked
    # (host and port, never the query: it holds the key) and the low-level cause ("timeout",
    # "HTTP 503", "ConnectionRefusedError"), never a listener's advice.
    server: str = ""
    cause: str = ""

    def __init__(self, problem: Problem | None = None, /, **values: object) -> None:
        self.problem = problem or type(self).problem
        self.values = values
        super().__init__(technical(self.problem, values))

    @property
    def message(self) -> str:
        """The technical line (for logs): the problem and its values."""
        return str(self.args[0])


def technical(problem: Problem, values: dict[str, object]) -> str:
    """``no answer in time (server: c9.radioboss.fm)``: what a log says of a failed call."""
    if not values:
        return problem.value
    return f"{problem.value} ({'; '.join(f'{k}: {v}' for k, v in values.items())})"


class StationAuthError(StationError):
    """The station refused the API key (401/403, or a body saying the key is wrong)."""

    problem = Problem.KEY_REFUSED


class StationNotFound(StationError):
    """The station id is unknown to the server (404)."""

    problem = Problem.UNKNOWN_STATION


class StationUnavailable(StationError):
    """Timeouts, connection errors, 5xx and 429: worth trying again later."""

    problem = Problem.NOT_ANSWERING

    def __init__(
        self,
        problem: Problem | None = None,
        /,
        *,
        retry_after: float | None = None,
        **values: object,
    ) -> None:
        super().__init__(problem, **values)
        self.retry_after = retry_after


class StationResponseError(StationError):
    """The answer was not the JSON object expected (HTML, truncated, too large, wrong shape)."""

    problem = Problem.UNREADABLE


class StationRefused(StationResponseError):
    """OnAir will not contact the address (the owner's policy refuses it, now or on a redirect).
    Not retried: the answer will not change until the policy or the station does."""

    problem = Problem.NOT_CONTACTED


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
    message: str  # the technical line (``str(error)``), for logs

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
        return cls(kind, server, cause, kind.problem.value)


class RequestsUnavailable(StationUnavailable):
    """The request endpoints answered nothing usable (HTML, empty, not JSON, an error status,
    no answer in time): down or rate limiting, as public clients read it."""

    problem = Problem.REQUESTS_UNAVAILABLE


class RequestsOff(StationError):
    """The station takes no song requests now (it refuses everything, the queue included)."""

    problem = Problem.REQUESTS_OFF


class RequestRefused(StationError):
    """The station refused one request; ``reason`` is its own words (``message``/``errdetail``),
    already made one plain, bounded line (None when it gave none)."""

    problem = Problem.REQUEST_REFUSED

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(**({"reason": reason} if reason else {}))
        self.reason = reason


class NotOffered(StationError):
    """The station's host has no such thing (an Icecast server has no playlist)."""

    problem = Problem.NOT_OFFERED


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
        NotOffered,
    )
}
