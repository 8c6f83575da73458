"""Opening a station's stream through OnAir's one shared, guarded aiohttp session.

FFmpeg never connects anywhere: OnAir opens the stream and pipes the bytes into FFmpeg's stdin,
so the SSRF guard (:class:`bot.guard.netguard.GuardedResolver`, checked at connect time for every
host name) applies to streams as to every other request, and the URL (it may carry a listener
token) is in no process list. Redirects are followed here, one hop at a time, at most
``MAX_REDIRECTS`` within one deadline, and every URL (the first and each hop) passes the
caller's :data:`StreamGuard` before anything connects to it: the station URL policy (allowed
hosts and ports, https, no credentials, IP literals) applies to each hop exactly as to the first
URL, so a link cannot bounce OnAir to a host or port it would refuse as a link (the owner's
trusted config hosts, which the resolver lets reach internal addresses, included). Then the
session's resolver and :func:`bot.guard.netguard.literal_guard` hook refuse internal addresses at
connect time, for names and literals alike.

A 2xx answer must carry audio (:func:`content_refused`): a listen link that answers with a web
player page or JSON is refused with a clear message instead of being fed to FFmpeg.

SHOUTcast v1 servers answer ``ICY 200 OK`` instead of an HTTP status line. aiohttp refuses that
with both of its parsers (llhttp: "Expected HTTP/, RTSP/ or ICE/"; the pure-Python one: "Bad
status line"), so such a stream is unreachable; SHOUTcast v2 and Icecast speak HTTP and play.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp
from yarl import URL

from ..errors import OnAirError, Reason
from ..station.errors import AddressRefused
from ..util.i18n import N_

MAX_REDIRECTS = 5
# Bounded response headers: a stream's status line and headers are small.
MAX_LINE_SIZE = 4096
MAX_FIELD_SIZE = 4096
MAX_HEADERS = 64
HEADERS_DEADLINE = 20.0  # seconds from the first request to the last hop's headers
REQUEST_HEADERS = {"Icy-MetaData": "0"}  # the audio only, no in-band title blocks
MAX_STREAM_URL = 2048  # characters; a listen link is far shorter
PROBE_BYTES = 4096
# Media types a stream may carry: Icecast and SHOUTcast send audio/mpeg, audio/aacp, audio/ogg or
# application/ogg; some servers send application/octet-stream or no type at all (FFmpeg probes
# the bytes). Playlists are audio/* types but name other URLs, which FFmpeg must not open.
AUDIO_TYPES = frozenset({"application/ogg", "application/octet-stream", ""})
PLAYLIST_TYPES = frozenset(
    {
        "audio/x-mpegurl",
        "audio/mpegurl",
        "application/x-mpegurl",
        "application/vnd.apple.mpegurl",
        "audio/x-scpls",
        "application/pls+xml",
    }
)
WEB_TYPES = ("text/", "application/json", "application/xhtml", "application/xml")
CONNECT_SECONDS = 5.0


# Raises an OnAirError (bot.guard.netguard.UrlRefused) for a URL the station's policy refuses;
# called on the first URL and on every redirect hop before it is contacted (bot.voice.streams
# builds it).
StreamGuard = Callable[[str], None]


class UnsafeStreamUrl(ValueError):
    """A stream URL OnAir does not open (not http(s), too long, control characters). ``text``
    is the English msgid and ``values`` its placeholders, so an admin's reply can say it in
    their language; ``str()`` stays the English (logs)."""

    def __init__(self, text: str, **values: object) -> None:
        super().__init__(text.format(**values) if values else text)
        self.text = text
        self.values = values


def check_stream_url(stream_url: str) -> str:
    """The URL if OnAir may open it as a stream: http(s), a host, bounded, no whitespace or
    control characters (station text is untrusted)."""
    if not isinstance(stream_url, str) or not stream_url:
        raise UnsafeStreamUrl(N_("no stream URL"))
    if len(stream_url) > MAX_STREAM_URL:
        raise UnsafeStreamUrl(
            N_("the stream URL is longer than {most} characters"), most=MAX_STREAM_URL
        )
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 for ch in stream_url):
        raise UnsafeStreamUrl(N_("the stream URL contains spaces or control characters"))
    try:
        url = URL(stream_url)
    except (ValueError, TypeError):
        raise UnsafeStreamUrl(N_("the stream URL is not a URL")) from None
    if url.scheme.lower() not in ("http", "https") or not url.host:
        raise UnsafeStreamUrl(N_("the stream URL must be an http:// or https:// address"))
    return stream_url


def elided(stream_url: str) -> str:
    """``scheme://host[:port]/…`` for logs: paths and queries may carry listener tokens."""
    try:
        url = URL(stream_url)
        host = url.host or "?"
    except (ValueError, TypeError):
        return "<stream>"
    port = f":{url.explicit_port}" if url.explicit_port else ""
    return f"{url.scheme}://{host}{port}/…"


