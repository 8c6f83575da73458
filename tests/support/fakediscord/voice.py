"""Voice on the fake Discord: voice channels and members in them, the bot's op 4 (join, move,
leave), its permissions there, and a stage's suppress and request to speak.
"""

from __future__ import annotations

import secrets
from typing import Any

from aiohttp import web

from .. import discord_rules as rules
from .objects import (
    CONNECT,
    MUTE_MEMBERS,
    REQUEST_TO_SPEAK,
    VIEW_CHANNEL,
    Guild,
    VoiceChannel,
    snowflake,
)
from .payloads import Payloads
from .wire import json_response, refuse


class VoiceSide(Payloads):
    """Who is in which voice channel, and the bot joining, moving and leaving."""

    def add_voice_channel(
        self,
        guild: Guild,
        name: str = "Radio",
        *,
        stage: bool = False,
        bot_allow: int = 0,
        bot_deny: int = 0,
    ) -> int:
        """A voice (or stage) channel in ``guild``'s GUILD_CREATE (call before the bot starts).

        ``bot_allow``/``bot_deny`` become a member overwrite for the bot (e.g. ``bot_deny=CONNECT``
        or ``SPEAK``, ``bot_allow=MUTE_MEMBERS`` on a stage), which discord.py folds into
        ``channel.permissions_for(guild.me)`` and the fake enforces on op 4 and the stage route.
        """
        channel = VoiceChannel(snowflake(), name, stage)
        if bot_allow or bot_deny:
            channel.overwrites.append(
                {"id": str(self.bot_id), "type": 1, "allow": str(bot_allow), "deny": str(bot_deny)}
            )
        guild.voice_channels.append(channel)
        return channel.id

    @property
    def bot_voice(self) -> dict[int, int]:
        """guild id → the voice channel the bot is in (guilds where it is in none are absent)."""
        return {
            g.id: int(g.voice_states[self.bot_id]["channel_id"])
            for g in self.guilds
            if self.bot_id in g.voice_states
        }

    def bot_voice_state(self, guild: Guild) -> dict[str, Any] | None:
        """The bot's voice state in ``guild`` as Discord keeps it (suppress, request to speak)."""
        state = guild.voice_states.get(self.bot_id)
        return dict(state) if state is not None else None

    def bot_permissions(self, guild: Guild, channel_id: int) -> int:
        """The bot's permissions in a voice channel, computed as Discord does (base, overwrites)."""
        base = guild.everyone_permissions | guild.bot_role_permissions  # @everyone, own role
        channel = self._find_voice_channel(guild, channel_id)
        for overwrite in channel.overwrites if channel else []:
            if overwrite["id"] in (str(guild.id), str(self.bot_id)):
                base = (base & ~int(overwrite["deny"])) | int(overwrite["allow"])
        return base

    async def set_member_voice(
        self, guild: Guild, user_id: int, channel_id: int | None, *, name: str = "listener"
    ) -> None:
        """Put a (non-bot) member into a voice channel, move them, or take them out (None).

        Before READY this only shapes GUILD_CREATE (``voice_states`` and the member); after READY
        it dispatches VOICE_STATE_UPDATE with the member, as Discord does.
        """
        if user_id == self.bot_id:
            raise AssertionError("the bot joins voice itself (op 4)")
        if channel_id is None:
            state = guild.voice_states.pop(user_id, None)
            if state is None:
                return
            state = {**state, "channel_id": None}
        else:
            channel = self._find_voice_channel(guild, channel_id)
            if channel is None:
                raise AssertionError(f"{channel_id} is not a voice channel of {guild.name}")
            guild.member_names[user_id] = name
            state = self._voice_state(guild, user_id, channel, secrets.token_hex(16))
            guild.voice_states[user_id] = state
        payload = {**state, "member": self._member(guild, user_id)}
        if self.held_voice_states is not None:
            self.held_voice_states.append(payload)
            return
        await self.dispatch("VOICE_STATE_UPDATE", payload)

    def hold_voice_states(self) -> None:
        """Members' VOICE_STATE_UPDATEs reach the bot only on ``release_voice_states``, as a
        resuming gateway shard replays them seconds later, while the voice server (op 11,
        op 27) already names the members: nothing orders the two connections."""
        self.held_voice_states = []

    async def release_voice_states(self) -> None:
        """Dispatch the held VOICE_STATE_UPDATEs in order; later ones go out at once."""
        held, self.held_voice_states = self.held_voice_states or [], None
        for payload in held:
            await self.dispatch("VOICE_STATE_UPDATE", payload)

    async def disconnect_bot(self, guild: Guild) -> None:
        """A moderator disconnects the bot: VOICE_STATE_UPDATE (no channel), voice close 4014."""
        state = guild.voice_states.pop(self.bot_id, None)
        if state is None:
            raise AssertionError("the bot is not in voice")
        self.voice.forget(guild.id)
        await self.dispatch(
            "VOICE_STATE_UPDATE",
            {**state, "channel_id": None, "member": self._member(guild, self.bot_id)},
        )
        if self.voice.connected(guild.id):
            await self.voice.close(guild.id, 4014)

    async def move_bot(self, guild: Guild, channel_id: int) -> None:
        """A moderator moves the bot to another voice channel: VOICE_STATE_UPDATE (new channel)
        and VOICE_SERVER_UPDATE with a new token, as Discord sends them; the client reconnects."""
        state = guild.voice_states.get(self.bot_id)
        channel = self._find_voice_channel(guild, channel_id)
        if state is None or channel is None:
            raise AssertionError("the bot is not in voice, or that is not a voice channel")
        await self._place_bot(guild, channel, state)

    async def _place_bot(self, guild: Guild, channel: VoiceChannel, flags: dict[str, Any]) -> None:
        """The bot is in ``channel`` now (muted and deafened as ``flags`` say): its
        VOICE_STATE_UPDATE and a VOICE_SERVER_UPDATE with a new token, as Discord sends them."""
        state = self._voice_state(
            guild,
            self.bot_id,
            channel,
            self.session_id,
            self_mute=flags["self_mute"],
            self_deaf=flags["self_deaf"],
        )
        guild.voice_states[self.bot_id] = state
        token = self.voice.expect(guild.id, self.bot_id, self.session_id, channel.id)
        await self.dispatch(
            "VOICE_STATE_UPDATE", {**state, "member": self._member(guild, self.bot_id)}
        )
        await self.dispatch(
            "VOICE_SERVER_UPDATE",
            {"token": token, "guild_id": str(guild.id), "endpoint": self.voice.endpoint},
        )

    async def _voice_op(self, ws: web.WebSocketResponse, data: Any) -> None:
        """The bot's op 4: join, move or leave (channel_id null) a voice channel."""
        if self.before_voice_op is not None:
            await self.before_voice_op(data)
        problem = rules.check_gateway_voice_state(data)
        if problem is not None:
            self.voice_rejections.append(problem)
            if self.strict:
                await ws.close(code=4002)  # Discord's "Decode error" for an invalid payload
            return
        guild = next((g for g in self.guilds if g.id == int(data["guild_id"])), None)
        if guild is None:
            self.voice_rejections.append("op 4 for a guild the bot is not in")
            return
        if data["channel_id"] is None:
            # Answered even when the bot was in no channel: discord.py waits for this event.
            state = guild.voice_states.pop(self.bot_id, None)
            self.voice.forget(guild.id)
            left = {
                **(state or {"guild_id": str(guild.id), "user_id": str(self.bot_id)}),
                "channel_id": None,
                "session_id": self.session_id,
                "deaf": False,
                "mute": False,
                "self_deaf": data["self_deaf"],
                "self_mute": data["self_mute"],
                "self_video": False,
                "suppress": False,
                "request_to_speak_timestamp": None,
            }
            await self.dispatch(
                "VOICE_STATE_UPDATE", {**left, "member": self._member(guild, self.bot_id)}
            )
            self._changed.set()
            return
        channel = self._find_voice_channel(guild, int(data["channel_id"]))
        if channel is None:
            self.voice_rejections.append("op 4 into a channel that is not a voice channel")
            return
        allowed = self.bot_permissions(guild, channel.id)
        if allowed & (VIEW_CHANNEL | CONNECT) != VIEW_CHANNEL | CONNECT:
            # Discord ignores a join the bot may not make: no event, the client times out.
            self.voice_rejections.append("op 4 into a channel without Connect")
            return
        if not self.voice.running:
            await self.voice.start()
        previous = guild.voice_states.get(self.bot_id)
        moved = previous is not None and previous["channel_id"] != str(channel.id)
        await self._place_bot(guild, channel, data)
        if moved and self.voice.connected(guild.id):
            # A move ends the old voice connection with 4014; discord.py then reconnects.
            await self.voice.close(guild.id, 4014)
        self._changed.set()

    async def _edit_my_voice_state(self, guild_id: int, body: dict[str, Any]) -> web.Response:
        """Stage: unsuppress (needs Mute Members) or request to speak (needs Request to Speak)."""
        guild = next((g for g in self.guilds if g.id == guild_id), None)
        if guild is None:
            return json_response({"message": "Unknown Guild", "code": 10004}, 404)
        state = guild.voice_states.get(self.bot_id)
        channel_id = body.get("channel_id")
        if state is None or (channel_id is not None and str(channel_id) != state["channel_id"]):
            return refuse(rules.unknown_voice_state())
        channel = self._find_voice_channel(guild, int(state["channel_id"]))
        assert channel is not None
        if not channel.stage:
            return refuse(rules.invalid_channel_type())
        allowed = self.bot_permissions(guild, channel.id)
        stamp = body.get("request_to_speak_timestamp")
        if (body.get("suppress") is False and not allowed & MUTE_MEMBERS) or (
            stamp is not None and not allowed & REQUEST_TO_SPEAK
        ):
            return refuse(rules.missing_permissions())
        if "suppress" in body and body["suppress"] is not None:
            state["suppress"] = body["suppress"]
        if "request_to_speak_timestamp" in body:
            state["request_to_speak_timestamp"] = stamp
        await self.dispatch(
            "VOICE_STATE_UPDATE", {**state, "member": self._member(guild, self.bot_id)}
        )
        return web.Response(status=204)
