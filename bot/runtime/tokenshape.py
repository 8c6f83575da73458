"""Whether a value can be a Discord bot token, checked before anything connects: a value that
cannot be one would otherwise be retried for ever while Discord is unreachable. A bot token is
three base64url parts joined by dots, the first the bot's user id in base64 (the application id
that ``onair invite`` reads from it). Only the shape is checked, and leniently (no lengths, the
standard base64 alphabet and padding allowed too): Discord alone says whether a token is valid.
No message quotes the token or any part of it."""

from __future__ import annotations

import re

from .invite import client_id_from_token

_PART = re.compile(r"[A-Za-z0-9_\-+/=]+")
RESET_WHERE = "Developer Portal -> your application -> Bot -> Reset Token"


def token_problem(token: str) -> str | None:
    """Why ``token`` cannot be a bot token, in words; None when it has a bot token's shape."""
    value = token.strip()
    if value.lower().startswith("bot "):
        return "it starts with 'Bot ': give the token alone"
    parts = value.split(".")
    if len(parts) != 3 or not all(_PART.fullmatch(part) for part in parts):
        return "a bot token is three parts of letters and digits joined by dots, and this is not"
    if client_id_from_token(value) is None:
        return "its first part is not a bot's id in base64, as a bot token's is"
    return None


def token_problem_line(variable: str, problem: str) -> str:
    """The one line for a token that cannot be one: the variable, why, and where to get one."""
    return f"{variable} cannot be a bot token ({problem}); copy the bot's token ({RESET_WHERE})"
