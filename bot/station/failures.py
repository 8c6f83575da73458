"""What a failed station call means: each way a request can fail (status, connection, an error
message where data was expected) translated into a ``StationError`` and its :class:`Problem`.
Its values name the server (host and port), never the URL's query, which holds the key."""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from typing import Any, NoReturn

import aiohttp
from yarl import URL

from .errors import (
    Problem,
    SanitisedCause,
    StationAuthError,
    StationError,
    StationNotFound,
    StationResponseError,
    StationUnavailable,
)

_AUTH_WORDS = ("key", "auth", "forbidden", "denied", "permission", "token")
_NOT_FOUND_WORDS = ("not found", "unknown station", "no such station", "does not exist")


class Retry(Exception):
    """Internal: this attempt failed in a way worth another try."""

    def __init__(self, error: StationError, cause: str, retry_after: float | None = None) -> None:
        super().__init__(cause)
        self.error = error
        self.cause = cause
        self.retry_after = retry_after


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    raw = headers.get("Retry-After")
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if 0 <= value < 86400 else None


def server_of(url: URL) -> str:
    """Host and explicit port of ``url``: what a message may name (never the query: the key)."""
    port = f":{url.explicit_port}" if url.explicit_port else ""
    return f"{url.host or '?'}{port}"


def connection_error(exc: BaseException, url: URL) -> StationUnavailable | None:
    """Why the connection failed, naming the server; None for the generic problem."""
    server = server_of(url)
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return StationUnavailable(Problem.HOST_NOT_FOUND, host=url.host or "?")
    if isinstance(exc, aiohttp.ClientConnectorCertificateError | ssl.SSLCertVerificationError):
        return StationUnavailable(Problem.TLS_UNTRUSTED, server=server)
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError):
        return StationUnavailable(Problem.TLS_FAILED, server=server)
    os_error = exc.os_error if isinstance(exc, aiohttp.ClientConnectorError) else exc
    if isinstance(os_error, ConnectionRefusedError):
        return StationUnavailable(Problem.CONNECTION_REFUSED, server=server)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return StationUnavailable(Problem.CONNECT_FAILED, server=server)
    if isinstance(exc, aiohttp.ServerDisconnectedError | ConnectionResetError):
        return StationUnavailable(Problem.CLOSED, server=server)
    return None


def body_error(payload: Any) -> StationError | None:
    """A JSON object that is an error message rather than data (seen on some servers)."""
    if not isinstance(payload, Mapping):
        return None
    message = payload.get("error") or payload.get("message")
    if not isinstance(message, str) or len(payload) > 3:
        return None
    lowered = message.lower()
    if any(word in lowered for word in _AUTH_WORDS):
        return StationAuthError()
    if any(word in lowered for word in _NOT_FOUND_WORDS):
        return StationNotFound()
    return StationResponseError(Problem.ERROR_ANSWER)


def status_error(status: int, retry_after: float | None) -> NoReturn:
    cause = SanitisedCause(f"HTTP {status}")
    if status in (401, 403):
        raise StationAuthError() from cause
    if status == 404:
        raise StationNotFound() from cause
    if status >= 500 or (status == 429 and retry_after is not None):
        raise Retry(StationUnavailable(retry_after=retry_after), f"HTTP {status}", retry_after)
    if status == 429:
        raise StationUnavailable(Problem.RATE_LIMITED) from cause
    raise StationResponseError(Problem.REJECTED, status=status) from cause
