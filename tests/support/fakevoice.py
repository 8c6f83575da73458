"""A fake Discord voice server (websocket v8 over TLS + UDP) on loopback for discord.py voice.

How a test uses it
------------------
``FakeDiscord`` owns one ``FakeVoiceServer`` as ``fake.voice`` (started by the bot's first op 4)::

    from tests.support.fakediscord import CONNECT, MUTE_MEMBERS, SPEAK, FakeDiscord
    fake = FakeDiscord()
    guild = fake.guilds[0]
    radio = fake.add_voice_channel(guild, "Radio")          # type 2; stage=True gives type 13
    await fake.start()
    await fake.set_member_voice(guild, 4242, radio)         # before READY: in GUILD_CREATE
    async with running_bot(sim, fake=fake) as env:          # tests.support.botenv (the real bot)
        await fake.set_member_voice(guild, 4343, radio)     # after READY: VOICE_STATE_UPDATE
        ...the bot joins (e.g. a /join from user 4242 via fake.slash(..., user_id=4242))...
        await wait_for(lambda: fake.bot_voice.get(guild.id) == radio)
        await wait_for(lambda: fake.voice.stats(guild.id).audio >= 150, within=15)
        stats = fake.voice.stats(guild.id)                  # a snapshot, all SSRCs of the guild
        assert stats.gaps == 0 and stats.rate(window=2.0) >= 45  # frames/s the player kept to
        moment = time.monotonic(); ...; stats.audio_after(moment)  # audio frames since then
        await fake.voice.close(guild.id, 4006)              # inject a voice close code
        await fake.disconnect_bot(guild)                    # a moderator kicks the bot (4014)
        await fake.set_member_voice(guild, 4242, None)      # the listener leaves
        fake.voice.opcodes(guild.id)                        # every client opcode, in order

``fake.bot_voice`` is {guild id: channel id} of where the bot is; ``fake.bot_voice_state(guild)``
its voice state (``suppress``, ``request_to_speak_timestamp`` on a stage). The bot must identify
with the GUILD_VOICE_STATES intent or it sees no voice state and its joins time out.
``fake.voice.leaks(caplog.text)`` says which voice secrets ("token", "secret_key") a log holds
(discord.py's own DEBUG records in ``discord.gateway`` hold both). ``fake.voice.violations`` lists
protocol errors of the client, ``key_packages``/``dave_offered`` what it did for DAVE.

Permissions: ``add_voice_channel(..., bot_deny=CONNECT)`` (or ``SPEAK``; ``bot_allow=MUTE_MEMBERS``
on a stage) writes a member overwrite for the bot into the channel payload, so discord.py's
``channel.permissions_for(guild.me)`` shows it. Like Discord, the fake ignores an op 4 into a
channel without Connect (no answer: ``connect()`` times out; listed in ``fake.voice_rejections``).
On a stage the bot joins suppressed; PATCH ``/guilds/{id}/voice-states/@me`` with ``suppress``
false needs Mute Members (else 403/50013), ``request_to_speak_timestamp`` needs Request to Speak
(@everyone has it); either dispatches the bot's new VOICE_STATE_UPDATE. Bad shapes: 400/50035.
An op 4 of another shape closes the main gateway with 4002 (discord.py resumes).

What discord.py 2.7.1 does with each close code (tests/test_fake_voice.py proves each):
- 4006 / 4017 (and any code without a branch): after a backoff (~0.4-2 s) it sends op 4 leave and
  op 4 join, IDENTIFYs a new session (new SSRC) and the player plays on; the VoiceClient survives.
- 4015: it "attempts a resume" by sending op 4 again, then waits for both voice events in a state
  the second one cannot complete; after ``connect(timeout=...)`` seconds it leaves voice (op 4
  leave) and the VoiceClient is gone. No RESUME is sent. The bot must rejoin itself.
- 4014 alone: it waits ``timeout`` for a VOICE_SERVER_UPDATE (a move) and then leaves as above.
  After VOICE_STATE_UPDATE with no channel (``disconnect_bot``) it leaves at once.
- A move (``vc.move_to``): the fake answers op 4 with both events and closes the old websocket with
  4014, on which discord.py connects to the new one.

The wire
--------
HELLO (8) on connect; IDENTIFY (0) → READY (2) {ssrc, ip, port, modes}; the client's 74-byte UDP
IP discovery is answered; SELECT_PROTOCOL (1) → SESSION_DESCRIPTION (4) {mode, secret_key,
dave_protocol_version}; HEARTBEAT (3) {t, seq_ack} → HEARTBEAT_ACK (6); SPEAKING (5); RESUME (7)
→ RESUMED (9). Server messages carry ``seq`` (v8); binary server frames are ``[seq:2][op:1]
[payload]``, binary client frames ``[op:1][payload]`` (DAVE op 26, the MLS key package, is
counted in ``key_packages``). Every RTP packet is decrypted (aead_xchacha20_poly1305_rtpsize: the
12-byte header is the associated data, the last 4 bytes the start of the 24-byte nonce) in a
thread of its own, so counting never competes with the bot's event loop; arrival times are the
kernel's receive stamps (SO_TIMESTAMPNS), so a loaded machine that is slow to run that thread does
not skew them, and ``FrameStats.rate`` reads the pace from the punctual frames (a stalled sender's
catch-up burst does not count as speed). ``FrameStats.steps`` holds the RTP timestamp advances.
RTP of a closed connection is not counted (``rejected``). The server sends an RTCP receiver report
to each sender every ``rtcp_interval`` seconds as Discord does; without them discord.py's socket
reader can sit up to 30 s in select() on a socket it already closed, which delays its reconnect
after 4006 by that much.

``fake.voice.dave_version`` (0 or 1, default 1 as Discord since March 2026) is what
SESSION_DESCRIPTION announces; a client that offers less is closed with 4017. DAVE without a real
MLS group: discord.py creates a ``davey.DaveSession`` and sends its key package (op 26), but no
group forms (that needs Discord as MLS external sender), the session never becomes ready and
discord.py sends Opus frames with transport encryption only (passthrough). Frames that look
DAVE-encrypted (the 0xFAFA trailer) are counted in ``dave_frames``: 0 in passthrough.

Voice states reach the bot only with the GUILD_VOICE_STATES intent (as on Discord; without it a
join times out). The bot's own voice state survives a new IDENTIFY of the main gateway (a ghost in
GUILD_CREATE, as Discord keeps a restarted bot in its channel for a while); op 4 into that channel
is answered as a fresh join.

Secrets (voice tokens, secret keys) are kept out of every repr, log line and close reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import platform
import secrets
import socket
import ssl
import struct
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import trustme
from aiohttp import web
from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt,
)
from nacl.exceptions import CryptoError

OPUS_SILENCE = b"\xf8\xff\xfe"
DAVE_MAGIC = b"\xfa\xfa"  # the trailer of a DAVE-encrypted frame
MODE = "aead_xchacha20_poly1305_rtpsize"
MODES = ["aead_aes256_gcm_rtpsize", MODE]  # what Discord offers today, in its order
HEARTBEAT_INTERVAL_MS = 13750

# Opcodes (Discord voice gateway v8) -----------------------------------------------------------
IDENTIFY, SELECT_PROTOCOL, READY, HEARTBEAT, SESSION_DESCRIPTION, SPEAKING = 0, 1, 2, 3, 4, 5
HEARTBEAT_ACK, RESUME, HELLO, RESUMED = 6, 7, 8, 9
CLIENT_OPS = frozenset({0, 1, 3, 5, 7, 12, 23, 26, 28, 31})
BINARY_CLIENT_OPS = frozenset({26, 28})  # MLS key package, commit/welcome

# Close codes (Discord's voice close event codes) ----------------------------------------------
UNKNOWN_OPCODE = 4001
DECODE_ERROR = 4002
NOT_AUTHENTICATED = 4003
AUTHENTICATION_FAILED = 4004
ALREADY_AUTHENTICATED = 4005
SESSION_INVALID = 4006
SESSION_TIMEOUT = 4009
SERVER_NOT_FOUND = 4011
UNKNOWN_PROTOCOL = 4012
DISCONNECTED = 4014
SERVER_CRASHED = 4015
UNKNOWN_ENCRYPTION_MODE = 4016
E2EE_REQUIRED = 4017


@dataclass
class Expected:
    """Who may identify for a guild: what the fake main gateway handed the bot in op 4's answer."""

    user_id: int
    session_id: str
    token: str = field(repr=False)
    channel_id: int


