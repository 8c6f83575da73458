"""The one test of every URL OnAir sends to Discord: a valid absolute http(s) URI, or nothing.

Discord's API description marks every URL a bot sends ``format: uri`` (RFC 3986) with a length
limit for its place (a link button 512, an embed's URLs 2048), and refuses the WHOLE message for
one URL it finds malformed: a station's mount URL with a ``>`` in it turned ``/listen`` into "The
application did not respond". Station links and admin input are untrusted, so each goes through
:func:`safe_url` on its way out, and what does not pass is left out (the button, the thumbnail,
the link), never sent broken.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import quote

BUTTON_URL = 512  # a link button's url
EMBED_URL = 2048  # an embed's url, author url and icon, footer icon, image, thumbnail
TEXT_URL = 512  # a link written in message text ([label](url), <url>): short enough to read
EVENT_LOCATION = 100  # a scheduled event's entity_metadata.location (plain text, 100 at most)

_UNRESERVED = r"A-Za-z0-9\-._~"
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}!$&'()*+,;=:@]|{_PCT})"
# http(s)://host[:port][/path][?query][#fragment] by RFC 3986's grammar, stricter where a station
# link has no business: the host is a plain name, an IPv4 address or an [IPv6] literal (no user
# part: "https://x.example@everyone" would show a mention-like text; no percent-encoded or
# sub-delimiter host), the port is 1-5 digits.
_HTTP_URI = re.compile(
    rf"(?P<scheme>[Hh][Tt][Tt][Pp][Ss]?)://"
    rf"(?:(?P<name>[{_UNRESERVED}]+)|\[(?P<ipv6>[0-9A-Fa-f:.]+)\])"
    rf"(?::(?P<port>[0-9]{{1,5}}))?"
    rf"(?:/{_PCHAR}*)*(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
)
_AUTHORITY_END = re.compile(r"[/?#]")


def safe_url(text: str | None, limit: int, *, https_only: bool = False) -> str | None:
    """``text`` as an absolute http(s) (``https_only``: https) URI of at most ``limit``
    characters that Discord accepts, or None.

    Surrounding whitespace is dropped, and characters outside ASCII in the path, query or
    fragment are percent-encoded as UTF-8 (RFC 3987's mapping of an IRI to its URI: the same
    address). Anything else RFC 3986 does not allow (a space, ``<`` ``>`` ``"`` ``[`` ``]``, a
    stray ``%``), a host outside ASCII, a user part or a port above 65535 leaves the URL out.
    Pure, and linear in the input (one longer than twice ``limit`` is refused unread)."""
    if not text or len(text) > 2 * limit:
        return None
    stripped = text.strip(" \t\r\n")
    url = stripped if stripped.isascii() else _iri_to_uri(stripped)
    if url is None or len(url) > limit:
        return None
    match = _HTTP_URI.fullmatch(url)
    if match is None or (https_only and len(match["scheme"]) != 5):
        return None
    if match["port"] is not None and int(match["port"]) > 65535:
        return None
    if match["ipv6"] is not None and not _ipv6(match["ipv6"]):
        return None
    return url


def _iri_to_uri(url: str) -> str | None:
    """Percent-encode the non-ASCII characters after the host; None when the scheme or host
    holds any (an internationalised host could pass for another: it is left out), or one is
    invisible or a lone surrogate."""
    head, separator, tail = url.partition("://")
    if not separator or not head.isascii():
        return None
    cut = _AUTHORITY_END.search(tail)
    authority, rest = (tail[: cut.start()], tail[cut.start() :]) if cut else (tail, "")
    if not authority.isascii() or not rest.isprintable():
        return None  # nor a bidi override, zero-width or other invisible character (RFC 3987)
    encoded = "".join(c if c.isascii() else quote(c, safe="") for c in rest)
    return f"{head}://{authority}{encoded}"


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True
