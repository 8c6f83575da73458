"""Which stream a station plays in voice: its configured ``stream_url``, else the best listen
link of its info (https first, then its mounts), each checked like a station URL (SSRF guard);
the same check guards every redirect hop of the stream (:func:`stream_guard`).
:class:`StationStreams` is the voice service's part of it: the stream each decoder plays, probed
on a join, shared with a decoder that runs, tried and switched when a guild sets another."""

from __future__ import annotations

import logging
from collections.abc import Callable

from yarl import URL

from .. import errors
from ..catalog.registry import StationRegistry
from ..config import Settings, StationConfig
from ..errors import VoiceRefused
from ..guard.netguard import HostPolicy, UrlRefused, check_target, trusted_hosts
from ..station import StationInfo
from ..util.i18n import N_
from .players import AudioHub, Probe, StreamDown, station_name
from .stream import MAX_STREAM_URL, OpenedStream, StreamGuard, host_of

_LOGGER = logging.getLogger("onair.voice")


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
        raise UrlRefused(N_("The station's stream address is not a URL.")) from None
    if parsed.user is not None or parsed.password is not None:
        raise UrlRefused(N_("The station's stream address must not carry a user name or password."))
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


class StationStreams:
    """Which stream each station's decoder plays: chosen and probed on a join (or the one a
    running decoder plays, shared), tried when a guild sets one, switched when the setting
    changes; every connection and redirect hop passes the station's guard."""

    def __init__(
        self,
        settings: Settings,
        registry: StationRegistry,
        *,
        hub: AudioHub | None,
        probe: Probe | None,
    ) -> None:
        self.registry = registry
        self.hub = hub
        self.probe = probe
        self._streams: dict[str, str] = {}  # station → the stream its decoder was started on
        # The owner's config hosts, stream_url hosts included (as the session's resolver trusts
        # them): a config station's stream and its redirects to these are played as configured.
        self._owner_hosts = registry.trusted_hosts | trusted_hosts(
            [s.stream_url for s in settings.stations if s.stream_url]
        )

    def started(self, slug: str, stream_url: str) -> None:
        """A decoder of ``slug`` was started on ``stream_url``."""
        self._streams[slug] = stream_url

    async def open_for(self, station: StationConfig) -> tuple[str, OpenedStream | None]:
        """The stream to play, and the probe's open connection to it (the caller owns it:
        the service's connect hands it to the decoder or closes it). A station already
        playing in another guild shares its decoder: no station request and no probe, so a
        second guild opens no new connection."""
        running = self._running(station.slug)
        if running is not None:
            return running, None
        assert self.probe is not None
        info = None
        if not station.stream_url:  # a set stream_url (the owner's, or a guild's) is played
            info = (await self.registry.snapshot(station)).info
        url = choose_stream(station, info, self.registry.policy, self.registry.trusted_hosts)
        if url is None:
            raise VoiceRefused(errors.NO_STREAM, station=station_name(station))
        try:
            # Every hop passes the station's guard before it is contacted, so where the
            # redirects ended (what the decoder reopens) passed it too.
            opened = await self.probe(url, self.guard_for(station))
        except StreamDown:
            raise VoiceRefused(errors.STREAM_UNREACHABLE, station=station_name(station)) from None
        return opened.url, opened

    async def try_stream(self, station: StationConfig, stream_url: str) -> str:
        """Open ``stream_url`` once as ``station``'s stream (its guard on every hop, the status,
        audio arriving) and close it again; where its redirects end. VoiceRefused saying why
        (the host only, never a path or token) when it does not play."""
        if self.probe is None:
            raise VoiceRefused(errors.VOICE_UNAVAILABLE)
        try:
            opened = await self.probe(stream_url, self.guard_for(station))
        except StreamDown as down:
            said = down.said or errors.Note(str(down) or N_("it does not play."))
            raise VoiceRefused(errors.STREAM_URL_UNPLAYABLE, reason=said) from None
        opened.close()
        return opened.url

    async def changed(self, station: StationConfig, played: str | None = None) -> bool:
        """``station``'s stream setting changed: its decoder, if it runs, switches to the new
        stream now (its players hear a moment of silence, not the old stream for hours); True
        when one switched. ``played``: where the new URL's redirects ended (just probed);
        None: the station's stream is chosen again (its best listen link after a clear)."""
        slug = station.slug
        if self.hub is None or not self.hub.is_running(slug):
            return False
        url = played
        if url is None:
            try:
                info = None if station.stream_url else (await self.registry.snapshot(station)).info
            except Exception as error:  # the station is down: its next start chooses again
                _LOGGER.info("stream of %s not switched now: %s", slug, type(error).__name__)
                return False
            url = choose_stream(station, info, self.registry.policy, self.registry.trusted_hosts)
        if url is None or not self.hub.retarget(slug, url, guard=self.guard_for(station)):
            return False
        self._streams[slug] = url
        _LOGGER.info("voice %s: the decoder switched to %s", slug, host_of(url))
        return True

    def guard_for(self, station: StationConfig) -> StreamGuard:
        """The URL policy for every connection and redirect hop of the station's stream: a
        guild's station is checked like every URL a guild gives; a config station's own hosts
        are the owner's (trusted as configured), its redirects elsewhere are checked."""
        trusted = frozenset() if station.owner_guild else self._owner_hosts
        return stream_guard(lambda: self.registry.policy, trusted)

    def _running(self, slug: str) -> str | None:
        """The stream of a decoder that runs (for another guild, or lingering after the last
        one left): joining it opens nothing new."""
        if self.hub is None or not self.hub.is_running(slug):
            return None
        return self._streams.get(slug)
