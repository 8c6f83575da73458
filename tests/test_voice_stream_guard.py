"""Probing a station's stream before playing it, and the SSRF guard on the way (issue 12): a
private address, a redirect to one, every redirect hop, answers that are not audio; the
listener's token never shows in an error. The stream goes through OnAir's GuardedResolver.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest
from aiohttp import web

from bot.guard.netguard import HostPolicy
from bot.voice import (
    Broadcasts,
    StationBroadcast,
    StreamUnreachable,
    probe_stream,
)
from bot.voice.stream import MAX_REDIRECTS, open_probed
from bot.voice.streams import stream_guard

from .support.fakeicecast import FakeIcecast
from .support.voice_engine import (  # noqa: F401
    TOKEN,
    broadcasts_fixture,
    ffmpeg_children,
    guarded_session,
    icecast_fixture,
    mp3_fixture,
    production_session_fixture,
    restart_lines_fixture,
    session_fixture,
)
from .support.waiting import wait_for


async def test_probe_stream_returns_the_url_and_explains_failures(
    icecast: FakeIcecast, session: aiohttp.ClientSession
) -> None:
    url = f"{icecast.url}?token={TOKEN}"
    assert await probe_stream(session, url) == url
    icecast.refuse_new = True
    with pytest.raises(StreamUnreachable) as refused:
        await probe_stream(session, url)
    assert "503" in refused.value.message
    icecast.refuse_new = False
    icecast.hang_new = True
    with pytest.raises(StreamUnreachable) as hung:
        await probe_stream(session, url, timeout=0.3)
    assert "did not answer" in hung.value.message
    with pytest.raises(StreamUnreachable):
        await probe_stream(session, "file:///etc/passwd")
    for error in (refused.value, hung.value):
        assert TOKEN not in error.message
        assert "stream.mp3" not in error.message
    assert icecast.connections == 1


async def test_the_probes_connection_is_the_decoders_first(
    icecast: FakeIcecast, ffmpeg: str, session: aiohttp.ClientSession
) -> None:
    """The probe's open stream starts the decoder (one connection, every byte it read given
    to FFmpeg); a restart opens a fresh one; a stream handed to a running decoder, to a task
    cancelled before it ran or with a URL that cannot play is closed, never left open."""
    registry = Broadcasts(ffmpeg, session=session, watchdog=30.0, max_backoff=0.5)
    try:
        opened = await open_probed(session, icecast.url, read_timeout=30.0)
        assert len(opened.head) > 0
        audio = registry.audio_for("main", opened.url, opened)
        await wait_for(lambda: audio.queue.received >= 25, within=10)
        assert (icecast.requests, icecast.connections) == (1, 1)
        broadcast = registry.get("main")
        assert broadcast is not None
        # Every byte the server sent, the probe's included, went into FFmpeg's stdin.
        icecast.stall()
        await wait_for(lambda: broadcast.bytes_received == icecast.bytes_sent, within=5)
        icecast.stall(False)

        spare = await open_probed(session, icecast.url)  # a second guild probed meanwhile
        assert icecast.open_connections == 2
        other = registry.audio_for("main", spare.url, spare)
        assert spare.closed  # the decoder runs: its connection is not needed
        await wait_for(lambda: icecast.open_connections == 1)

        icecast.drop_all()  # a restart opens a fresh connection
        mark = audio.queue.received
        # (The station's backlog plays on meanwhile: the count alone does not show it.)
        await wait_for(
            lambda: icecast.connections == 3 and audio.queue.received >= mark + 25, within=10
        )
        audio.cleanup()
        other.cleanup()
        await wait_for(lambda: not registry.is_running("main") and icecast.open_connections == 0)

        # Cancelled before its task ran: the last listener left at once.
        late = await open_probed(session, icecast.url)
        registry.audio_for("main", late.url, late).cleanup()
        await wait_for(lambda: late.closed and icecast.open_connections == 0)
        # A URL the engine refuses: the handed stream is closed with the refusal.
        refused = await open_probed(session, icecast.url)
        with pytest.raises(StreamUnreachable):
            registry.audio_for("other", "file:///etc/passwd", refused)
        assert refused.closed
    finally:
        await registry.close()
    await wait_for(lambda: icecast.open_connections == 0)
    assert ffmpeg_children() == []


async def test_a_stream_on_a_private_address_is_refused(
    icecast: FakeIcecast,
    production_session: aiohttp.ClientSession,
    broadcasts: Callable[..., StationBroadcast],
    restart_lines: Callable[[], list[str]],
) -> None:
    """A guild station's stream URL naming a host that resolves into the bot's network, or an
    IP literal there, is never contacted: not by the probe, not by the decoder."""
    port = icecast.base_url.rsplit(":", 1)[1]
    for url in (f"http://internal.test:{port}/stream.mp3", f"http://127.0.0.1:{port}/s.mp3"):
        with pytest.raises(StreamUnreachable) as refused:
            await probe_stream(production_session, url)
        assert "does not contact" in refused.value.message
        broadcast = broadcasts(url, on=production_session, min_backoff=0.05, max_backoff=0.1)
        audio = broadcast.audio()
        await wait_for(lambda b=broadcast: b.restarts >= 2, within=10)
        assert ffmpeg_children() == []
        audio.cleanup()
    assert icecast.requests == 0
    lines = restart_lines()
    assert all("refused" in line for line in lines), lines


@pytest.fixture
async def redirector() -> AsyncIterator[tuple[int, list[str]]]:
    """A server answering every request with a 302 to the Location the test sets."""
    location = ["/"]

    async def handler(request: web.Request) -> web.Response:
        return web.Response(status=302, headers={"Location": location[0]})

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    yield runner.addresses[0][1], location
    await runner.cleanup()


async def test_a_redirect_to_a_private_address_is_refused(
    icecast: FakeIcecast,
    redirector: tuple[int, list[str]],
    session: aiohttp.ClientSession,
    production_session: aiohttp.ClientSession,
    broadcasts: Callable[..., StationBroadcast],
) -> None:
    """The owner's trusted station host redirects into the bot's network (a name or an IP
    literal): the hop is refused. With loopback allowed the same redirect plays."""
    port, location = redirector
    start = f"http://radio.test:{port}/live?token={TOKEN}"
    icecast_port = icecast.base_url.rsplit(":", 1)[1]
    for target in (
        f"http://internal.test:{icecast_port}/stream.mp3",
        f"http://127.0.0.1:{icecast_port}/stream.mp3",
        f"http://[::ffff:127.0.0.1]:{icecast_port}/stream.mp3",
    ):
        location[0] = target
        with pytest.raises(StreamUnreachable) as refused:
            await probe_stream(production_session, start)
        assert "does not contact" in refused.value.message
        assert TOKEN not in refused.value.message
        broadcast = broadcasts(start, on=production_session, min_backoff=0.05, max_backoff=0.1)
        audio = broadcast.audio()
        await wait_for(lambda b=broadcast: b.restarts >= 2, within=10)
        audio.cleanup()
    assert icecast.requests == 0

    location[0] = icecast.url  # the development override: the redirect is followed
    assert await probe_stream(session, start) == icecast.url
    broadcast = broadcasts(start)
    played = broadcast.audio()
    await wait_for(lambda: played.queue.received >= 5, within=10)
    assert icecast.connections == 2  # the probe's and the decoder's
    # A guild passing the URL the probe returned joins the same decoder: no new connection.
    broadcast.retarget(icecast.url)
    again = broadcast.audio()
    await wait_for(lambda: again.queue.received >= 5, within=10)
    assert icecast.requests == 2
    assert broadcast.restarts == 0


@pytest.fixture
async def hops() -> AsyncIterator[tuple[int, list[str], list[str]]]:
    """A redirector that records every path it is asked for (its port, the Location it
    answers, the paths seen)."""
    location = ["/"]
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.Response(status=302, headers={"Location": location[0]})

    app = web.Application()
    app.router.add_get("/{tail:.*}", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    yield runner.addresses[0][1], location, seen
    await runner.cleanup()


async def test_every_redirect_hop_passes_the_station_policy_like_the_first_url(
    icecast: FakeIcecast,
    hops: tuple[int, list[str], list[str]],
    broadcasts: Callable[..., StationBroadcast],
    restart_lines: Callable[[], list[str]],
) -> None:
    """A guild station's link on an allowed host redirects to a host or port its policy
    refuses: the hop is refused before anything connects to it (the probe and the decoder
    alike), even where the resolver would let it through (``owner.test`` is the owner's config
    host, which the resolver trusts to reach internal addresses). A config station's guard
    trusts the owner's hosts, so the same hop plays there. Redirect loops end after
    ``MAX_REDIRECTS`` hops."""
    port, location, seen = hops
    icecast_port = int(icecast.base_url.rsplit(":", 1)[1])
    owner_hosts = frozenset({"radio.test", "owner.test"})
    policy = HostPolicy(allowed_hosts=("radio.test",), https_only=False, allowed_ports=(port,))
    guild = stream_guard(lambda: policy, frozenset())
    start = f"http://radio.test:{port}/live?token={TOKEN}"
    async with guarded_session(HostPolicy(), trusted=owner_hosts) as session:
        refused_hops = {
            f"http://owner.test:{port}/internal": "radio.test; owner.test is not one",
            f"http://radio.test:{icecast_port}/stream.mp3": f"not {icecast_port}",
            f"http://127.0.0.1:{port}/": "a loopback address",
            f"http://user:pw@radio.test:{port}/": "user name or password",
        }
        for target, why in refused_hops.items():
            location[0] = target
            seen.clear()
            with pytest.raises(StreamUnreachable) as refused:
                await probe_stream(session, start, guard=guild)
            assert refused.value.message == (
                f"The station's stream at http://radio.test:{port} redirected to an address "
                "OnAir does not contact."
            )
            assert why in refused.value.reason
            assert TOKEN not in refused.value.message + refused.value.reason
            assert seen == ["/live"]  # the first URL only: the hop was never contacted
        assert icecast.requests == 0

        # The decoder opens its stream (and every restart) through the same guard.
        location[0] = f"http://radio.test:{icecast_port}/stream.mp3"
        broadcast = broadcasts(start, on=session, min_backoff=0.05, max_backoff=0.1)
        broadcast.guard = guild
        audio = broadcast.audio()
        await wait_for(lambda: broadcast.restarts >= 2, within=10)
        audio.cleanup()
        assert icecast.requests == 0
        lines = restart_lines()
        assert "a redirect refused" in lines[0], lines

        # A first URL the policy refuses is not contacted either.
        seen.clear()
        with pytest.raises(StreamUnreachable) as first:
            await probe_stream(session, f"http://owner.test:{port}/live", guard=guild)
        assert "is on an address OnAir does not contact" in first.value.message
        assert seen == []

        # The owner's config station trusts its own hosts: the same hop plays.
        owner = stream_guard(lambda: policy, owner_hosts)
        assert await probe_stream(session, start, guard=owner) == location[0]
        assert icecast.connections == 1

        # A redirect loop is bounded: the first request and MAX_REDIRECTS hops, then refused.
        location[0] = start
        seen.clear()
        with pytest.raises(StreamUnreachable) as looped:
            await probe_stream(session, start, guard=guild)
        assert "redirected too many times" in looped.value.message
        assert len(seen) == MAX_REDIRECTS + 1


@pytest.mark.parametrize(
    ("head", "words"),
    [
        (b"ICY 200 OK\r\nicy-name: v1\r\n\r\n", "does not speak HTTP"),  # SHOUTcast v1
        (b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 10_000 + b"\r\n\r\n", "does not speak HTTP"),
        (b"HTTP/1.1 200 OK\r\n" + b"X-H: 1\r\n" * 200 + b"\r\n", "does not speak HTTP"),
    ],
    ids=["icy-status-line", "huge-header", "too-many-headers"],
)
async def test_answers_aiohttp_cannot_parse_are_polite_refusals(
    session: aiohttp.ClientSession, head: bytes, words: str
) -> None:
    """aiohttp (llhttp and its Python parser alike) refuses SHOUTcast v1's ``ICY 200 OK``, and
    headers are bounded: each is a polite StreamUnreachable, not a traceback."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head + b"\xff\xfb" * 2000)
        with contextlib.suppress(ConnectionError):
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(StreamUnreachable) as refused:
            await probe_stream(session, f"http://127.0.0.1:{port}/;stream.mp3?token={TOKEN}")
    finally:
        server.close()
        await server.wait_closed()
    assert words in refused.value.message
    assert TOKEN not in refused.value.message