@dataclass
class FrameStats:
    """Frames received from one guild's voice client (a snapshot; arrival times are monotonic)."""

    frames: int = 0
    audio: int = 0
    silence: int = 0
    gaps: int = 0  # sequence discontinuities (a lost, duplicated or reordered packet)
    dave_frames: int = 0  # payloads with the DAVE trailer (0 while DAVE is in passthrough)
    rejected: int = 0  # packets that failed to decrypt or were malformed
    arrivals: list[float] = field(default_factory=list)
    audio_arrivals: list[float] = field(default_factory=list)
    # RTP timestamp advances between consecutive packets of one SSRC: {960} when every frame is
    # 20 ms of 48 kHz audio (50 frames to a second of sound, however the packets were paced).
    steps: set[int] = field(default_factory=set)

    def add(self, other: FrameStats, *, arrivals: bool = True) -> None:
        """Count ``other`` in (another SSRC of the same guild); without ``arrivals``, all but
        the arrival times."""
        self.frames += other.frames
        self.audio += other.audio
        self.silence += other.silence
        self.gaps += other.gaps
        self.dave_frames += other.dave_frames
        self.rejected += other.rejected
        self.steps |= other.steps
        if arrivals:
            self.arrivals += other.arrivals
            self.audio_arrivals += other.audio_arrivals

    def rate(self, window: float = 2.0, *, audio_only: bool = False) -> float:
        """Frames per second the sender kept to over the last ``window`` seconds of arrivals.

        A player paced like discord.py's (frame n due at start + n x 20 ms; a late one is sent
        at once and the next ones catch up) sends a frame late but never early, so the punctual
        frames lie on the lower envelope of (frame number, kernel arrival time) and a stall and
        its catch-up burst lie above it. The envelope's slope at the middle of the window is
        the rate: a loaded machine's stalls do not move it, a player that paces wrong does."""
        times = self.audio_arrivals if audio_only else self.arrivals
        if len(times) < 2:
            return 0.0
        end = times[-1]
        points = [(n, t) for n, t in enumerate(times) if t >= end - window]
        hull: list[tuple[int, float]] = []  # the lower convex hull, left to right
        for point in points:
            while len(hull) >= 2 and _turns_down(hull[-2], hull[-1], point):
                hull.pop()
            hull.append(point)
        middle = (points[0][0] + points[-1][0]) / 2
        for (n0, t0), (n1, t1) in itertools.pairwise(hull):
            if n0 <= middle <= n1:
                return (n1 - n0) / (t1 - t0) if t1 > t0 else float("inf")
        return 0.0

    def span(self, *, audio_only: bool = False) -> float:
        """Seconds between the first and the last counted frame."""
        times = self.audio_arrivals if audio_only else self.arrivals
        return times[-1] - times[0] if len(times) > 1 else 0.0

    def audio_after(self, moment: float) -> int:
        """Audio frames that arrived after ``moment`` (``time.monotonic()``)."""
        return sum(1 for t in self.audio_arrivals if t > moment)


