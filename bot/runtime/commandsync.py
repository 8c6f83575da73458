"""Registering the slash commands only when they changed.

Discord rate-limits command registration, and a global sync at every start is wasted work: the
hash of the payload ``tree.sync`` would send (with the application and the target guild) is kept
in a small state file next to the SQLite database, and ``run`` syncs only when it differs.
``onair sync`` always syncs and records the hash.

Discord refuses the whole sync when a command names an install type the application does not
support, and applications made before mid-2024 (or whose owner never ticked User Install in
the Developer Portal) support server installs only: the commands a listener may use anywhere
are then registered for servers only, and the hash says which was chosen.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import discord
from discord import app_commands

from ..config import Settings

_LOGGER = logging.getLogger("onair.sync")


def state_path(settings: Settings) -> Path | None:
    """``onair.sqlite3`` -> ``onair.sqlite3.commands``; None for an in-memory database."""
    path = settings.database_path
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    file = Path(path)
    return file.with_name(file.name + ".commands")


USER_INSTALL_OFF = (
    "User Install is off for this application in the Discord Developer Portal: %s are "
    "registered for servers only. To offer them on listeners' own accounts, tick User "
    "Install (Developer Portal -> your application -> Installation -> Installation Contexts), "
    "then run `onair sync` or restart OnAir"
)


def fingerprint(
    tree: app_commands.CommandTree[Any],
    guild_id: int,
    application_id: int,
    *,
    user_install: bool = True,
) -> str:
    guild = discord.Object(guild_id) if guild_id else None
    payload = [command.to_dict(tree) for command in tree.get_commands(guild=guild)]
    blob = json.dumps(
        {
            "application": application_id,
            "guild": guild_id,
            "user_install": user_install,
            "commands": payload,
        },
        sort_keys=True,
        separators=(",", ":"),
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _write(path: Path, digest: str) -> None:
    try:
        path.write_text(digest + "\n", encoding="ascii")
    except OSError as error:
        _LOGGER.warning("could not record the command sync in %s: %s", path, error.strerror)


async def user_install_on(client: discord.Client) -> bool:
    """Whether the application supports user installs: its ``integration_types_config`` has
    the user install type (read at login; fetched if not)."""
    app = client.application or await client.application_info()
    return app.user_integration_config is not None


def servers_only(tree: app_commands.CommandTree[Any]) -> list[str]:
    """Register every global command that also offers a user install as the tree's default
    (servers only, used in their channels); the names of those changed."""
    changed = []
    for command in tree.get_commands():
        installs = command.allowed_installs
        if installs is not None and installs.user:
            command.allowed_installs = None
            command.allowed_contexts = None
            changed.append(command.name)
    return changed


async def sync_commands(
    client: discord.Client,
    tree: app_commands.CommandTree[Any],
    guild_id: int,
    *,
    state: Path | None,
    force: bool = False,
) -> list[app_commands.AppCommand] | None:
    """Sync globally (``guild_id`` 0) or to one guild; None when skipped as unchanged. Without
    user installs on the application, every command is registered for servers only (and one
    line says how to turn them on)."""
    user_install = await user_install_on(client)
    narrowed = [] if user_install else servers_only(tree)
    guild = discord.Object(guild_id) if guild_id else None
    if guild is not None:
        tree.copy_global_to(guild=guild)
    digest = fingerprint(tree, guild_id, client.application_id or 0, user_install=user_install)
    if not force and state is not None and await asyncio.to_thread(_read, state) == digest:
        return None
    if narrowed:
        _LOGGER.warning(USER_INSTALL_OFF, ", ".join(f"/{name}" for name in narrowed))
    synced = await tree.sync(guild=guild)
    if state is not None:
        await asyncio.to_thread(_write, state, digest)
    return synced
