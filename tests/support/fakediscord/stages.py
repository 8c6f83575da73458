"""What a voice channel shows: its status line (PUT voice-status) and a stage's instance (its
topic), set by the bot over REST or by a person in a test.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from .. import discord_rules as rules
from .objects import (
    CONNECT,
    MANAGE_CHANNELS,
    SET_VOICE_CHANNEL_STATUS,
    STAGE_MODERATOR,
    VIEW_CHANNEL,
    Guild,
    Recorded,
    VoiceChannel,
)
from .voice import VoiceSide
from .wire import json_response, refuse


class StatusAndStages(VoiceSide):
    """Voice channel status and stage instances."""

    async def _put_voice_status(self, channel_id: int, body: dict[str, Any]) -> web.Response:
        """Set a voice channel's status: a voice channel (not a stage), the bot with View
        Channel, Connect and Set Voice Channel Status there and in it, or with Manage Channels
        (else 403, 50013); then
        VOICE_CHANNEL_STATUS_UPDATE to the guild, as Discord sends it."""
        found = self._voice_channel_anywhere(channel_id)
        if found is None:
            return json_response({"message": "Unknown Channel", "code": 10003}, 404)
        guild, channel = found
        if channel.stage:
            return refuse(rules.invalid_channel_type())
        needed = VIEW_CHANNEL | CONNECT | SET_VOICE_CHANNEL_STATUS
        allowed = self.bot_permissions(guild, channel_id)
        if allowed & needed != needed:
            return refuse(rules.missing_permissions())
        # Only a member connected to the channel sets its status; from outside it takes Manage
        # Channels (discord-api-docs #6400), so a bot that was disconnected cannot clear it.
        if self.bot_voice.get(guild.id) != channel_id and not allowed & MANAGE_CHANNELS:
            return refuse(rules.missing_permissions())
        await self._set_status(guild, channel, body.get("status") or None, by="bot")
        return web.Response(status=204)

    async def _set_status(
        self, guild: Guild, channel: VoiceChannel, status: str | None, *, by: str
    ) -> None:
        channel.status, channel.status_by = status, by
        await self.dispatch(
            "VOICE_CHANNEL_STATUS_UPDATE",
            {"id": str(channel.id), "guild_id": str(guild.id), "status": status},
        )
        self._changed.set()

    async def person_sets_status(self, guild: Guild, channel_id: int, status: str | None) -> None:
        """Someone in the server sets (or clears, None) a voice channel's status."""
        channel = self._find_voice_channel(guild, channel_id)
        assert channel is not None
        assert not channel.stage
        await self._set_status(guild, channel, status, by="person")

    async def start_stage(self, guild: Guild, channel_id: int, topic: str) -> None:
        """A stage moderator opens the stage with ``topic`` (before or after READY)."""
        channel = self._find_voice_channel(guild, channel_id)
        assert channel is not None
        assert channel.stage
        channel.topic = topic
        await self.dispatch("STAGE_INSTANCE_CREATE", self._stage_instance(guild, channel))

    async def _stage_instance_op(self, channel_id: int, r: Recorded) -> web.Response:
        """Open (POST), read, retopic (PATCH) or close (DELETE) a stage instance: a stage
        channel; changes need the bot to be a stage moderator (Manage Channels, Mute Members
        and Move Members there; else 403, 50013); one instance per stage (else 400, 150006);
        none open: 404, 10067. Each change is dispatched as Discord does."""
        found = self._voice_channel_anywhere(channel_id)
        if found is None or not found[1].stage:
            return json_response({"message": "Unknown Channel", "code": 10003}, 404)
        guild, channel = found
        if r.method == "GET":
            if channel.topic is None:
                return refuse(rules.unknown_stage_instance())
            return json_response(self._stage_instance(guild, channel))
        if self.bot_permissions(guild, channel_id) & STAGE_MODERATOR != STAGE_MODERATOR:
            return refuse(rules.missing_permissions())
        body = r.json or {}
        if r.method == "POST":
            if channel.topic is not None:
                message = "A stage instance has already been created for this channel"
                return json_response({"message": message, "code": rules.STAGE_ALREADY_OPEN}, 400)
            channel.topic = str(body["topic"])
            event = "STAGE_INSTANCE_CREATE"
        elif channel.topic is None:
            return refuse(rules.unknown_stage_instance())
        elif r.method == "PATCH":
            channel.topic = str(body.get("topic") or channel.topic)
            event = "STAGE_INSTANCE_UPDATE"
        else:
            data = self._stage_instance(guild, channel)
            channel.topic = None
            await self.dispatch("STAGE_INSTANCE_DELETE", data)
            self._changed.set()
            return web.Response(status=204)
        data = self._stage_instance(guild, channel)
        await self.dispatch(event, data)
        self._changed.set()
        return json_response(data)
