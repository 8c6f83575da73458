"""What every station host offers OnAir: one small interface, each host a class behind it.

A host (RadioBOSS Cloud, AzuraCast, Icecast, Shoutcast) is a :class:`~bot.station.StationClient`
subclass that turns its own API into OnAir's station model (``StationInfo``, ``Playlist``,
``Stats``). What a host cannot say is absent from its models, never made up, and its
:attr:`~bot.station.StationClient.features` say which optional parts it has, so a command whose
data the host lacks is not offered (or says why in one line).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any
from urllib.parse import unquote

from .errors import NotOffered


class Feature(StrEnum):
    """An optional part of a station source (the now-playing ``info`` every host has)."""

    PLAYLIST = "playlist"  # what plays next, as a list (/playlist)
    STATS = "stats"  # listeners by day and country (/stats)
    RECENT = "recent"  # the plays before this one, with their starts (/recent, catch-up)
    ARTWORK = "artwork"  # a picture of the play on air
    REQUESTS = "requests"  # listeners may request songs through the host's API
    SCHEDULE = "schedule"  # the host publishes its schedule of shows
    PUSH = "push"  # the host tells of a change itself (``StationClient.changes``)


__all__ = ["DEFAULT_KIND", "KINDS", "KIND_NAMES", "Feature", "NotOffered", "station_ref"]

KINDS = ("radioboss", "azuracast", "icecast", "shoutcast")
DEFAULT_KIND = "radioboss"
# Each kind's product name, as people know it (never translated).
KIND_NAMES = {
    "radioboss": "RadioBOSS Cloud",
    "azuracast": "AzuraCast",
    "icecast": "Icecast",
    "shoutcast": "Shoutcast",
}

_SHORTCODE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,99}$")
# An Icecast mount: an absolute path of URL path characters, no query, no dot segments.
_MOUNT = re.compile(r"^/[A-Za-z0-9._~!$&'()*+,;=:@%-][A-Za-z0-9._~!$&'()*+,;=:@%/-]{0,199}$")


def station_ref(kind: str, value: Any) -> int | str:
    """The station's name on its host, checked for ``kind``: a number (RadioBOSS, a
    Shoutcast sid), a shortcode or number (AzuraCast) or a mount (Icecast). ValueError says
    what was expected."""
    if isinstance(value, bool):
        raise ValueError("expected a station number")
    if kind in ("radioboss", "shoutcast"):
        number = value if isinstance(value, int) else _digits(value)
        if number is None or not 1 <= number <= 10**12:
            what = "stream id (sid), like 1" if kind == "shoutcast" else "number, like 123"
            raise ValueError(f"expected the station's {what}")
        return number
    if kind == "azuracast":
        if isinstance(value, int):
            if value < 1:
                raise ValueError("expected the station's shortcode or number, like my_radio")
            return value
        text = str(value).strip() if isinstance(value, str) else ""
        if not _SHORTCODE.match(text):
            raise ValueError("expected the station's shortcode or number, like my_radio")
        return int(text) if text.isdigit() else text
    if kind == "icecast":
        text = value.strip() if isinstance(value, str) else ""
        # Judged as the server will read it: "%2e%2e" is a dot segment, "%2f" a slash.
        decoded = unquote(text)
        if (
            not _MOUNT.match(text)
            or "/../" in f"{decoded}/"
            or "/./" in f"{decoded}/"
            or any(c in decoded for c in "?#\\")
            or not decoded.isprintable()
        ):
            raise ValueError('expected the mount, like "/live"')
        return text
    raise ValueError(f"unknown kind {kind!r}: expected one of {', '.join(KINDS)}")


def _digits(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 13:
        return int(value.strip())
    return None
