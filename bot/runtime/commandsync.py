"""Registering the slash commands only when they changed.

Discord rate-limits command registration, and a global sync at every start is wasted work: the
hash of the payload ``tree.sync`` would send (with the application and the target guild) is kept
in a small state file next to the SQLite database, and ``run`` syncs only when it differs.
``onair sync`` always syncs and records the hash.
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


def fingerprint(tree: app_commands.CommandTree[Any], guild_id: int, application_id: int) -> str:
    guild = discord.Object(guild_id) if guild_id else None
    payload = [command.to_dict(tree) for command in tree.get_commands(guild=guild)]
    blob = json.dumps(
        {"application": application_id, "guild": guild_id, "commands": payload},
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


async def sync_commands(
    client: discord.Client,
    tree: app_commands.CommandTree[Any],
    guild_id: int,
    *,
    state: Path | None,
    force: bool = False,
) -> list[app_commands.AppCommand] | None:
    """Sync globally (``guild_id`` 0) or to one guild; None when skipped as unchanged."""
    guild = discord.Object(guild_id) if guild_id else None
    if guild is not None:
        tree.copy_global_to(guild=guild)
    digest = fingerprint(tree, guild_id, client.application_id or 0)
    if not force and state is not None and await asyncio.to_thread(_read, state) == digest:
        return None
    synced = await tree.sync(guild=guild)
    if state is not None:
        await asyncio.to_thread(_write, state, digest)
    return synced
