"""The voice gateway's words (v8): opcodes, close codes, encryption modes, and what the
server remembers of a join, a connection and an SSRC.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web

from .frames import FrameStats

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
class Stream:
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
class Session:
    """One voice websocket connection."""

    guild_id: int
    ws: web.WebSocketResponse
    ssrc: int = 0
    seq: int = 0  # last sequence number the server sent
    seq_ack: int = -1  # last one the client acknowledged
    identified: bool = False
    key: bytes | None = field(default=None, repr=False)
    dave_key_package: bytes = field(default=b"", repr=False)  # the last op 26 it sent
