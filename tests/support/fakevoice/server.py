"""The fake voice server: its lifecycle, what the main gateway tells it (``expect``), what tests
read from it, and the voice websocket (v8): IDENTIFY, RESUME, heartbeats, SELECT_PROTOCOL.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import secrets
import socket
import ssl
import struct
import threading
from typing import Any

import aiohttp
import trustme
from aiohttp import web

from ..outage import Outage
from .dave import COMMIT_WELCOME, INVALID_COMMIT_WELCOME, TRANSITION_READY, DaveCall, DaveSide
from .frames import FrameStats
from .mls import ExternalSender
from .protocol import (
    ALREADY_AUTHENTICATED,
    AUTHENTICATION_FAILED,
    BINARY_CLIENT_OPS,
    CLIENT_OPS,
    DECODE_ERROR,
    DISCONNECTED,
    E2EE_REQUIRED,
    HEARTBEAT,
    HEARTBEAT_ACK,
    HEARTBEAT_INTERVAL_MS,
    HELLO,
    IDENTIFY,
    MODE,
    MODES,
    NOT_AUTHENTICATED,
    READY,
    RESUME,
    RESUMED,
    SELECT_PROTOCOL,
    SERVER_NOT_FOUND,
    SESSION_DESCRIPTION,
    SESSION_INVALID,
    SPEAKING,
    UNKNOWN_ENCRYPTION_MODE,
    UNKNOWN_OPCODE,
    UNKNOWN_PROTOCOL,
    Expected,
    Session,
    Stream,
)
from .udp import SO_RCVBUFFORCE, SO_TIMESTAMPNS, UdpSide


class FakeVoiceServer(UdpSide, DaveSide):
    """Discord's voice server on 127.0.0.1: a TLS websocket (v8) and a UDP port."""

    def __init__(
        self,
        ca: trustme.CA,
        *,
        dave_version: int = 1,
        rtcp_interval: float | None = 1.0,
        outage: Outage | None = None,
    ) -> None:
        self.ca = ca
        self.outage = outage or Outage()  # the fake Discord's: silent with its gateway
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
        self._sessions: dict[int, Session] = {}  # guild → current connection
        self._streams: dict[int, Stream] = {}  # ssrc → counters
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
        # UDP is lossy: this many IP discovery answers are lost on the way (each one taken).
        self.lose_discovery_answers = 0
        # DAVE: the gateway's MLS external sender, and each guild's call (its listeners).
        self._external = ExternalSender()
        self.dave_calls: dict[int, DaveCall] = {}
        self._transition_ids = itertools.count(1)

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

    def expect(self, guild_id: int, user_id: int, session_id: str, channel_id: int) -> str:
        """Register a join (op 4 answered); returns the new voice token for VOICE_SERVER_UPDATE."""
        token = secrets.token_hex(12)
        self._expected[guild_id] = Expected(user_id, session_id, token, channel_id)
        self._issued.append(("token", token))
        return token

    def forget(self, guild_id: int) -> None:
        """The bot left voice in that guild: its token is no longer valid."""
        self._expected.pop(guild_id, None)

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

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(timeout=1.0, max_msg_size=1 << 16)
        await ws.prepare(request)
        self.outage.watch(request.transport)
        self.connections += 1
        session = Session(0, ws)
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

    async def _send(self, session: Session, op: int, data: Any, *, seq: bool = True) -> None:
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

    async def _refuse(self, session: Session, code: int, why: str) -> None:
        self.violations.append(why)
        self.closes.append((session.guild_id, code))
        await session.ws.close(code=code)

    def _record(self, session: Session, op: int) -> None:
        if session.guild_id:
            self._seen.setdefault(session.guild_id, []).append(op)

    async def _text(self, session: Session, raw: str) -> None:
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
        elif op == TRANSITION_READY:
            await self._dave_ready(session, data)
        elif op == INVALID_COMMIT_WELCOME:
            self.violations.append("op 31: the client found a DAVE commit or welcome invalid")
        elif op not in CLIENT_OPS or op in BINARY_CLIENT_OPS:
            await self._refuse(session, UNKNOWN_OPCODE, f"unknown voice opcode {op}")

    async def _binary(self, session: Session, raw: bytes) -> None:
        if not raw or not session.identified:
            await self._refuse(session, NOT_AUTHENTICATED, "binary frame before IDENTIFY")
            return
        op = raw[0]
        self._record(session, op)
        if op not in BINARY_CLIENT_OPS or len(raw) < 2:
            await self._refuse(session, UNKNOWN_OPCODE, f"unknown binary voice opcode {op}")
        elif op == 26:
            self.key_packages[session.guild_id] = self.key_packages.get(session.guild_id, 0) + 1
            expected = self._expected.get(session.guild_id)
            if self.dave_version and expected is not None:
                await self._dave_key_package(session, expected.user_id, raw[1:])
        elif op == COMMIT_WELCOME:
            await self._dave_commit(session, raw[1:])

    async def _authenticate(self, session: Session, op: int, data: Any) -> None:
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
                self._streams[session.ssrc] = Stream(guild_id)
            await self._send(
                session,
                READY,
                {"ssrc": session.ssrc, "ip": "127.0.0.1", "port": self.udp_port, "modes": MODES},
            )

    async def _heartbeat(self, session: Session, data: Any) -> None:
        if not isinstance(data, dict) or not isinstance(data.get("t"), int):
            await self._refuse(session, DECODE_ERROR, "HEARTBEAT without t")
            return
        ack = data.get("seq_ack")
        if not isinstance(ack, int) or not -1 <= ack <= session.seq:
            self.violations.append(f"seq_ack {ack!r} outside -1..{session.seq}")
        else:
            session.seq_ack = ack
        await self._send(session, HEARTBEAT_ACK, {"t": data["t"]}, seq=False)

    async def _select_protocol(self, session: Session, data: Any) -> None:
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
