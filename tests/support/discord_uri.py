"""What Discord's ``format: uri`` means, for the fake Discord: an absolute URI by RFC 3986.

discord-openapi.json marks every URL a bot sends (a link button's ``url``, an embed's ``url``,
its author's, footer's, image's and thumbnail's) ``format: uri``: Discord refuses the whole
request when one of them is not a well-formed absolute URI (``URL_TYPE_INVALID_URL``, "Not a
well formed URL."), and when its scheme is not one the field allows (``URL_TYPE_INVALID_SCHEME``).
So no space, no ``<`` ``>`` ``"`` ``{`` ``}`` ``|`` ``\\`` ``^`` `````, no ``[`` ``]`` outside an
IPv6 host, no ``%`` without two hex digits, no character outside ASCII, and an http(s) URL has a
host. Written from the RFC's ABNF (appendix A), independently of the bot's own check.
"""

from __future__ import annotations

import ipaddress
import re

_UNRESERVED = r"A-Za-z0-9\-._~"
_SUB_DELIMS = r"!$&'()*+,;="
_PCT = r"%[0-9A-Fa-f]{2}"
_PCHAR = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:@]|{_PCT})"
_SCHEME = r"(?P<scheme>[A-Za-z][A-Za-z0-9+\-.]*)"
_USERINFO = rf"(?:[{_UNRESERVED}{_SUB_DELIMS}:]|{_PCT})*"
_IP_LITERAL = r"\[(?P<literal>[^\[\]/?#@]*)\]"
_REG_NAME = rf"(?P<name>(?:[{_UNRESERVED}{_SUB_DELIMS}]|{_PCT})*)"
_AUTHORITY = rf"(?:{_USERINFO}@)?(?:{_IP_LITERAL}|{_REG_NAME})(?::[0-9]*)?"
_PATH_ABEMPTY = rf"(?:/{_PCHAR}*)*"
_PATH_NO_AUTHORITY = rf"(?:/?(?:{_PCHAR}+(?:/{_PCHAR}*)*)?)"  # absolute, rootless or empty
_QUERY = rf"(?:{_PCHAR}|[/?])*"
_URI = re.compile(
    rf"{_SCHEME}:(?:(?P<authority>//){_AUTHORITY}{_PATH_ABEMPTY}|{_PATH_NO_AUTHORITY})"
    rf"(?:\?{_QUERY})?(?:#{_QUERY})?"
)
_IP_FUTURE = re.compile(rf"[vV][0-9A-Fa-f]+\.[{_UNRESERVED}{_SUB_DELIMS}:]+")
NEEDS_HOST = frozenset({"http", "https"})


def uri_scheme(value: str) -> str | None:
    """The scheme (lower case) of ``value`` if it is a well-formed absolute URI, else None.
    An http(s) URI needs a host (RFC 9110: "https:///x" and "https://:8443/x" are invalid)."""
    match = _URI.fullmatch(value)
    if match is None:
        return None
    scheme = match["scheme"].lower()
    literal = match["literal"]
    if literal is not None and not _ip_literal(literal):
        return None
    if scheme in NEEDS_HOST and (match["authority"] is None or not (literal or match["name"])):
        return None
    return scheme


def _ip_literal(text: str) -> bool:
    if _IP_FUTURE.fullmatch(text):
        return True
    if "%" in text:  # a zone id is not RFC 3986 (Python's parser would take one)
        return False
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True
