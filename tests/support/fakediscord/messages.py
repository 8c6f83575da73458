"""Routes that create, read, edit and delete messages: a channel's messages (with nonces and
history), interaction callbacks and interaction webhooks (follow-ups, @original).
"""

from __future__ import annotations

import time
from typing import Any

from aiohttp import web

from .. import discord_rules as rules
from .objects import Guild, Interaction, Recorded, snowflake
from .payloads import Payloads
from .wire import form_error, json_response


class Messages(Payloads):
    """Channel messages, interaction callbacks and webhook messages."""

    def _channel_messages(
        self, channel_id: int, message_id: str | None, r: Recorded
    ) -> web.Response:
        if channel_id in self.missing_access:
            return json_response(rules.missing_access().body, 403)
        if not self._known_channel(channel_id):
            return json_response({"message": "Unknown Channel", "code": 10003}, 404)
        if message_id is None and r.method == "POST":
            return self._post_with_nonce(channel_id, r.json or {})
        if message_id is None and r.method == "GET":
            return self._history(channel_id, r.query)
        mid = int(message_id or 0)
        if mid not in self.messages:
            return json_response({"message": "Unknown Message", "code": 10008}, 404)
        if r.method == "PATCH":
            self._edit(mid, r.json)
            return json_response(self.messages[mid])
        if r.method == "DELETE":
            self.messages.pop(mid, None)
            if mid in self.channel_messages[channel_id]:
                self.channel_messages[channel_id].remove(mid)
            return web.Response(status=204)
        if r.method == "GET":
            return json_response(self.messages[mid])
        return json_response({"message": "405", "code": 0}, 405)

    def _history(self, channel_id: int, query: dict[str, str]) -> web.Response:
        """GET a channel's messages as Discord answers it: newest first, without ephemeral
        replies; ``limit`` 1-100 (default 50); ``after`` takes the oldest ``limit`` newer than
        it, ``before`` (or nothing) the newest older than it."""
        try:
            limit = int(query.get("limit", "50"))
            after = int(query["after"]) if "after" in query else None
            before = int(query["before"]) if "before" in query else None
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            return form_error("limit", "NUMBER_TYPE_MAX", "Must be between 1 and 100.")
        # Ephemeral replies belong to the one user who got them: Discord never lists them in
        # the channel (a card that is still the newest message stays so after one).
        ids = [
            i
            for i in self.channel_messages[channel_id]
            if not int(self.messages.get(i, {}).get("flags") or 0) & 64
        ]
        if after is not None:
            chosen = [i for i in ids if i > after][:limit]
        else:
            chosen = [i for i in ids if before is None or i < before][-limit:]
        return json_response([self.messages[i] for i in reversed(chosen)])

    async def set_bot_overwrite(
        self, guild: Guild, channel_id: int, *, allow: int = 0, deny: int = 0
    ) -> None:
        """An admin sets the bot's own overwrite on a text channel (both 0: removes it):
        Discord enforces it from then on and sends CHANNEL_UPDATE, which discord.py folds into
        ``channel.permissions_for(guild.me)``."""
        mine = str(self.bot_id)
        kept = [o for o in guild.channel_overwrites.get(channel_id, []) if o["id"] != mine]
        if allow or deny:
            kept.append({"id": mine, "type": 1, "allow": str(allow), "deny": str(deny)})
        guild.channel_overwrites[channel_id] = kept
        position = guild.channels.index(channel_id)
        await self.dispatch("CHANNEL_UPDATE", self._channel(guild, channel_id, position))

    def _post_with_nonce(self, channel_id: int, body: dict[str, Any]) -> web.Response:
        """Create a message, honouring Discord's nonce: an integer or a string of at most 25
        characters (else 400, 50035); with ``enforce_nonce`` the same author sending the same
        nonce within a few minutes gets the first message back instead of a second one."""
        nonce = body.get("nonce")
        if nonce is not None and (
            isinstance(nonce, bool)
            or not isinstance(nonce, int | str)
            or (isinstance(nonce, str) and len(nonce) > 25)
        ):
            return form_error("nonce", "BASE_TYPE_BAD_LENGTH", "Must be 25 or fewer in length.")
        key = (self.bot_id, str(nonce))
        first = self.nonces.get(key) if nonce is not None and body.get("enforce_nonce") else None
        fresh = first is not None and time.monotonic() - first[0] < self.nonce_window
        if first is not None and fresh and first[1] in self.messages:
            return json_response(self.messages[first[1]])
        data = self.message(channel_id, body)
        if nonce is not None:
            self.nonces[key] = (time.monotonic(), int(data["id"]))
        return json_response(data)

    def _edit(self, message_id: int, body: Any) -> None:
        editable = ("content", "embeds", "components")
        self.messages[message_id].update({k: v for k, v in (body or {}).items() if k in editable})

    def user_message(self, channel_id: int) -> dict[str, Any]:
        """Someone else writes in a channel (buries a card)."""
        data = self.message(channel_id, {"content": "chatter"})
        data["author"] = self.user(self.owner_id)
        return data

    def _callback(self, interaction_id: int, r: Recorded) -> web.Response:
        body = r.json or {}
        kind = body.get("type")
        data = body.get("data") or {}
        message_id = snowflake()
        resource: dict[str, Any] = {"type": kind}
        interaction = self.interactions.get(str(interaction_id))
        channel = self._answer_channel(interaction)
        updated = interaction.message_id if interaction is not None else None
        if kind == 7 and updated in self.messages:
            # UPDATE_MESSAGE edits the message the component is on (only what the body names).
            assert updated is not None
            self._edit(updated, data)
            resource["message"] = self.messages[updated]
            self._originals[str(interaction_id)] = updated
            return json_response(
                self._callback_answer(interaction_id, kind, data, updated, resource)
            )
        if kind in (4, 7):
            resource["message"] = self.message(channel, data, message_id=message_id, webhook=True)
        elif kind == 5:
            resource["message"] = self.message(
                channel,
                {"content": "", "flags": data.get("flags", 0)},
                message_id=message_id,
                webhook=True,
                flags=128,
            )
        self._originals[str(interaction_id)] = message_id
        return json_response(
            self._callback_answer(interaction_id, kind, data, message_id, resource)
        )

    def _callback_answer(
        self,
        interaction_id: int,
        kind: Any,
        data: dict[str, Any],
        message_id: int,
        resource: dict[str, Any],
    ) -> dict[str, Any]:
        interaction = self.interactions.get(str(interaction_id))
        return {
            "interaction": {
                "id": str(interaction_id),
                "type": interaction.kind if interaction is not None else 2,
                "response_message_id": str(message_id),
                "response_message_loading": kind == 5,
                "response_message_ephemeral": bool(int(data.get("flags", 0) or 0) & 64),
            },
            "resource": resource,
        }

    def _answer_channel(self, interaction: Interaction | None) -> int:
        """Where an interaction's answers show: its own channel (a DM too), else the first."""
        if interaction is not None and interaction.channel_id:
            return interaction.channel_id
        return self.guilds[0].channels[0]

    def _webhook(self, token: str, message: str | None, r: Recorded) -> web.Response:
        interaction_id = token.removeprefix("itoken-")
        channel = self._answer_channel(self.interactions.get(interaction_id))
        if message is None and r.method == "POST":
            return json_response(self.message(channel, r.json or {}, webhook=True))
        mid = self._originals.get(interaction_id) if message == "@original" else int(message or 0)
        if mid is None or mid not in self.messages:
            return json_response({"message": "Unknown Message", "code": 10008}, 404)
        if r.method == "PATCH":
            self._edit(mid, r.json)
        if r.method == "DELETE":
            self.messages.pop(mid, None)
            return web.Response(status=204)
        return json_response(self.messages[mid])