class StreamUnreachable(Exception):
    """The station's stream cannot be played. ``message`` is polite and names the host only
    (never a path or query: they may carry listener tokens); ``reason`` is the short form for
    the restart log line."""

    def __init__(self, message: str, reason: str = "", **values: object) -> None:
        said = message.format(**values) if values else message
        super().__init__(said)
        self.message = said
        self.text = message  # the msgid, with ``values``: said in a reader's language
        self.values = values
        self.reason = reason or said


def host_of(url: str) -> str:
    """``scheme://host[:port]`` of a URL, for messages and logs."""
    return elided(url).removesuffix("/…")


def checked_url(stream_url: str) -> str:
    """The URL if it may be opened at all (http(s), bounded, no control characters)."""
    try:
        return check_stream_url(stream_url)
    except UnsafeStreamUrl as error:
        raise StreamUnreachable(
            N_("That station's stream address cannot be played: {why}."),
            str(error),
            why=Reason(error.text, **error.values),
        ) from None


async def open_stream(
    session: aiohttp.ClientSession,
    url: str,
    *,
    client_timeout: aiohttp.ClientTimeout,
    deadline: float = HEADERS_DEADLINE,
    guard: StreamGuard | None = None,
) -> aiohttp.ClientResponse:
    """GET the stream, following redirects by hand (each hop checked), and return the open
    response with a 2xx status (the caller closes it); :class:`StreamUnreachable` otherwise.
    ``deadline`` bounds the whole chain up to the last hop's headers (``client_timeout`` has no
    total: the body is a live stream); ``guard`` checks every URL before it is contacted."""
    current = checked_url(url)
    host = host_of(current)
    try:
        async with asyncio.timeout(deadline):
            return await _follow(session, current, host, client_timeout, guard)
    except TimeoutError:
        raise StreamUnreachable(
            N_("The station's stream at {host} did not answer in time."),
            "no answer in time",
            host=host,
        ) from None


async def _follow(
    session: aiohttp.ClientSession,
    current: str,
    host: str,
    client_timeout: aiohttp.ClientTimeout,
    guard: StreamGuard | None,
) -> aiohttp.ClientResponse:
    """``current`` has passed :func:`checked_url`; every hop after it is checked here, and
    each URL passes ``guard`` before it is contacted."""
    for hop in range(MAX_REDIRECTS + 1):
        if guard is not None:
            try:
                guard(current)
            except OnAirError as error:
                raise _guard_refused(host, error, redirected=hop > 0) from None
        target = URL(current)
        try:
            response = await session.get(
                target,
                timeout=client_timeout,
                headers=REQUEST_HEADERS,
                allow_redirects=False,
                max_line_size=MAX_LINE_SIZE,
                max_field_size=MAX_FIELD_SIZE,
                max_headers=MAX_HEADERS,
            )
        except TimeoutError:
            raise
        except (aiohttp.ClientError, OSError, OnAirError, ValueError, RuntimeError) as error:
            # RuntimeError: the session is closed (shutting down)
            raise _unreachable(host, error) from None
        if response.status in (301, 302, 303, 307, 308):
            location = response.headers.get("Location", "")
            response.close()
            try:
                current = checked_url(str(target.join(URL(location))))
            except (ValueError, TypeError, StreamUnreachable):
                raise StreamUnreachable(
                    N_(
                        "The station's stream at {host} redirected to an address that cannot "
                        "be played."
                    ),
                    "redirected to an unplayable address",
                    host=host,
                ) from None
            continue
        if response.status >= 300:
            response.close()
            raise StreamUnreachable(
                N_("The station's stream at {host} answered HTTP {status}."),
                f"the stream answered HTTP {response.status}",
                host=host,
                status=response.status,
            )
        refused = content_refused(response.headers.get("Content-Type", ""), host)
        if refused is not None:
            response.close()
            raise refused
        return response
    raise StreamUnreachable(
        N_("The station's stream at {host} redirected too many times."),
        "too many redirects",
        host=host,
    )


