"""Icecast 2's ``/status-json.xsl`` read into OnAir's station model.

The shape (Icecast 2.4.4 and 2.5, ``web/status-json.xsl`` importing ``web/xml2json.xslt``,
xiph/Icecast-Server): ``{"icestats": {"admin", "host", "location", "server_id",
"server_start", "server_start_iso8601", "source": ..., "dummy": null}}``. ``source`` is ONE
object when one mount is up, a LIST when several are, and ABSENT when none is: xml2json turns
repeated XML elements into an array and a single one into an object. Each source has
``listenurl`` (built from the server's configured ``<hostname>``, not the address asked),
``server_name``, ``server_description``, ``server_type``, ``server_url``, ``genre``, ``title``
(``artist`` only when the source sets it apart, as Ogg sources do), ``listeners``,
``listener_peak``, ``bitrate``/``audio_bitrate``/``ice-bitrate``, ``samplerate``, ``channels``,
``stream_start``, ``stream_start_iso8601`` and a trailing ``"dummy": null``.

Known breakage of that stylesheet, repaired here where the repair cannot change a meaning:

- any text that XPath reads as a number is written bare: a title ``1979`` comes as a number,
  ``true`` as a boolean; and in 2.4 a title ``-`` or `` - `` (an empty "artist - title"),
  ``.5``, ``5.`` or ``-01`` comes bare and breaks the JSON (``"title": - ,``; fixed in 2.5 by
  xml2json.xslt's commit 56bbc0d). Such a bare run of digits, dots, signs and spaces that is
  no JSON number becomes the string it was;
- control characters other than tab, newline and return are not escaped (read leniently);
- right after start-up the first member of ``icestats`` may be a hidden one, so its ``{`` is
  never written (``{"icestats":"server_start":...}}``, Icecast-Server issue 38): put back.

Anything else that is not JSON is a ``StationResponseError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from ... import coerce as c
from ...errors import Problem, StationNotFound, StationResponseError
from ...info import Links, StationInfo
from .observed import IcecastInfo

# Longest text kept from any field: a title is a line, never a page.
MAX_TEXT = 500

# A bare value of digits, dots, signs and blanks after a member's colon (see the module doc).
_BARE_NUMBERISH = re.compile(r'(?<!\\)(":)([ \t]*[-+.0-9][-+.0-9 \t]*)(?=[,}\]])')
_JSON_NUMBER = re.compile(r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$")
# ``"icestats":`` followed at once by a member name: its ``{`` is missing.
_OPEN_BRACE_MISSING = re.compile(r'("icestats":)(\s*)(?="(?:[^"\\]|\\.)*"\s*:)')


def decode_status(body: bytes) -> dict[str, Any]:
    """The ``icestats`` object of a status-json answer, repaired where it safely can be.
    Numbers are kept as their text (a title ``1979`` stays ``"1979"``; counts are read with
    the coercions)."""
    if not body.strip():
        raise StationResponseError(Problem.EMPTY)
    text = body.decode("utf-8", errors="replace")
    payload = _loads(text)
    if payload is None:
        payload = _loads(_repaired(text))
    if payload is None:
        raise StationResponseError(Problem.NOT_JSON)
    if not isinstance(payload, dict):
        raise StationResponseError(Problem.NOT_OBJECT)
    icestats = payload.get("icestats")
    if not isinstance(icestats, dict):
        raise StationResponseError(Problem.WRONG_SHAPE, what="icestats")
    return icestats


def _loads(text: str) -> Any:
    try:
        # strict=False: unescaped control characters inside strings are read as they are.
        return json.loads(text, strict=False, parse_int=str, parse_float=str)
    except (ValueError, RecursionError):
        return None


def _repaired(text: str) -> str:
    def quote_bare(match: re.Match[str]) -> str:
        raw = match.group(2)
        if _JSON_NUMBER.match(raw.strip()):
            return match.group(0)
        return match.group(1) + json.dumps(raw.strip(), ensure_ascii=False)

    text = _OPEN_BRACE_MISSING.sub(r"\1\2{", text, count=1)
    return _BARE_NUMBERISH.sub(quote_bare, text)


def sources(icestats: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The mounts up now: ``source`` as one object, a list, or absent (none)."""
    return [s for s in c.as_list(icestats.get("source")) if isinstance(s, Mapping)]


