"""Interactions a test sends to the bot (slash commands, autocomplete, clicks, select menus,
modal submits) and what the bot answered to them.
"""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

from .. import discord_rules as rules
from .objects import Elsewhere, Guild, Interaction, Recorded, snowflake
from .payloads import Payloads


class Who(TypedDict, total=False):
    """Who uses a component, in a test: the member (default the owner) and the guild (default
    the first)."""

    user_id: int | None
    guild: Guild | None
    where: Elsewhere | None


class Interactions(Payloads):
    """Injects interactions and finds their answers."""

    def _interaction(
        self,
        kind: int,
        data: dict[str, Any],
        *,
        guild: Guild | None,
        channel_id: int | None,
        user_id: int | None,
        permissions: int,
        message: dict[str, Any] | None = None,
        where: Elsewhere | None = None,
    ) -> dict[str, Any]:
        if where is not None:
            return self._personal_interaction(kind, data, where, user_id, permissions, message)
        guild = guild or self.guilds[0]
        channel_id = channel_id or guild.channels[0]
        user_id = user_id or self.owner_id
        iid = snowflake()
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.app_id),
            "type": kind,
            "token": f"itoken-{iid}",
            "version": 1,
            "guild_id": str(guild.id),
            "channel_id": str(channel_id),
            "channel": self._channel(guild, channel_id, 0),
            "member": {
                "user": self.user(user_id, self.user_names.get(user_id, "listener")),
                "roles": [str(r) for r in self.member_roles.get(user_id, ())],
                "permissions": str(permissions),
                "joined_at": "2026-01-01T00:00:00+00:00",
                "deaf": False,
                "mute": False,
                "flags": 0,
            },
            "data": data,
            "app_permissions": "1071698660929",
            "locale": self.user_locales.get(user_id, "en-US"),
            "guild_locale": guild.preferred_locale,
            "entitlements": [],
            "authorizing_integration_owners": {"0": str(guild.id)},
            "context": 0,
            "attachment_size_limit": 8 * 1024 * 1024,
        }
        if message is not None:
            payload["message"] = message
        self.interactions[str(iid)] = Interaction(
            kind, "listener", message_id=int(message["id"]) if message is not None else None
        )
        return payload

    def elsewhere(self, context: int, *, guild_locale: str = "en-US") -> Elsewhere:
        """A place OnAir is used from a user install: context 1 a DM with OnAir's bot, 2 a DM
        of others, 0 a server OnAir is not in. Its channel (and guild) are out of the bot's
        reach by REST, except its own DM."""
        where = Elsewhere(
            context,
            snowflake(),
            snowflake() if context == rules.GUILD_CONTEXT else 0,
            guild_locale,
        )
        if context != rules.BOT_DM:
            self.missing_access.add(where.channel_id)
        return where

    def _personal_interaction(
        self,
        kind: int,
        data: dict[str, Any],
        where: Elsewhere,
        user_id: int | None,
        permissions: int,
        message: dict[str, Any] | None,
    ) -> dict[str, Any]:
        """An interaction from OnAir installed on the user's own account, shaped as Discord's:
        ``authorizing_integration_owners`` {"1": the user}, ``context``; in a DM ``user`` and a
        DM channel, no ``guild_id`` or ``member``; in a server OnAir is not in ``guild_id``, a
        partial ``guild`` and ``member``, and limited ``app_permissions``."""
        user_id = user_id or self.owner_id
        user = self.user(user_id, self.user_names.get(user_id, "listener"))
        iid = snowflake()
        in_guild = where.context == rules.GUILD_CONTEXT
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.app_id),
            "type": kind,
            "token": f"itoken-{iid}",
            "version": 1,
            "channel_id": str(where.channel_id),
            "data": data,
            "locale": self.user_locales.get(user_id, "en-US"),
            "entitlements": [],
            "authorizing_integration_owners": {str(rules.USER_INSTALL): str(user_id)},
            "context": where.context,
            "attachment_size_limit": 8 * 1024 * 1024,
        }
        if in_guild:
            payload["guild_id"] = str(where.guild_id)
            payload["guild"] = {
                "id": str(where.guild_id),
                "locale": where.guild_locale,
                "features": [],
            }
            payload["guild_locale"] = where.guild_locale
            payload["channel"] = {
                "id": str(where.channel_id),
                "type": 0,
                "guild_id": str(where.guild_id),
                "name": "elsewhere",
                "position": 0,
                "nsfw": False,
                "parent_id": None,
                "flags": 0,
                "permissions": str(permissions),
            }
            payload["member"] = {
                "user": user,
                "roles": [],
                "permissions": str(permissions),
                "joined_at": "2026-01-01T00:00:00+00:00",
                "deaf": False,
                "mute": False,
                "flags": 0,
            }
            payload["app_permissions"] = str(rules.PRIVATE_APP_PERMISSIONS)
        else:
            payload["user"] = user
            payload["channel"] = {
                "id": str(where.channel_id),
                "type": 1,
                "last_message_id": None,
                "flags": 0,
                "recipients": [user],
            }
            payload["app_permissions"] = str(
                rules.BOT_DM_APP_PERMISSIONS
                if where.context == rules.BOT_DM
                else rules.PRIVATE_APP_PERMISSIONS
            )
        if message is not None:
            payload["message"] = message
        self.interactions[str(iid)] = Interaction(
            kind,
            "listener",
            message_id=int(message["id"]) if message is not None else None,
            channel_id=where.channel_id,
        )
        return payload

    def pending_interaction(self, kind: int = 2, guild: Guild | None = None) -> str:
        """An interaction of ``kind`` the bot never sees: for posting callbacks by hand."""
        data = {"id": "0", "name": "test", "type": 1} if kind in (2, 4) else {"custom_id": "x"}
        payload = self._interaction(
            kind, data, guild=guild, channel_id=None, user_id=None, permissions=0
        )
        return str(payload["id"])

    def _offered(self, name: str, where: Elsewhere | None) -> dict[str, Any]:
        """The synced command ``name``, which Discord's client offers where it is used (a user
        install ``where``, else the server that installed OnAir)."""
        command = self._command(name)
        if where is not None:
            usable = rules.offered(command, install=rules.USER_INSTALL, context=where.context)
            assert usable, f"/{name} is not offered to a user install in context {where.context}"
        return command

    def _command(self, name: str) -> dict[str, Any]:
        for command in self.commands:
            if command["name"] == name:
                return command
        raise AssertionError(
            f"command /{name} was not synced; synced: {[c['name'] for c in self.commands]}"
        )

    async def slash(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        sub: list[str] | None = None,
        guild: Guild | None = None,
        channel_id: int | None = None,
        user_id: int | None = None,
        permissions: int = 0x6FFFFFFFF,
        resolved: dict[str, Any] | None = None,
        where: Elsewhere | None = None,
    ) -> str:
        """Inject a slash command (from a user install ``where`` it says); returns the
        interaction id. Only a command Discord offers there can be used."""
        command = self._offered(name, where)
        built = [
            {"name": key, "type": _option_type(command, sub, key), "value": value}
            for key, value in (options or {}).items()
        ]
        for part in reversed(sub or []):
            built = [{"name": part, "type": 1, "options": built}]
        data: dict[str, Any] = {"id": command["id"], "name": name, "type": 1, "options": built}
        if resolved:
            data["resolved"] = resolved
        payload = self._interaction(
            2,
            data,
            guild=guild,
            channel_id=channel_id,
            user_id=user_id,
            permissions=permissions,
            where=where,
        )
        words = [f"/{name}", *(sub or []), *(f"{k}:{v}" for k, v in (options or {}).items())]
        self.interactions[payload["id"]].command = " ".join(words)
        await self.dispatch("INTERACTION_CREATE", payload)
        return str(payload["id"])

    async def autocomplete(
        self,
        name: str,
        focused: str,
        value: str,
        others: dict[str, Any] | None = None,
        *,
        guild: Guild | None = None,
        user_id: int | None = None,
        sub: list[str] | None = None,
        where: Elsewhere | None = None,
    ) -> str:
        command = self._offered(name, where)
        options = [
            {"name": k, "type": _option_type(command, None, k), "value": v}
            for k, v in (others or {}).items()
        ]
        options.append({"name": focused, "type": 3, "value": value, "focused": True})
        for part in reversed(sub or []):
            options = [{"name": part, "type": 1, "options": options}]
        data = {"id": command["id"], "name": name, "type": 1, "options": options}
        payload = self._interaction(
            4, data, guild=guild, channel_id=None, user_id=user_id, permissions=0, where=where
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return str(payload["id"])

    async def click(self, message: dict[str, Any], custom_id: str, **who: Unpack[Who]) -> str:
        data = {"custom_id": custom_id, "component_type": 2}
        return await self._component_used(message, data, **who)

    async def _component_used(
        self, message: dict[str, Any], data: dict[str, Any], **who: Unpack[Who]
    ) -> str:
        """A component interaction (type 3) on ``message``, dispatched; its id."""
        payload = self._interaction(
            3,
            data,
            guild=who.get("guild"),
            channel_id=int(message["channel_id"]),
            user_id=who.get("user_id"),
            permissions=0,
            message=message,
            where=who.get("where"),
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return str(payload["id"])

    async def choose(
        self, message: dict[str, Any], custom_id: str, values: list[str], **who: Unpack[Who]
    ) -> str:
        """Pick ``values`` in the message's string select ``custom_id``, as the client does: it
        offers only the menu's own options, between its min_values and max_values of them."""
        menus = [
            component
            for row in message.get("components") or []
            for component in row.get("components") or []
            if component.get("custom_id") == custom_id
        ]
        assert menus, f"no component {custom_id!r} in the message"
        menu = menus[0]
        assert menu.get("type") == rules.STRING_SELECT, f"{custom_id!r} is not a string select"
        offered = [option["value"] for option in menu.get("options") or []]
        assert all(value in offered for value in values), f"{values} not among {offered}"
        low, high = menu.get("min_values", 1), menu.get("max_values", 1)
        assert low <= len(values) <= high, f"{len(values)} values; the menu takes {low}-{high}"
        data = {"custom_id": custom_id, "component_type": rules.STRING_SELECT, "values": values}
        return await self._component_used(message, data, **who)

    async def submit_modal(
        self,
        custom_id: str,
        values: dict[str, str],
        *,
        user_id: int | None = None,
        guild: Guild | None = None,
        permissions: int = 0x6FFFFFFFF,
    ) -> str:
        """Inject a MODAL_SUBMIT (type 5) with the given text input values."""
        rows = [
            {"type": 1, "components": [{"type": 4, "custom_id": key, "value": value}]}
            for key, value in values.items()
        ]
        payload = self._interaction(
            5,
            {"custom_id": custom_id, "components": rows},
            guild=guild,
            channel_id=None,
            user_id=user_id,
            permissions=permissions,
        )
        await self.dispatch("INTERACTION_CREATE", payload)
        return str(payload["id"])

    async def response(self, interaction_id: str, within: float = 10.0) -> Recorded:
        hits = await self.wait_request("POST", rf"^/interactions/{interaction_id}/", within=within)
        return hits[0]

    async def final_message(self, interaction_id: str, within: float = 10.0) -> dict[str, Any]:
        """The message a command ended with: its callback message, or the follow-up to a defer."""
        callback = await self.response(interaction_id, within)
        body = callback.json or {}
        if body.get("type") == 4:
            return dict(body["data"])
        if body.get("type") == 5:
            hits = await self.wait_request(
                "POST", rf"^/webhooks/{self.app_id}/itoken-{interaction_id}", within=within
            )
            return dict(hits[0].json)
        return body

    def original(self, interaction_id: str) -> dict[str, Any]:
        """The stored message that answered an interaction (as Discord would return it)."""
        return self.messages[self._originals[str(interaction_id)]]


def _option_type(command: dict[str, Any], sub: list[str] | None, name: str) -> int:
    options = command.get("options") or []
    for part in sub or []:
        options = next((o.get("options") or [] for o in options if o["name"] == part), [])
    for option in options:
        if option["name"] == name:
            return int(option["type"])
    raise AssertionError(f"option {name!r} not in command {command['name']}")