def content_refused(content_type: str, host: str) -> StreamUnreachable | None:
    """Why an answer of this ``Content-Type`` is not a stream FFmpeg should get (a web player
    page, JSON, a playlist, an image...), or None for audio. The type is the server's text: only
    a bounded, plain media type goes into the log reason, never into the message."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media in AUDIO_TYPES or (media.startswith("audio/") and media not in PLAYLIST_TYPES):
        return None
    shown = media if _MEDIA_TYPE.fullmatch(media) else "an unusual type"
    if media in PLAYLIST_TYPES:
        return StreamUnreachable(
            N_("The station's stream at {host} is a playlist, not an audio stream."),
            f"a playlist ({shown}), not an audio stream",
            host=host,
        )
    if media.startswith(WEB_TYPES) or media.endswith(("+json", "+xml")):
        return StreamUnreachable(
            N_("The station's stream at {host} is a web page, not an audio stream."),
            f"a web page ({shown}), not an audio stream",
            host=host,
        )
    return StreamUnreachable(
        N_("The station's stream at {host} does not send audio."),
        f"not audio ({shown})",
        host=host,
    )


_MEDIA_TYPE = re.compile(r"[a-z0-9][a-z0-9.+-]{0,40}/[a-z0-9][a-z0-9.+-]{0,60}")


def _guard_refused(host: str, error: OnAirError, *, redirected: bool) -> StreamUnreachable:
    """The guard refused a URL: polite, the first URL's host only (the refusal's own text,
    which names the refused host or port but no path, goes to the log reason)."""
    if redirected:
        return StreamUnreachable(
            N_("The station's stream at {host} redirected to an address OnAir does not contact."),
            f"a redirect refused: {error.message}",
            host=host,
        )
    return StreamUnreachable(
        N_("That station's stream is on an address OnAir does not contact."),
        f"refused: {error.message}",
    )


def _unreachable(host: str, error: BaseException) -> StreamUnreachable:
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, AddressRefused):
            return StreamUnreachable(
                N_("That station's stream is on an address OnAir does not contact."),
                "refused: the stream's host resolves only to addresses OnAir does not contact",
            )
        cause = cause.__cause__ or cause.__context__
    if isinstance(error, aiohttp.ClientResponseError):  # e.g. a SHOUTcast v1 "ICY 200 OK"
        return StreamUnreachable(
            N_("The station's stream at {host} does not speak HTTP."),
            "not an HTTP answer",
            host=host,
        )
    return StreamUnreachable(
        N_("The station's stream at {host} could not be reached."),
        f"could not connect ({type(error).__name__})",
        host=host,
    )


def stream_timeout(read: float) -> aiohttp.ClientTimeout:
    """A live stream's timeouts: no total (the shared session's default would cut it), a
    bounded connection, and a bounded silence between two reads (the decoder's watchdog)."""
    return aiohttp.ClientTimeout(
        total=None,
        connect=CONNECT_SECONDS * 2,  # DNS, pool and TLS included
        sock_connect=CONNECT_SECONDS,
        sock_read=read,
    )


@dataclass(eq=False, slots=True)
class OpenedStream:
    """A stream the probe opened and checked (guard, redirects, status, some audio read),
    handed to the station's decoder as its first connection, so the first listener opens one
    connection, not two. Whoever holds it closes it (closing twice is harmless)."""

    url: str  # where its redirects ended: what the decoder plays and reopens on a restart
    response: aiohttp.ClientResponse
    head: bytes  # what the probe read; the decoder gives it to FFmpeg first
    handed_over: bool = False

    @property
    def closed(self) -> bool:
        return self.response.closed

    def hand_over(self) -> OpenedStream:
        """The same stream for its new owner (the decoder); closing this one no longer closes
        it, so the previous owner's cleanup cannot cut the decoder's connection."""
        self.handed_over = True
        return OpenedStream(self.url, self.response, self.head)

    def close(self) -> None:
        if not self.handed_over:
            self.response.close()


async def open_probed(
    session: aiohttp.ClientSession,
    url: str,
    *,
    timeout: float = 5.0,  # noqa: ASYNC109 - bounds the probe, not the stream it keeps open
    read_timeout: float = 5.0,
    guard: StreamGuard | None = None,
) -> OpenedStream:
    """Open the stream through OnAir's shared (guarded) session (each redirect checked, every
    URL through ``guard``) and read a few KB; the open stream (the caller owns it) or
    :class:`StreamUnreachable` if it does not play. ``timeout`` bounds the probe, redirects
    included; ``read_timeout`` the silences of the stream it keeps open (the decoder's
    watchdog)."""
    host = host_of(checked_url(url))
    response: aiohttp.ClientResponse | None = None
    try:
        async with asyncio.timeout(timeout):
            response = await open_stream(
                session, url, client_timeout=stream_timeout(read_timeout), guard=guard
            )
            head = await response.content.read(PROBE_BYTES)
        if not head:
            raise StreamUnreachable(N_("The station's stream at {host} sent no audio."), host=host)
        return OpenedStream(checked_url(str(response.url)), response, head)
    except BaseException as error:
        if response is not None:
            response.close()  # cancelled, timed out or refused: nothing stays open
        if isinstance(error, TimeoutError):
            raise StreamUnreachable(
                N_("The station's stream at {host} did not answer within {seconds} s."),
                "no answer",
                host=host,
                seconds=f"{timeout:g}",
            ) from None
        if isinstance(error, aiohttp.ClientError | OSError):
            raise StreamUnreachable(
                N_("The station's stream at {host} could not be reached."), host=host
            ) from None
        raise


async def probe_stream(
    session: aiohttp.ClientSession,
    url: str,
    *,
    timeout: float = 5.0,  # noqa: ASYNC109 - the contract's name; it bounds the whole request
    guard: StreamGuard | None = None,
) -> str:
    """Check that the stream plays (:func:`open_probed`, then closed) and return the URL it
    ends at after redirects; :class:`StreamUnreachable` if it does not play."""
    opened = await open_probed(session, url, timeout=timeout, read_timeout=timeout, guard=guard)
    opened.close()
    return opened.url
