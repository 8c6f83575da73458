"""A failed station call as staff read it: the cause and the server, never a listener's advice.

Listeners read ``StationError.message`` ("not answering right now; try again in a little
while"). Staff (``/onair status``; never a public post) need what failed and where: "no answer from
c9.radioboss.fm (timeout)". The server is the host and port only: never a URL with its query,
which holds the key.
"""

from __future__ import annotations

import re

from ..station import errors
from ..util.i18n import ENGLISH, N_, Lang

# Low-level causes (aiohttp's and the OS's exception names) in plain words.
_CAUSES = {
    "ClientConnectorError": N_("could not connect"),
    "ClientConnectorDNSError": N_("host name not found"),
    "ClientConnectorCertificateError": N_("TLS certificate not trusted"),
    "ClientSSLError": N_("TLS error"),
    "ClientConnectorSSLError": N_("TLS error"),
    "SSLError": N_("TLS error"),
    "ServerDisconnectedError": N_("connection closed"),
    "ConnectionResetError": N_("connection reset"),
    "ConnectionRefusedError": N_("connection refused"),
    "ClientOSError": N_("connection error"),
    "ClientPayloadError": N_("answer cut short"),
    "address refused": N_("internal address"),
}
_PLAIN_CAUSE = re.compile(r"^[A-Za-z0-9 .:-]{1,40}$")


def cause_words(cause: str) -> str:
    """``timeout`` and ``HTTP 503`` as they are; exception names in plain words (English msgids:
    :func:`staff_reason` says them in the reader's language)."""
    if cause in _CAUSES:
        return _CAUSES[cause]
    if cause.endswith("Error") or not _PLAIN_CAUSE.match(cause):
        return N_("connection error")
    return cause


# Per kind of failure: the line with a cause, and without one (whole sentences, for gettext).
_REASONS: tuple[tuple[type[errors.StationError], str, str], ...] = (
    (
        errors.StationUnavailable,
        N_("no answer from {server} ({cause})"),
        N_("no answer from {server}"),
    ),
    (
        errors.StationAuthError,
        N_("{server} refused the API key ({cause})"),
        N_("{server} refused the API key"),
    ),
    (
        errors.StationNotFound,
        N_("{server} does not know this station id ({cause})"),
        N_("{server} does not know this station id"),
    ),
    (
        errors.StationRefused,
        N_("{server} is at an address OnAir does not contact"),
        N_("{server} is at an address OnAir does not contact"),
    ),
    (
        errors.StationResponseError,
        N_("an answer from {server} that OnAir cannot read ({cause})"),
        N_("an answer from {server} that OnAir cannot read"),
    ),
    (
        errors.StationError,
        N_("{server} could not be reached ({cause})"),
        N_("{server} could not be reached"),
    ),
)


def staff_reason(failure: errors.Failure | errors.StationError, lang: Lang = ENGLISH) -> str:
    """One line for staff: what failed, at which server, and the low-level cause (plain text:
    escape it with ``text.safe`` where it is shown)."""
    if isinstance(failure, errors.StationError):
        failure = errors.Failure.of(failure)
    server = failure.server[:120] or lang.t("the station server")
    cause = lang.t(cause_words(failure.cause))[:60] if failure.cause else ""
    for kind, with_cause, without in _REASONS:
        if issubclass(failure.kind, kind):
            return lang.t(with_cause if cause else without, server=server, cause=cause)
    return failure.message
