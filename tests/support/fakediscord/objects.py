"""What the fake Discord keeps: ids, permission bits, and the guilds, channels, interactions
and requests it remembers (plain data; no behaviour beyond a property or two).
"""

from __future__ import annotations

import itertools
import re
import time
from dataclasses import dataclass, field
from typing import Any

from .. import discord_rules as rules

DISCORD_EPOCH_MS = 1420070400000
RECORD_ENV = "ONAIR_FAKE_DISCORD_RECORD"
_counter = itertools.count(1)


# Permission bits the voice side checks (Discord's values).
VIEW_CHANNEL = 1 << 10
CONNECT = 1 << 20
SPEAK = 1 << 21
MUTE_MEMBERS = 1 << 22
REQUEST_TO_SPEAK = 1 << 32
MANAGE_CHANNELS = 1 << 4
MOVE_MEMBERS = 1 << 24
STAGE_MODERATOR = MANAGE_CHANNELS | MUTE_MEMBERS | MOVE_MEMBERS  # Discord's three, in the stage
SET_VOICE_CHANNEL_STATUS = rules.SET_VOICE_CHANNEL_STATUS
MANAGE_EVENTS = rules.MANAGE_EVENTS
CREATE_EVENTS = rules.CREATE_EVENTS
GUILD_VOICE_STATES = 1 << 7  # the gateway intent
EVERYONE_PERMISSIONS = 1071698660929  # @everyone's: view, connect, speak, request to speak; no mute


def snowflake() -> int:
    """A realistic id: its timestamp part is now."""
    return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) | (next(_counter) % 4096)


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any = None
    files: list[tuple[str, str, bytes]] = field(default_factory=list)
    status: int = 0
    at: float = 0.0
    wall: float = 0.0  # time.time() of the request, for the JSONL recording
    response: Any = None  # the JSON the fake answered

    @property
    def filenames(self) -> list[str]:
        return [name for _, name, _ in self.files]

    @property
    def route(self) -> str:
        return self.path.removeprefix("/api/v10")


@dataclass
class Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    code: int
    message: str
    times: int | None


@dataclass
class Throttle:
    """The next `times` requests matching answer 429, as Discord's limiter does."""

    method: str
    pattern: re.Pattern[str]
    times: int
    retry_after: float
    is_global: bool


@dataclass
class Interaction:
    """What the fake remembers of an interaction it sent: its type and who invoked what."""

    kind: int
    user: str
    command: str = ""
    acknowledged: bool = False
    message_id: int | None = None  # the message a component interaction came from
    channel_id: int = 0  # where its answer is shown (0: the first guild's first channel)
    created: float = field(default_factory=time.monotonic)


@dataclass
class VoiceChannel:
    """A voice (type 2) or stage (type 13) channel; ``overwrites`` in Discord's shape."""

    id: int
    name: str
    stage: bool = False
    overwrites: list[dict[str, Any]] = field(default_factory=list)
    status: str | None = None  # a voice channel's status (the sidebar line under its name)
    topic: str | None = None  # a stage's open stage instance's topic (None: no instance)
    status_by: str = ""  # who set the status last: "bot" or "person" (tests)


@dataclass
class Guild:
    id: int
    name: str
    channels: list[int]
    roles: list[int] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)
    voice_channels: list[VoiceChannel] = field(default_factory=list)
    # user id → that user's voice state (Discord's payload without ``member``)
    voice_states: dict[int, dict[str, Any]] = field(default_factory=dict)
    member_names: dict[int, str] = field(default_factory=dict)  # members seen in voice
    # @everyone's permissions; a test may take some away
    everyone_permissions: int = EVERYONE_PERMISSIONS
    # Guild-wide permissions of the bot's own role (e.g. CREATE_EVENTS), beyond @everyone's.
    bot_role_permissions: int = 0
    # A text channel's permission overwrites (Discord's shape), by channel id; its threads
    # follow the parent's.
    channel_overwrites: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    bot_role: int = 0  # its id, made with the guild
    # Scheduled events by id, in Discord's shape (what the GET routes answer).
    events: dict[int, dict[str, Any]] = field(default_factory=dict)
    # Discord gives a preferred locale to every guild ("en-US" unless a Community server chose).
    preferred_locale: str = "en-US"


@dataclass(frozen=True, slots=True)
class PresenceSent:
    """One op 3 the bot sent, as Discord received it: on which shard's gateway and when."""

    shard: int
    at: float  # time.monotonic() when the fake received it
    data: dict[str, Any]

    @property
    def activity(self) -> dict[str, Any] | None:
        activities = self.data.get("activities") or []
        return activities[0] if activities else None


@dataclass(frozen=True, slots=True)
class Elsewhere:
    """Where a listener uses OnAir installed on their own account (a user install): a DM with
    OnAir's bot (context 1), a DM or group DM of others (2), or a server OnAir is not in (0,
    ``guild_id`` set). OnAir can answer the interaction there and nothing more: the channel and
    the guild are out of its reach by REST (403, 50001 Missing Access) except its own DM."""

    context: int
    channel_id: int
    guild_id: int = 0
    guild_locale: str = "en-US"
