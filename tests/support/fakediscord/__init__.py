"""A wire-level fake Discord (REST + gateway) on loopback, for the real discord.py client.

discord.py runs untouched: a custom resolver sends discord.com, gateway.discord.gg and
cdn.discordapp.com to this server (every other name is refused), and TLS is real, with a
throw-away CA from trustme. Every request is recorded; unknown routes answer 404 and are recorded
too. The fake can inject slash commands, autocomplete and component clicks, emulate rate limits
(per-route buckets, a global limit, 5 messages per 5 s per channel), inject 403/404/5xx answers,
and send RECONNECT or INVALID_SESSION on the gateway.

It is as strict as Discord: every request body is checked against Discord's documented shapes and
limits (tests/support/discord_rules) and a violation is answered as Discord answers it (400,
code 50035 with the errors by field path; 50006 for an empty message; 40060 for a second answer
to one interaction), so discord.py raises ``HTTPException`` and the bot's own error paths run.

When ``ONAIR_FAKE_DISCORD_RECORD`` names a file, every recorded request is also appended to it as
one JSON line in the input shape of the discord-look tool (method, path, json, files, at, command,
user, response_id).

The parts, one job each (docs/development.md draws them): ``objects`` (what it keeps), ``wire``
(HTTP answers, route patterns, fake DNS), ``state``, ``payloads``, ``gateway``, ``voice``,
``stages``, ``events``, ``interactions``, ``messages``, ``limits``, ``validation``,
``recording``, and ``server`` (``FakeDiscord``, which puts them together).
"""

from .objects import (
    CONNECT,
    CREATE_EVENTS,
    DISCORD_EPOCH_MS,
    MANAGE_CHANNELS,
    MANAGE_EVENTS,
    MUTE_MEMBERS,
    RECORD_ENV,
    REQUEST_TO_SPEAK,
    SET_VOICE_CHANNEL_STATUS,
    SPEAK,
    STAGE_MODERATOR,
    VIEW_CHANNEL,
    Elsewhere,
    Guild,
    Recorded,
    snowflake,
)
from .server import FakeDiscord
from .wire import FakeResolver

__all__ = [
    "CONNECT",
    "CREATE_EVENTS",
    "DISCORD_EPOCH_MS",
    "MANAGE_CHANNELS",
    "MANAGE_EVENTS",
    "MUTE_MEMBERS",
    "RECORD_ENV",
    "REQUEST_TO_SPEAK",
    "SET_VOICE_CHANNEL_STATUS",
    "SPEAK",
    "STAGE_MODERATOR",
    "VIEW_CHANNEL",
    "Elsewhere",
    "FakeDiscord",
    "FakeResolver",
    "Guild",
    "Recorded",
    "snowflake",
]
