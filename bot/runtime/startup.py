"""Getting onto Discord: a capped backoff while Discord cannot be reached, each failure named in
one line (tracebacks only at DEBUG), and one line once the bot is ready."""

from __future__ import annotations

import logging
import random
import ssl

import aiohttp
import discord
from discord.ext import commands

from .invite import invite_url

_LOGGER = logging.getLogger("onair.startup")


# Gateway close codes that retrying cannot fix: bad token, bad shard, sharding required, bad API
# version, bad or disallowed intents.
_FATAL_CLOSE_CODES = frozenset({4004, 4010, 4011, 4012, 4013, 4014})


class Backoff:
    """Exponential delays with ±20 % jitter, capped; ``reset`` once connected."""

    def __init__(self, first: float = 2.0, cap: float = 120.0) -> None:
        self.first, self.cap = first, cap
        self.attempt = 0

    def next(self) -> float:
        delay = min(self.cap, self.first * 2.0**self.attempt)
        self.attempt += 1
        return delay * random.uniform(0.8, 1.2)  # jitter, not a secret

    def reset(self) -> None:
        self.attempt = 0


def connection_problem(error: BaseException) -> str | None:
    """What kept OnAir from reaching Discord, in words; None when ``error`` is not a network
    failure (a bug or a configuration problem, which retrying would not fix)."""
    if isinstance(error, aiohttp.ClientConnectorCertificateError):
        return f"TLS certificate of {error.host} not accepted ({error.certificate_error})"
    if isinstance(error, aiohttp.ClientConnectorSSLError | aiohttp.ClientSSLError | ssl.SSLError):
        return f"TLS handshake failed ({error})"
    if isinstance(error, aiohttp.ClientConnectorDNSError):
        return f"DNS lookup of {error.host} failed"
    if isinstance(error, aiohttp.ClientConnectorError):
        cause = error.os_error
        if isinstance(cause, ConnectionRefusedError):
            return f"connection to {error.host}:{error.port} refused"
        return f"cannot connect to {error.host}:{error.port} ({cause.strerror or cause})"
    if isinstance(error, TimeoutError):
        return "timed out"
    if isinstance(error, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError):
        return f"connection dropped ({error})"
    if isinstance(error, discord.DiscordServerError):
        return f"Discord answered {error.status}"
    if isinstance(error, discord.ConnectionClosed):
        if error.code in _FATAL_CLOSE_CODES:
            return None
        return f"the gateway closed the connection ({error.code})"
    if isinstance(error, discord.GatewayNotFound):
        return str(error)
    return None


def start_line(bot: discord.Client) -> str:
    user = bot.user
    name = f"{user} ({user.id})" if user else "?"
    guilds = len(bot.guilds)
    line = f"logged in as {name}, {guilds} guild{'s' if guilds != 1 else ''}"
    if bot.application_id:
        line += f"; invite: {invite_url(bot.application_id)}"
    return line


def announce_when_ready(bot: commands.Bot | commands.AutoShardedBot, backoff: Backoff) -> None:
    """Log the start line on the first READY (every shard ready) and reset the backoff."""
    logged = False

    async def on_ready() -> None:
        nonlocal logged
        backoff.reset()
        if not logged:
            logged = True
            _LOGGER.info("%s", start_line(bot))

    bot.add_listener(on_ready, "on_ready")