# Linux's SO_TIMESTAMPNS (= SCM_TIMESTAMPNS; 64-bit timespec) on x86-64 and arm64: the socket
# module does not export it.
SO_TIMESTAMPNS = (
    35 if sys.platform == "linux" and platform.machine() in ("x86_64", "aarch64") else None
)


SO_RCVBUFFORCE = 33  # Linux: SO_RCVBUF past rmem_max, for a process with CAP_NET_ADMIN
_SILENCE_PACKET = 12 + len(OPUS_SILENCE) + 16 + 4  # header, Opus, tag, nonce


def _kernel_arrival(ancillary: list[tuple[int, int, bytes]]) -> float:
    """When the kernel received the datagram, on the ``time.monotonic()`` clock (now if the
    kernel gave no SO_TIMESTAMPNS stamp)."""
    now = time.monotonic()
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
            seconds, nanoseconds = struct.unpack("qq", payload[:16])
            return float(min(now, now - time.time() + seconds + nanoseconds / 1e9))
    return now


def _turns_down(a: tuple[int, float], b: tuple[int, float], c: tuple[int, float]) -> bool:
    """True when ``b`` lies on or above the line from ``a`` to ``c`` (not a lower hull vertex)."""
    return (b[1] - a[1]) * (c[0] - a[0]) >= (c[1] - a[1]) * (b[0] - a[0])