@contextlib.asynccontextmanager
async def answering(content_type: str | None) -> AsyncIterator[str]:
    """A loopback server answering 200 with this Content-Type header (None: no such header)
    and some bytes; yields a stream URL carrying a listener token."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            await reader.readuntil(b"\r\n\r\n")
            header = f"Content-Type: {content_type}\r\n" if content_type is not None else ""
            writer.write(f"HTTP/1.1 200 OK\r\n{header}\r\n".encode() + b"\xff\xfb" * 4000)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/player/index.html?token={TOKEN}"
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize(
    ("content_type", "words"),
    [
        ("text/html; charset=utf-8", "is a web page, not an audio stream"),
        ("application/json", "is a web page, not an audio stream"),
        ("application/hal+json", "is a web page, not an audio stream"),
        ("TEXT/PLAIN", "is a web page, not an audio stream"),
        ("audio/x-mpegurl", "is a playlist, not an audio stream"),
        ("image/png", "does not send audio"),
        ("text/html\x01<script>", "is a web page, not an audio stream"),
    ],
)
async def test_an_answer_that_is_not_audio_is_refused_by_name(
    session: aiohttp.ClientSession, content_type: str, words: str
) -> None:
    """A listen link answering 200 with a web player page, JSON, a playlist or an image is a
    polite refusal naming the host (not its path or token), never bytes fed to FFmpeg."""
    async with answering(content_type) as url:
        with pytest.raises(StreamUnreachable) as refused:
            await probe_stream(session, url)
    message = refused.value.message
    host = url.split("/player", 1)[0]
    assert message == f"The station's stream at {host} {words}."
    assert TOKEN not in message + refused.value.reason
    assert "<script>" not in refused.value.reason  # the server's text is not echoed


@pytest.mark.parametrize(
    "content_type",
    [
        "audio/mpeg",
        "audio/aacp",
        "audio/ogg",
        "Audio/MPEG; charset=x",
        "application/ogg",
        "application/octet-stream",
        None,
    ],
)
async def test_audio_content_types_and_none_are_played(
    session: aiohttp.ClientSession, content_type: str | None
) -> None:
    """What Icecast and SHOUTcast send (and servers that send no type at all) passes."""
    async with answering(content_type) as url:
        assert await probe_stream(session, url) == url


async def test_the_decoder_refuses_a_web_page_and_says_so_in_its_restart_line(
    session: aiohttp.ClientSession,
    broadcasts: Callable[..., StationBroadcast],
    restart_lines: Callable[[], list[str]],
) -> None:
    """The decoder opens the stream with the same check: no FFmpeg starts on a web page."""
    async with answering("text/html") as url:
        broadcast = broadcasts(url, min_backoff=0.05, max_backoff=0.1)
        audio = broadcast.audio()
        await wait_for(lambda: broadcast.restarts >= 2, within=10)
        assert ffmpeg_children() == []
        assert broadcast.frames_produced == 0
        audio.cleanup()
    lines = restart_lines()
    assert lines
    assert "a web page (text/html), not an audio stream" in lines[0]
    assert TOKEN not in "\n".join(lines)