def mount_of(listen_url: str | None) -> str | None:
    """The mount (the path) of a ``listenurl``, undecoded: ``http://h:8000/live`` → ``/live``."""
    if not listen_url or "://" not in listen_url:
        return None
    rest = listen_url.split("://", 1)[1]
    slash = rest.find("/")
    return rest[slash:] if slash >= 0 else None


def pick_source(icestats: Mapping[str, Any], mount: str) -> Mapping[str, Any]:
    """The source whose mount is ``mount``; ``StationNotFound`` when it is not up."""
    wanted = unquote(mount)
    for source in sources(icestats):
        found = mount_of(field_text(source.get("listenurl")))
        if found is not None and (found == mount or unquote(found) == wanted):
            return source
    raise StationNotFound(Problem.UNKNOWN_STATION)


def field_text(value: Any) -> str | None:
    """A member as text: a string, or a number or boolean the stylesheet wrote bare (a title
    ``1979`` or ``true``); bounded; mojibake of UTF-8 read as Latin-1 undone."""
    if isinstance(value, bool):
        value = "true" if value else "false"
    text = c.text(value)
    if text is None:
        return None
    return undo_mojibake(text[:MAX_TEXT])


def undo_mojibake(text: str) -> str:
    """UTF-8 bytes that were read as Latin-1 and written again as UTF-8 (``cafÃ©``): Icecast
    does that to a metadata update sent without ``charset=UTF-8`` to a mount whose charset is
    the default ISO8859-1. Only a text whose Latin-1 bytes are valid UTF-8 with some non-ASCII
    is changed: real Latin-1 text almost never is."""
    if text.isascii():
        return text
    try:
        fixed = text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text
    return fixed


def source_title(source: Mapping[str, Any]) -> str | None:
    """What the mount says is on air: ``artist - title`` when the source sets both apart,
    else ``title`` as it is (often "Artist - Title" already)."""
    title = field_text(source.get("title"))
    artist = field_text(source.get("artist"))
    if artist and title:
        return f"{artist} - {title}"
    return title or artist


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """What one status poll says of the mount (before OnAir adds what it observed)."""

    title: str | None
    info: StationInfo


def parse_source(
    icestats: Mapping[str, Any], mount: str, base_url: str, fetched_at: datetime
) -> SourceInfo:
    """The mount's info. The listen link is ``listenurl`` when it names a public host, else
    the address OnAir reaches the server at plus the mount (``listenurl`` carries the
    configured ``<hostname>``, ``localhost`` by default)."""
    source = pick_source(icestats, mount)
    title = source_title(source)
    listen = field_text(source.get("listenurl"))
    if not _public_host(listen):
        listen = f"{base_url.rstrip('/')}{mount}"
    info = IcecastInfo(
        fetched_at=fetched_at,
        name=field_text(source.get("server_name")),
        description=field_text(source.get("server_description")),
        url=field_text(source.get("server_url")),
        genre=field_text(source.get("genre")),
        now_playing=title,
        listeners=c.integer(source.get("listeners")),
        links=Links(http=listen),
    )
    return SourceInfo(title=title, info=info)


_LOCAL_NAMES = {"localhost", "localhost.localdomain", "127.0.0.1", "::1", "[::1]", "0.0.0.0"}


def _public_host(url: str | None) -> bool:
    if not url or not url.lower().startswith(("http://", "https://")):
        return False
    host = url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[0].lower()
    if host in _LOCAL_NAMES or host.startswith("127.") or "." not in host.strip("[]"):
        return False
    return not host.replace(".", "").isdigit() or not _private_v4(host)


def _private_v4(host: str) -> bool:
    parts = host.split(".")
    if len(parts) != 4:
        return False
    first, second = int(parts[0] or 0), int(parts[1] or 0)
    return (
        first in (10, 127, 0)
        or (first, second) == (192, 168)
        or (first == 172 and 16 <= second <= 31)
    )