@dataclass
class _Stream:
    """One SSRC's counters (written by the UDP thread)."""

    guild_id: int
    key: bytes | None = field(default=None, repr=False)
    active: bool = True  # False once its websocket closed (until a RESUME continues it)
    last_seq: int | None = None
    last_timestamp: int | None = None
    address: tuple[str, int] | None = None  # where its RTP comes from (RTCP goes back there)
    reported: float = 0.0  # when the last RTCP receiver report went out
    stats: FrameStats = field(default_factory=FrameStats)


@dataclass
class _Session:
    """One voice websocket connection."""

    guild_id: int
    ws: web.WebSocketResponse
    ssrc: int = 0
    seq: int = 0  # last sequence number the server sent
    seq_ack: int = -1  # last one the client acknowledged
    identified: bool = False
    key: bytes | None = field(default=None, repr=False)


class FakeVoiceServer:
    """Discord's voice server on 127.0.0.1: a TLS websocket (v8) and a UDP port."""

    def __init__(
        self, ca: trustme.CA, *, dave_version: int = 1, rtcp_interval: float | None = 1.0
    ) -> None:
        self.ca = ca
        self.dave_version = dave_version  # announced in SESSION_DESCRIPTION; 0 = no DAVE
        # Discord answers a sender's RTP with RTCP receiver reports (discord.py issue #2225);
        # None sends none (then discord.py 2.7.1's socket reader can sit 30 s in select() on a
        # socket it closed, which delays its reconnect after 4006/4017: see test_fake_voice).
        self.rtcp_interval = rtcp_interval
        self._next_report = 0.0
        self.port = 0  # the websocket's
        self.udp_port = 0
        self._runner: web.AppRunner | None = None
        self._udp: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._expected: dict[int, Expected] = {}
        self._sessions: dict[int, _Session] = {}  # guild → current connection
        self._streams: dict[int, _Stream] = {}  # ssrc → counters
        self._ssrcs = itertools.count(1001)
        self._seen: dict[int, list[int]] = {}
        self.key_packages: dict[int, int] = {}  # guild → DAVE key packages (op 26) received
        self.dave_offered: dict[int, int] = {}  # guild → max_dave_protocol_version identified with
        self.closes: list[tuple[int, int]] = []  # (guild, code) the server closed with
        self.violations: list[str] = []  # protocol errors the client made (never with secrets)
        self._issued: list[tuple[str, str]] = []  # (kind, value) of every secret handed out
        self.connections = 0
        # Decrypt one packet in this many per SSRC (1: every one, as the tests do; a benchmark
        # of 1,000 guilds samples). Every packet is counted, with its sequence and timestamp;
        # an undecrypted one is audio or silence by its length (silence: 3 bytes of Opus).
        self.decrypt_every = 1

    # Lifecycle ------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._runner is not None

    @property
    def endpoint(self) -> str:
        """What VOICE_SERVER_UPDATE carries; discord.py makes it ``wss://{endpoint}/?v=8``."""
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/", self._websocket)
        # A short shutdown timeout: a voice websocket never ends by itself (see voice.md).
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.ca.issue_cert("127.0.0.1").configure_cert(context)
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        self._udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # Room for bursts (a benchmark's 100 guilds): a drop here would look like the bot's gap.
        self._udp.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        with contextlib.suppress(OSError):  # as root: past rmem_max (1,000 guilds' packets)
            self._udp.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 1 << 26)
        # The kernel stamps each datagram as it arrives (Linux): arrival times then say when the
        # bot sent, not when this thread got the GIL back on a loaded machine.
        if SO_TIMESTAMPNS is not None:
            with contextlib.suppress(OSError):
                self._udp.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self._udp.bind(("127.0.0.1", 0))
        self._udp.settimeout(0.2)
        self.udp_port = self._udp.getsockname()[1]
        self._stopping.clear()
        self._thread = threading.Thread(target=self._receive, name="fake-voice-udp", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        for session in list(self._sessions.values()):
            with contextlib.suppress(Exception):
                await asyncio.wait_for(session.ws.close(code=1001), timeout=1.0)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self._stopping.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 2.0)
            self._thread = None
        if self._udp is not None:
            self._udp.close()
            self._udp = None

    # What the main gateway tells the voice server -------------------------------------------

    def expect(self, guild_id: int, user_id: int, session_id: str, channel_id: int) -> str:
        """Register a join (op 4 answered); returns the new voice token for VOICE_SERVER_UPDATE."""
        token = secrets.token_hex(12)
        self._expected[guild_id] = Expected(user_id, session_id, token, channel_id)
        self._issued.append(("token", token))
        return token

    def forget(self, guild_id: int) -> None:
        """The bot left voice in that guild: its token is no longer valid."""
        self._expected.pop(guild_id, None)

    # What tests read and do -------------------------------------------------------------------

    def stats(self, guild_id: int) -> FrameStats:
        """A snapshot of every frame the guild's voice client sent (all its SSRCs merged)."""
        with self._lock:
            streams = [s for s in self._streams.values() if s.guild_id == guild_id]
            out = FrameStats()
            for stream in streams:
                out.add(stream.stats)
        out.arrivals.sort()
        out.audio_arrivals.sort()
        return out

    def all_stats(self, *, arrivals: bool = True) -> dict[int, FrameStats]:
        """``stats`` of every guild in one pass (a benchmark's 1,000 guilds); without
        ``arrivals`` only the counters."""
        out: dict[int, FrameStats] = {}
        with self._lock:
            for stream in self._streams.values():
                merged = out.setdefault(stream.guild_id, FrameStats())
                merged.add(stream.stats, arrivals=arrivals)
        for merged in out.values():
            merged.arrivals.sort()
            merged.audio_arrivals.sort()
        return out

    def leaks(self, text: str) -> set[str]:
        """Which kinds of voice secret ("token", "secret_key") appear in ``text`` (say, captured
        logs), without ever showing one: the bot must log neither, at any level."""
        return {kind for kind, value in self._issued if value in text}

    def opcodes(self, guild_id: int) -> list[int]:
        """Every opcode the guild's voice client sent, in order (JSON and binary frames)."""
        return list(self._seen.get(guild_id, []))

    def server_seq(self, guild_id: int) -> int:
        """The last sequence number the server sent the guild's client (v8)."""
        return self._sessions[guild_id].seq

    def acknowledged(self, guild_id: int) -> int:
        """The last ``seq_ack`` the guild's client sent in a heartbeat."""
        return self._sessions[guild_id].seq_ack

    def connected(self, guild_id: int) -> bool:
        """True while the guild's voice client holds an identified websocket."""
        session = self._sessions.get(guild_id)
        return session is not None and session.identified and not session.ws.closed

    async def close(self, guild_id: int, code: int) -> None:
        """Close the guild's voice websocket with ``code`` (4006, 4014, 4015, 4017, ...)."""
        session = self._sessions.get(guild_id)
        if session is None:
            raise AssertionError(f"no voice connection for guild {guild_id}")
        self.closes.append((guild_id, code))
        # discord.py answers a close frame only when it next reads: do not wait for it.
        with contextlib.suppress(Exception):
            await asyncio.wait_for(session.ws.close(code=code), timeout=1.0)

    # Websocket ------------------------------------------------------------------------------

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(timeout=1.0, max_msg_size=1 << 16)
        await ws.prepare(request)
        self.connections += 1
        session = _Session(0, ws)
        if request.query.get("v") != "8":
            self.violations.append(f"voice websocket without v=8: {request.query_string[:40]!r}")
            await ws.close(code=UNKNOWN_PROTOCOL)
            return ws
        await self._send(session, HELLO, {"heartbeat_interval": HEARTBEAT_INTERVAL_MS}, seq=False)
        # A closed session stays in ``_sessions``: a RESUME (after 4015) continues it.
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                await self._text(session, msg.data)
            elif msg.type == aiohttp.WSMsgType.BINARY:
                await self._binary(session, msg.data)
        with self._lock:
            # Discord drops the RTP of a closed connection: it is not counted as frames.
            stream = self._streams.get(session.ssrc)
            if stream is not None and self._sessions.get(session.guild_id) is session:
                stream.active = False
        return ws

    async def _send(self, session: _Session, op: int, data: Any, *, seq: bool = True) -> None:
        payload: dict[str, Any] = {"op": op, "d": data}
        if seq:
            session.seq += 1
            payload["seq"] = session.seq
        if not session.ws.closed:
            await session.ws.send_str(json.dumps(payload))

    async def send_binary(self, guild_id: int, op: int, payload: bytes) -> None:
        """A server binary frame ``[seq:2][op:1][payload]`` (e.g. DAVE ops 25, 27, 29, 30)."""
        session = self._sessions[guild_id]
        session.seq += 1
        await session.ws.send_bytes(struct.pack(">HB", session.seq & 0xFFFF, op) + payload)

    async def _refuse(self, session: _Session, code: int, why: str) -> None:
        self.violations.append(why)
        self.closes.append((session.guild_id, code))
        await session.ws.close(code=code)

    def _record(self, session: _Session, op: int) -> None:
        if session.guild_id:
            self._seen.setdefault(session.guild_id, []).append(op)

    async def _text(self, session: _Session, raw: str) -> None:
        try:
            message = json.loads(raw)
            op, data = message["op"], message["d"]
        except (ValueError, KeyError, TypeError):
            await self._refuse(session, DECODE_ERROR, "undecodable voice payload")
            return
        if op in (IDENTIFY, RESUME):
            await self._authenticate(session, op, data)
            return
        self._record(session, op)
        if not session.identified:
            await self._refuse(session, NOT_AUTHENTICATED, f"op {op} before IDENTIFY")
        elif op == HEARTBEAT:
            await self._heartbeat(session, data)
        elif op == SELECT_PROTOCOL:
            await self._select_protocol(session, data)
        elif op == SPEAKING:
            if not isinstance(data, dict) or data.get("ssrc") != session.ssrc:
                self.violations.append("SPEAKING with a wrong ssrc")
        elif op not in CLIENT_OPS or op in BINARY_CLIENT_OPS:
            await self._refuse(session, UNKNOWN_OPCODE, f"unknown voice opcode {op}")

    async def _binary(self, session: _Session, raw: bytes) -> None:
        if not raw or not session.identified:
            await self._refuse(session, NOT_AUTHENTICATED, "binary frame before IDENTIFY")
            return
        op = raw[0]
        self._record(session, op)
        if op not in BINARY_CLIENT_OPS or len(raw) < 2:
            await self._refuse(session, UNKNOWN_OPCODE, f"unknown binary voice opcode {op}")
        elif op == 26:
            self.key_packages[session.guild_id] = self.key_packages.get(session.guild_id, 0) + 1

    async def _authenticate(self, session: _Session, op: int, data: Any) -> None:
        keys = (
            {"server_id", "user_id", "session_id", "token", "max_dave_protocol_version"}
            if op == IDENTIFY
            else {"server_id", "session_id", "token", "seq_ack"}
        )
        if not isinstance(data, dict) or set(data) != keys:
            shape = sorted(data) if isinstance(data, dict) else type(data).__name__
            await self._refuse(session, DECODE_ERROR, f"op {op} with fields {shape}")
            return
        guild_id = int(data["server_id"]) if str(data["server_id"]).isdigit() else 0
        session.guild_id = guild_id
        self._record(session, op)
        expected = self._expected.get(guild_id)
        if session.identified:
            await self._refuse(session, ALREADY_AUTHENTICATED, "second IDENTIFY")
        elif expected is None:
            await self._refuse(session, SERVER_NOT_FOUND, "IDENTIFY for a guild not joined")
        elif not secrets.compare_digest(str(data["token"]), expected.token):
            await self._refuse(session, AUTHENTICATION_FAILED, "IDENTIFY with a wrong token")
        elif data["session_id"] != expected.session_id or (
            op == IDENTIFY and data["user_id"] != str(expected.user_id)
        ):
            await self._refuse(session, SESSION_INVALID, "IDENTIFY with a wrong session or user")
        elif op == RESUME:
            previous = self._sessions.get(guild_id)
            if previous is None or previous.key is None:
                await self._refuse(session, SESSION_INVALID, "RESUME of no session")
                return
            session.identified, session.ssrc, session.key = True, previous.ssrc, previous.key
            session.seq = previous.seq
            self._sessions[guild_id] = session
            with self._lock:
                self._streams[session.ssrc].active = True
            await self._send(session, RESUMED, None)
        else:
            offered = data["max_dave_protocol_version"]
            self.dave_offered[guild_id] = offered
            if not isinstance(offered, int) or offered < self.dave_version:
                await self._refuse(session, E2EE_REQUIRED, "client without DAVE")
                return
            old = self._sessions.get(guild_id)
            if old is not None and old is not session:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(old.ws.close(code=DISCONNECTED), timeout=1.0)
            session.identified = True
            session.ssrc = next(self._ssrcs)
            self._sessions[guild_id] = session
            with self._lock:
                self._streams[session.ssrc] = _Stream(guild_id)
            await self._send(
                session,
                READY,
                {"ssrc": session.ssrc, "ip": "127.0.0.1", "port": self.udp_port, "modes": MODES},
            )

    async def _heartbeat(self, session: _Session, data: Any) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("t"), int):
            await self._refuse(session, DECODE_ERROR, "HEARTBEAT without t")
            return
        ack = data.get("seq_ack")
        if not isinstance(ack, int) or not -1 <= ack <= session.seq:
            self.violations.append(f"seq_ack {ack!r} outside -1..{session.seq}")
        else:
            session.seq_ack = ack
        await self._send(session, HEARTBEAT_ACK, {"t": data["t"]}, seq=False)

    async def _select_protocol(self, session: _Session, data: Any) -> None:
        inner = data.get("data") if isinstance(data, dict) else None
        if (
            not isinstance(data, dict)
            or data.get("protocol") != "udp"
            or not isinstance(inner, dict)
            or set(inner) != {"address", "port", "mode"}
        ):
            await self._refuse(session, UNKNOWN_PROTOCOL, "SELECT_PROTOCOL of another shape")
            return
        if inner["mode"] not in MODES:
            await self._refuse(session, UNKNOWN_ENCRYPTION_MODE, f"mode {inner['mode']!r}")
            return
        if inner["mode"] != MODE:
            # Counting frames needs the one mode the fake decrypts.
            await self._refuse(session, UNKNOWN_ENCRYPTION_MODE, f"undecryptable {inner['mode']}")
            return
        key = secrets.token_bytes(32)
        session.key = key
        self._issued += [("secret_key", str(list(key))), ("secret_key", json.dumps(list(key)))]
        self._issued += [("secret_key", key.hex())]
        with self._lock:
            self._streams[session.ssrc].key = key
        await self._send(
            session,
            SESSION_DESCRIPTION,
            {
                "mode": MODE,
                "secret_key": list(key),
                "dave_protocol_version": self.dave_version,
                "audio_codec": "opus",
                "video_codec": None,
                "media_session_id": secrets.token_hex(16),
            },
        )

    # UDP (a thread: decrypting and counting stay off the event loop) ---------------------------

    def _receive(self) -> None:
        udp = self._udp
        assert udp is not None
        while not self._stopping.is_set():
            try:
                data, ancillary, _flags, address = udp.recvmsg(2048, socket.CMSG_SPACE(16))
            except TimeoutError:
                self._report(udp)
                continue
            except OSError:
                return
            arrived = _kernel_arrival(ancillary)
            if len(data) == 74 and data[:4] == b"\x00\x01\x00\x46":
                self._discovery(udp, data, address)
            else:
                self._count(data, arrived, address)
            self._report(udp)

    def _report(self, udp: socket.socket) -> None:
        """An RTCP receiver report (encrypted like RTP, 8-byte header as AAD) to each sender."""
        now = time.monotonic()
        if self.rtcp_interval is None or now < self._next_report:
            return
        self._next_report = now + min(0.1, self.rtcp_interval)  # not on every packet
        due: list[tuple[int, bytes, tuple[str, int], int]] = []
        with self._lock:
            for ssrc, s in self._streams.items():
                if s.active and s.key and s.address and now - s.reported >= self.rtcp_interval:
                    s.reported = now
                    due.append((ssrc, s.key, s.address, s.last_seq or 0))
        for ssrc, key, address, last_seq in due:
            header = struct.pack(">BBHI", 0x81, 201, 7, 1)
            block = struct.pack(">IIIIII", ssrc, 0, last_seq, 0, 0, 0)
            nonce = struct.pack(">I", int(now * 1000) & 0xFFFFFFFF)
            sealed = crypto_aead_xchacha20poly1305_ietf_encrypt(
                block, header, nonce + b"\x00" * 20, key
            )
            with contextlib.suppress(OSError):
                udp.sendto(header + sealed + nonce, address)

    def _discovery(self, udp: socket.socket, data: bytes, address: tuple[str, int]) -> None:
        ip = address[0].encode("ascii")
        answer = struct.pack(">HHI", 2, 70, struct.unpack_from(">I", data, 4)[0])
        answer += ip + b"\x00" * (64 - len(ip)) + struct.pack(">H", address[1])
        with contextlib.suppress(OSError):
            udp.sendto(answer, address)

    def _count(self, data: bytes, arrived: float, address: tuple[str, int]) -> None:
        if len(data) < 12 + 16 + 4:
            return
        ssrc = struct.unpack_from(">I", data, 8)[0]
        with self._lock:
            stream = self._streams.get(ssrc)
            if stream is None:
                return
            stats = stream.stats
            if data[0] != 0x80 or data[1] != 0x78 or stream.key is None or not stream.active:
                stats.rejected += 1
                return
            nonce = data[-4:] + b"\x00" * 20
            if self.decrypt_every <= 1 or stats.frames % self.decrypt_every == 0:
                try:
                    opus = crypto_aead_xchacha20poly1305_ietf_decrypt(
                        data[12:-4], data[:12], nonce, stream.key
                    )
                except CryptoError:
                    stats.rejected += 1
                    return
            else:
                opus = OPUS_SILENCE if len(data) == _SILENCE_PACKET else b""
            sequence = struct.unpack_from(">H", data, 2)[0]
            if stream.last_seq is not None and sequence != (stream.last_seq + 1) & 0xFFFF:
                stats.gaps += 1
            stream.last_seq = sequence
            timestamp = struct.unpack_from(">I", data, 4)[0]
            if stream.last_timestamp is not None:
                stats.steps.add((timestamp - stream.last_timestamp) & 0xFFFFFFFF)
            stream.last_timestamp = timestamp
            stream.address = address
            stats.frames += 1
            stats.arrivals.append(arrived)
            if opus == OPUS_SILENCE:
                stats.silence += 1
            else:
                stats.audio += 1
                stats.audio_arrivals.append(arrived)
            if opus.endswith(DAVE_MAGIC):
                stats.dave_frames += 1
