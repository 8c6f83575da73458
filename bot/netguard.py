"""SSRF guard for station URLs that guild admins type in.

A URL must be http(s) (https only by default), carry no credentials, name a host on the owner's
allow-list (default ``*.radioboss.fm``), and every address it resolves to, at connect time and
after every redirect, must be a public unicast address. The development override
(``allow_private``) exists for the simulator and the demo and is off unless the config says so.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import socket
from dataclasses import dataclass

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from .errors import OnAirError


def policy_for(
    allowed_hosts: tuple[str, ...], *, allow_http: bool, allow_private: bool
) -> HostPolicy:
    return HostPolicy(allowed_hosts, https_only=not allow_http, allow_private=allow_private)


class UrlRefused(OnAirError):
    """The URL or an address it leads to is not allowed."""


@dataclass(frozen=True, slots=True)
class HostPolicy:
    allowed_hosts: tuple[str, ...] = ("*.radioboss.fm",)
    https_only: bool = True
    allow_private: bool = False  # development override: loopback/private addresses allowed


def address_refused(address: str) -> str | None:
    """Why an IP address may not be contacted, or None when it is a public unicast address."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return "it is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    checks = (
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_unspecified, "an unspecified address"),
        (ip.is_reserved, "a reserved address"),
        (ip.is_private, "a private address"),
        (not ip.is_global, "not a public address"),
    )
    for refused, why in checks:
        if refused:
            return why
    return None


def check_url(raw: str, policy: HostPolicy) -> str:
    """The normalised base URL, or :class:`UrlRefused` saying what is wrong with it."""
    try:
        url = URL(raw.strip())
    except (ValueError, TypeError):
        raise UrlRefused(
            "That is not a URL. Use the server address, like https://c5.radioboss.fm"
        ) from None
    if url.query_string or url.fragment:
        raise UrlRefused("The station URL must not contain a query (?...) or fragment (#...).")
    check_target(url, policy)
    port = f":{url.explicit_port}" if url.explicit_port else ""
    path = url.path.rstrip("/")
    return f"{url.scheme.lower()}://{url.raw_host}{port}{path}"


def check_target(url: URL, policy: HostPolicy) -> None:
    """Scheme, credentials, IP literal and allow-list checks (for base URLs and redirects)."""
    scheme = (url.scheme or "").lower()
    if scheme not in ("http", "https") or not url.host:
        raise UrlRefused("The station URL must start with https:// and name a server.")
    if policy.https_only and scheme != "https" and not policy.allow_private:
        raise UrlRefused("The station URL must use https://.")
    if url.user is not None or url.password is not None or "@" in (url.raw_authority or ""):
        raise UrlRefused("The station URL must not contain a user name or password.")
    host = url.host.rstrip(".").lower()
    literal = _is_ip_literal(host)
    if literal and not policy.allow_private:
        why = address_refused(host)
        if why:
            raise UrlRefused(f"OnAir does not contact {host}: it is {why}.")
    if not policy.allow_private and not any(
        fnmatch.fnmatchcase(host, pattern.lower()) for pattern in policy.allowed_hosts
    ):
        allowed = ", ".join(policy.allowed_hosts)
        raise UrlRefused(f"OnAir only contacts station servers on {allowed}; {host} is not one.")


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
            raise OSError(f"{host} resolves only to addresses OnAir does not contact")
        return allowed

    async def close(self) -> None:
        await self.inner.close()
