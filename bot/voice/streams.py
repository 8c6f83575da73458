"""Which stream a station plays in voice: its configured ``stream_url``, else the best listen
link of its info (https first, then its mounts), each checked like a station URL (SSRF guard);
the same check guards every redirect hop of the stream (:func:`stream_guard`)."""

from __future__ import annotations

from collections.abc import Callable

from yarl import URL

from ..config import StationConfig
from ..netguard import HostPolicy, UrlRefused, check_target
from ..station import StationInfo
from .stream import MAX_STREAM_URL, StreamGuard


def link_candidates(info: StationInfo | None) -> list[str]:
    """The station's listen links, best first: https on 443, any https, mounts over https,
    then the same over http."""
    if info is None:
        return []
    links = info.links
    secure = [links.port443, links.ssl, *(m.ssl for m in links.mounts)]
    plain = [links.port80, links.http, *(m.http for m in links.mounts)]
    ordered = [u for u in secure if u and u.lower().startswith("https://")]
    ordered += [u for u in secure + plain if u and u.lower().startswith("http://")]
    seen: list[str] = []
    for url in ordered:
        if url not in seen and len(url) <= MAX_STREAM_URL:
            seen.append(url)
    return seen


def check_stream(url: str, policy: HostPolicy, trusted: frozenset[str]) -> str:
    """``url`` when OnAir may open it as a stream, else :class:`UrlRefused`."""
    try:
        parsed = URL(url)
    except (ValueError, TypeError, UnicodeError):
        raise UrlRefused("The station's stream address is not a URL.") from None
    if parsed.user is not None or parsed.password is not None:
        raise UrlRefused("The station's stream address must not carry a user name or password.")
    check_target(parsed, policy, trusted_hosts=trusted)
    return url


def choose_stream(
    station: StationConfig,
    info: StationInfo | None,
    policy: HostPolicy,
    trusted_hosts: frozenset[str],
) -> str | None:
    """The stream to play, or None when the station names none OnAir may open.

    A config station's own ``stream_url`` is the owner's choice and played as written; its
    links are checked with the owner's station hosts trusted (as its API calls are). A guild
    station's ``stream_url`` and links are checked like every URL a guild gives."""
    trusted = trusted_hosts if not station.owner_guild else frozenset()
    if station.stream_url:
        if not station.owner_guild:
            return station.stream_url
        try:
            return check_stream(station.stream_url, policy, trusted)
        except UrlRefused:
            return None
    for url in link_candidates(info):
        try:
            return check_stream(url, policy, trusted)
        except UrlRefused:
            continue
    return None


def stream_guard(policy: Callable[[], HostPolicy], trusted: frozenset[str]) -> StreamGuard:
    """The check every URL of a station's stream passes before OnAir contacts it: the first
    and each redirect hop alike, against the policy of the moment (``policy()``: a tightened
    allow-list applies to decoders already running). ``trusted``: the owner's config hosts for
    a config station, none for a guild's."""

    def guard(url: str) -> None:
        check_stream(url, policy(), trusted)

    return guard
