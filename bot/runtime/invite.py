"""The bot's install URLs: to a server (the OAuth2 scopes and the channel permissions OnAir
really uses) and to a listener's own account (commands only: no bot, no permissions).

Each permission is listed with what it is for, so the manual (docs/setup.md), ``onair invite``
and the start-up line agree; the integer is computed from the flags, never typed by hand.
"""

from __future__ import annotations

import base64
import binascii

import discord

SCOPES = ("bot", "applications.commands")
USER_INSTALL = 1  # Discord's integration type of an app installed to a user's account
# Beside the user-install link: ``onair invite`` reads no more than an id, so it cannot ask
# Discord whether the application allows user installs; ``onair sync`` and the start-up sync do.
USER_INSTALL_NOTE = (
    "(Discord offers it only when User Install is ticked: Developer Portal -> your application "
    "-> Installation -> Installation Contexts; `onair sync` says when it is not.)"
)

# Permission flag name (discord.Permissions) -> what OnAir uses it for.
PERMISSIONS: dict[str, str] = {
    "view_channel": "see the announcement channels chosen with /onair announce",
    "send_messages": "post track announcements in those channels",
    "send_messages_in_threads": "post announcements when the chosen channel is a thread",
    "embed_links": "announcements are embeds (artwork, links, buttons)",
    "read_message_history": (
        "card mode looks at the channel's newest message to re-post a buried card"
    ),
    "connect": "join the voice or stage channel /join is used in",
    "speak": "play the station in that voice channel",
    "request_to_speak": "ask to speak on a stage when OnAir is not a stage moderator",
    "set_voice_channel_status": (
        "show what plays as the status of the voice channel OnAir plays in"
    ),
    "create_events": "make a server event for each live show, start it and end it (/onair events)",
    "send_polls": "post the song votes' polls (/onair vote)",
}


def permissions() -> discord.Permissions:
    return discord.Permissions(**dict.fromkeys(PERMISSIONS, True))


def invite_url(client_id: int) -> str:
    return discord.utils.oauth_url(client_id, permissions=permissions(), scopes=SCOPES)


def user_install_url(client_id: int) -> str:
    """Installs OnAir on the account of whoever opens it (integration type 1, USER_INSTALL):
    only ``applications.commands``, since a user install has no bot member and no permissions.
    Discord offers it only when the application has User Install turned on (docs/setup.md)."""
    return (
        f"https://discord.com/oauth2/authorize?client_id={client_id}"
        f"&integration_type={USER_INSTALL}&scope=applications.commands"
    )


def client_id_from_token(token: str) -> int | None:
    """A bot token's first segment is its user id in base64 (the bot's user id is the
    application id for every application made since 2019). None when it does not decode."""
    first = token.strip().split(".", 1)[0]
    try:
        text = base64.b64decode(first + "=" * (-len(first) % 4), validate=True).decode("ascii")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    return int(text) if text.isdigit() and 15 <= len(text) <= 21 else None
