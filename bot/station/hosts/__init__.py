"""Which class speaks to each kind of station host. A new host is a package here with a
``StationClient`` subclass (and, when listeners can request songs through it, a requests
client), named in ``SOURCES`` below; nothing above the station layer changes."""

from __future__ import annotations

from ..client import StationClient
from ..requests import RequestsClient
from ..source import KINDS
from .azuracast import AzuraCastClient, AzuraCastRequests
from .icecast import IcecastClient
from .shoutcast import ShoutcastClient

SOURCES: dict[str, type[StationClient]] = {
    "radioboss": StationClient,
    "azuracast": AzuraCastClient,
    "icecast": IcecastClient,
    "shoutcast": ShoutcastClient,
}

# The song-request client of each kind whose host takes requests (``Feature.REQUESTS``).
REQUESTS: dict[str, type[RequestsClient]] = {
    "radioboss": RequestsClient,
    "azuracast": AzuraCastRequests,
}


def source_class(kind: str) -> type[StationClient]:
    """The client class of ``kind`` (one of ``KINDS``); ValueError for any other."""
    try:
        return SOURCES[kind]
    except KeyError:
        raise ValueError(f"unknown kind {kind!r}: expected one of {', '.join(KINDS)}") from None


def requests_class(kind: str) -> type[RequestsClient]:
    """The song-request client of ``kind``; ValueError when its host takes no requests."""
    try:
        return REQUESTS[kind]
    except KeyError:
        raise ValueError(f"stations of kind {kind!r} take no song requests") from None
