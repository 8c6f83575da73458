"""SSRF guard for station URLs that guild admins type in, and for every redirect.

A URL must be http(s) (https only by default), carry no credentials, use an allowed port (443,
80 when http is allowed, or the owner's list), name a host on the owner's allow-list (default
``*.radioboss.fm``), and every address it leads to must be a public unicast address: IP literals
are checked where they appear (aiohttp does not resolve them, so the resolver never sees them),
names are checked by :class:`GuardedResolver` at connect time. The owner's own config stations'
hosts are trusted as configured; their redirects elsewhere are checked like any other URL. The
development override (``allow_private``) exists for the simulator and the demo.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from dataclasses import dataclass

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from ..errors import OnAirError, Said
from ..station.errors import AddressRefused
from ..util.i18n import N_, Lang


def policy_for(
    allowed_hosts: tuple[str, ...],
    *,
    allow_http: bool,
    allow_private: bool,
    allowed_ports: tuple[int, ...] = (),
) -> HostPolicy:
    return HostPolicy(
        allowed_hosts,
        https_only=not allow_http,
        allow_private=allow_private,
        allowed_ports=allowed_ports,
    )


class UrlRefused(OnAirError):
    """The URL or an address it leads to is not allowed."""


@dataclass(frozen=True, slots=True)
class HostPolicy:
    allowed_hosts: tuple[str, ...] = ("*.radioboss.fm",)
    https_only: bool = True
    allow_private: bool = False  # development override: loopback/private addresses allowed
    allowed_ports: tuple[int, ...] = ()  # () = 443, and 80 when http is allowed

    @property
    def ports(self) -> tuple[int, ...]:
        if self.allowed_ports:
            return self.allowed_ports
        return (443,) if self.https_only else (443, 80)


_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_SITE_LOCAL = ipaddress.IPv6Network("fec0::/10")
_COMPATIBLE = ipaddress.IPv6Network("::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, 6to4, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, N_("an IPv4-mapped address")
    if ip.sixtofour is not None:
        return ip.sixtofour, N_("a 6to4 address")
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), N_("a NAT64 address")
    if ip in _COMPATIBLE and int(ip) > 1:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), N_("an IPv4-compatible address")
    return None


_INSIDE = N_("{why} inside {kind}")


class AddressReason(Said):
    """Why an IP address is refused (:func:`address_refused`'s English), said in the reader's
    language: "a loopback address inside an IPv4-mapped address" is said part by part."""

    def __init__(self, why: str) -> None:
        self.why = why

    def said_in(self, lang: Lang) -> str:
        inner, sep, kind = self.why.rpartition(" inside ")
        if sep:
            return lang.t(_INSIDE, why=AddressReason(inner).said_in(lang), kind=lang.t(kind))
        return lang.t(self.why)

    def __str__(self) -> str:
        return self.why


def address_refused(address: str) -> str | None:
    """Why an IP address may not be contacted, or None when it is a public unicast address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return N_("it is not an IP address")
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.teredo is not None:
            return N_("a Teredo tunnel address")
        if ip in _SITE_LOCAL:
            return N_("a site-local address")
        if ip in _NAT64_LOCAL:
            return N_("a local NAT64 address")
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            inner, kind = embedded
            why = address_refused(str(inner))
            if why is not None:
                return _INSIDE.format(why=why, kind=kind)
            if kind == N_("an IPv4-mapped address"):
                return None  # the same as contacting the public IPv4 address itself
    checks = (
        (ip.is_loopback, N_("a loopback address")),
        (ip.is_link_local, N_("a link-local address")),
        (ip.is_multicast, N_("a multicast address")),
        (ip.is_unspecified, N_("an unspecified address")),
        (ip.is_reserved, N_("a reserved address")),
        (ip.is_private, N_("a private address")),
        (not ip.is_global, N_("not a public address")),
    )
    for refused, why in checks:
        if refused:
            return why
    return None


_BAD_NAME = N_("That server name is not a valid host name; check the station URL.")


def check_url(raw: str, policy: HostPolicy) -> str:
    """The normalised base URL (``scheme://host[:port]``), or :class:`UrlRefused` saying what
    is wrong with it."""
    try:
        url = URL(raw.strip())
        host = url.raw_host
    except (ValueError, TypeError, UnicodeError):
        raise UrlRefused(
            N_("That is not a URL. Use the server address, like https://c5.radioboss.fm")
        ) from None
    if url.query_string or url.fragment or "?" in raw or "#" in raw:
        raise UrlRefused(N_("The station URL must not contain a query (?...) or fragment (#...)."))
    if url.raw_path not in ("", "/"):
        raise UrlRefused(
            N_(
                "The station URL is the server address only, like https://c5.radioboss.fm "
                "(no path after the server name)."
            )
        )
    check_target(url, policy)
    port = f":{url.explicit_port}" if url.explicit_port else ""
    if host and ":" in host:
        host = f"[{host}]"
    return f"{url.scheme.lower()}://{host}{port}"


def check_target(
    url: URL, policy: HostPolicy, *, trusted_hosts: frozenset[str] = frozenset()
) -> None:
    """Scheme, credentials, port, IP literal and allow-list checks for a URL OnAir is about to
    contact (base URLs, each poll of a stored station, every redirect). ``trusted_hosts`` are the
    owner's own config stations' hosts: contacted as configured."""
    scheme = (url.scheme or "").lower()
    try:
        raw_host = url.host
    except (ValueError, UnicodeError):
        raise UrlRefused(_BAD_NAME) from None
    if scheme not in ("http", "https") or not raw_host:
        raise UrlRefused(N_("The station URL must start with https:// and name a server."))
    host = raw_host.rstrip(".").lower()
    if host in trusted_hosts:
        return
    try:
        host.encode("idna")  # the name aiohttp would look up: malformed punycode is refused
    except UnicodeError:
        raise UrlRefused(_BAD_NAME) from None
    if policy.https_only and scheme != "https" and not policy.allow_private:
        raise UrlRefused(N_("The station URL must use https://."))
    if url.user is not None or url.password is not None or "@" in (url.raw_authority or ""):
        raise UrlRefused(N_("The station URL must not contain a user name or password."))
    if policy.allow_private:
        return
    if _is_ip_literal(host):
        why = address_refused(host)
        if why:
            said = AddressReason(why)
            raise UrlRefused(N_("OnAir does not contact {host}: it is {why}."), host=host, why=said)
    port = url.port
    if port not in policy.ports:
        allowed = ", ".join(map(str, policy.ports))
        raise UrlRefused(
            N_("OnAir only contacts station servers on port {allowed}, not {port}."),
            allowed=allowed,
            port=port,
        )
    if not any(fnmatch.fnmatchcase(host, pattern.lower()) for pattern in policy.allowed_hosts):
        allowed = ", ".join(policy.allowed_hosts)
        raise UrlRefused(
            N_("OnAir only contacts station servers on {allowed}; {host} is not one."),
            allowed=allowed,
            host=host,
        )


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


class GuardedResolver(AbstractResolver):
    """Resolves like aiohttp, then drops every address the policy refuses (checked at connect
    time, so DNS rebinding after validation cannot reach an internal address)."""

    def __init__(
        self,
        policy: HostPolicy,
        inner: AbstractResolver | None = None,
        *,
        trusted_hosts: frozenset[str] = frozenset(),
    ) -> None:
        self.policy = policy
        self.inner = inner or ThreadedResolver()
        # Hosts of the owner's own config stations: trusted as configured (may be internal).
        self.trusted_hosts = trusted_hosts

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self.inner.resolve(host, port, family)
        if self.policy.allow_private or host.lower() in self.trusted_hosts:
            return results
        allowed = [r for r in results if address_refused(str(r["host"])) is None]
        if not allowed:
            raise AddressRefused(f"{host} resolves only to addresses OnAir does not contact")
        return allowed

    def literal_refused(self, host: str) -> str | None:
        """Why this policy refuses an IP-literal host (aiohttp never resolves literals, so
        :func:`literal_guard` asks here before connecting), or None."""
        host = host.rstrip(".").lower()
        if self.policy.allow_private or host in self.trusted_hosts or not _is_ip_literal(host):
            return None
        return address_refused(host)

    async def close(self) -> None:
        await self.inner.close()


def literal_guard(resolver: GuardedResolver) -> aiohttp.TraceConfig:
    """A session hook refusing, before it connects, every request to an IP-literal host the
    resolver would refuse as a resolved address: the session then guards literals and names
    alike for every caller (each redirect followed by hand is a request of its own)."""

    async def on_request_start(
        session: aiohttp.ClientSession,
        context: object,
        params: aiohttp.TraceRequestStartParams,
    ) -> None:
        host = params.url.host or ""
        why = resolver.literal_refused(host)
        if why is not None:
            raise AddressRefused(f"OnAir does not contact {host}: it is {why}")

    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(on_request_start)
    return trace


def trusted_hosts(base_urls: list[str]) -> frozenset[str]:
    """The hosts of the owner's config stations (lower-case, as the resolver and guard see them)."""
    hosts: set[str] = set()
    for base_url in base_urls:
        try:
            host = URL(base_url).host
        except (ValueError, UnicodeError):
            continue
        if host:
            hosts.add(host.rstrip(".").lower())
    return frozenset(hosts)
