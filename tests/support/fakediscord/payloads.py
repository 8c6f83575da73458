"""Discord's objects as the fake sends them: users, members, channels, threads, roles, guilds,
messages, voice states and stage instances.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from .. import discord_rules as rules
from .objects import GUILD_VOICE_STATES, Guild, VoiceChannel, snowflake
from .state import FakeDiscordState


def _now() -> datetime:
    return datetime.now(UTC)


def poll_payload(request: dict[str, Any]) -> dict[str, Any]:
    """A message's ``poll`` from a valid create request: answers numbered from 1, the expiry
    ``duration`` hours (default 24) from now, no votes yet."""
    hours = int(request.get("duration") or rules.DURATION_DEFAULT)
    return {
        "question": {"text": request["question"]["text"]},
        "answers": [
            {"answer_id": index, "poll_media": answer["poll_media"]}
            for index, answer in enumerate(request["answers"], start=1)
        ],
        "expiry": (_now() + timedelta(hours=hours)).isoformat(),
        "allow_multiselect": bool(request.get("allow_multiselect")),
        "layout_type": 1,
        "results": {"is_finalized": False, "answer_counts": []},
    }


class Payloads(FakeDiscordState):
    """Builds Discord's JSON for what the state holds."""

    def user(self, user_id: int, name: str = "listener", bot: bool = False) -> dict[str, Any]:
        return {
            "id": str(user_id),
            "username": name,
            "discriminator": "0",
            "global_name": name,
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
        }

    def _channel(self, guild: Guild, channel_id: int, position: int) -> dict[str, Any]:
        return {
            "id": str(channel_id),
            "type": 0,
            "guild_id": str(guild.id),
            "name": f"channel-{position}",
            "position": position,
            "permission_overwrites": list(guild.channel_overwrites.get(channel_id, [])),
            "nsfw": False,
            "parent_id": None,
            "rate_limit_per_user": 0,
            "topic": None,
            "last_message_id": None,
        }

    def _thread(self, guild: Guild, thread_id: int) -> dict[str, Any]:
        return {
            "id": str(thread_id),
            "type": 11,
            "guild_id": str(guild.id),
            "parent_id": str(guild.channels[0]),
            "owner_id": str(self.owner_id),
            "name": "now-playing-thread",
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "message_count": 0,
            "member_count": 1,
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": 1440,
                "archive_timestamp": "2026-01-01T00:00:00+00:00",
                "locked": False,
            },
            "flags": 0,
        }

    def _voice_channel(self, guild: Guild, channel: VoiceChannel) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": str(channel.id),
            "type": 13 if channel.stage else 2,
            "guild_id": str(guild.id),
            "name": channel.name,
            "position": len(guild.channels) + guild.voice_channels.index(channel),
            "permission_overwrites": channel.overwrites,
            "nsfw": False,
            "parent_id": None,
            "bitrate": 64000,
            "user_limit": 0,
            "rtc_region": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
        }
        if channel.stage:
            data["topic"] = None
        else:
            data["video_quality_mode"] = 1
            data["status"] = channel.status  # Discord sends it in GUILD_CREATE's channels
        return data

    def _stage_instance(self, guild: Guild, channel: VoiceChannel) -> dict[str, Any]:
        return {
            "id": str(channel.id + 1),
            "guild_id": str(guild.id),
            "channel_id": str(channel.id),
            "topic": channel.topic,
            "privacy_level": 2,
            "discoverable_disabled": True,
            "guild_scheduled_event_id": None,
        }

    def _role(self, guild: Guild, role_id: int) -> dict[str, Any]:
        """A role object as Discord sends it: @everyone (not mentionable), "Listeners"
        (mentionable) and "Staff" (not mentionable)."""
        position = guild.roles.index(role_id)
        names = ["@everyone", "Listeners", "Staff"]
        return {
            "id": str(role_id),
            "name": names[position] if position < len(names) else f"Role {position}",
            "permissions": str(guild.everyone_permissions) if position == 0 else "0",
            "position": position,
            "color": 0,
            "hoist": False,
            "managed": False,
            "mentionable": position == 1,
            "flags": 0,
        }

    def _member(self, guild: Guild, user_id: int) -> dict[str, Any]:
        bot = user_id == self.bot_id
        return {
            "user": self.user(
                user_id, "OnAir" if bot else guild.member_names.get(user_id, ""), bot
            ),
            "roles": [str(guild.bot_role)] if bot else [],
            "joined_at": "2026-01-01T00:00:00+00:00",
            "deaf": False,
            "mute": False,
            "flags": 0,
        }

    def _voice_state(
        self,
        guild: Guild,
        user_id: int,
        channel: VoiceChannel,
        session_id: str,
        *,
        self_mute: bool = False,
        self_deaf: bool = False,
    ) -> dict[str, Any]:
        return {
            "guild_id": str(guild.id),
            "channel_id": str(channel.id),
            "user_id": str(user_id),
            "session_id": session_id,
            "deaf": False,
            "mute": False,
            "self_deaf": self_deaf,
            "self_mute": self_mute,
            "self_video": False,
            "suppress": channel.stage,  # everyone joins a stage as audience
            "request_to_speak_timestamp": None,
        }

    def _guild_payload(self, guild: Guild) -> dict[str, Any]:
        return {
            "id": str(guild.id),
            "name": guild.name,
            "icon": None,
            "owner_id": str(self.owner_id),
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "features": [],
            "mfa_level": 0,
            "system_channel_flags": 0,
            "premium_tier": 0,
            "nsfw_level": 0,
            "preferred_locale": guild.preferred_locale,
            "unavailable": False,
            "member_count": 3,
            "large": False,
            "joined_at": "2026-01-01T00:00:00+00:00",
            "roles": [self._role(guild, role_id) for role_id in guild.roles]
            + [
                {
                    "id": str(guild.bot_role),
                    "name": "OnAir",
                    "permissions": str(guild.bot_role_permissions),
                    "position": len(guild.roles),
                    "color": 0,
                    "hoist": False,
                    "managed": True,
                    "mentionable": False,
                    "flags": 0,
                }
            ],
            "emojis": [],
            "stickers": [],
            "channels": [self._channel(guild, cid, i) for i, cid in enumerate(guild.channels)]
            + [self._voice_channel(guild, vc) for vc in guild.voice_channels],
            "threads": [self._thread(guild, tid) for tid in guild.threads],
            "members": [self._member(guild, self.bot_id)]
            + [
                self._member(guild, uid)
                for uid in guild.voice_states
                if uid != self.bot_id and uid in guild.member_names and self._voice_intent
            ],
            "voice_states": [
                {k: v for k, v in state.items() if k != "guild_id"}
                for state in guild.voice_states.values()
                if self._voice_intent
            ],
            "presences": [],
            "stage_instances": [
                self._stage_instance(guild, vc)
                for vc in guild.voice_channels
                if vc.stage and vc.topic is not None
            ],
            "guild_scheduled_events": list(guild.events.values()),
        }

    def message(
        self,
        channel_id: int,
        body: dict[str, Any],
        *,
        message_id: int | None = None,
        webhook: bool = False,
        flags: int = 0,
    ) -> dict[str, Any]:
        mid = message_id or snowflake()
        data = {
            "id": str(mid),
            "channel_id": str(channel_id),
            "author": self.user(self.bot_id, "OnAir", bot=True),
            "content": body.get("content") or "",
            "timestamp": "2026-01-01T00:00:00+00:00",
            "edited_timestamp": None,
            "tts": False,
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": [
                {
                    "id": str(snowflake()),
                    "filename": a.get("filename", "file"),
                    "size": 1,
                    "url": f"https://cdn.discordapp.com/attachments/{channel_id}/{mid}/file",
                    "proxy_url": "https://cdn.discordapp.com/x",
                }
                for a in body.get("attachments") or []
            ],
            "embeds": body.get("embeds") or [],
            "components": body.get("components") or [],
            "pinned": False,
            "type": 0,
            "flags": flags | int(body.get("flags") or 0),
        }
        if webhook:
            data["webhook_id"] = str(self.app_id)
        if body.get("poll"):
            data["poll"] = poll_payload(body["poll"])
        self.messages[mid] = data
        self.channel_messages[channel_id].append(mid)
        return data

    def resolved_role(self, role_id: int, guild: Guild | None = None) -> dict[str, Any]:
        """``resolved`` of an interaction whose role option names ``role_id``."""
        guild = guild or self.guilds[0]
        return {"roles": {str(role_id): self._role(guild, role_id)}}

    def resolved_channel(self, channel_id: int, guild: Guild | None = None) -> dict[str, Any]:
        guild = guild or self.guilds[0]
        if channel_id in guild.threads:
            data = self._thread(guild, channel_id)
        else:
            data = self._channel(guild, channel_id, guild.channels.index(channel_id))
        data["permissions"] = "1071698660929"
        return {"channels": {str(channel_id): data}}

    @property
    def _voice_intent(self) -> bool:
        return bool(self.intents & GUILD_VOICE_STATES)

    def _find_voice_channel(self, guild: Guild, channel_id: int) -> VoiceChannel | None:
        return next((vc for vc in guild.voice_channels if vc.id == channel_id), None)

    def _voice_channel_anywhere(self, channel_id: int) -> tuple[Guild, VoiceChannel] | None:
        for guild in self.guilds:
            channel = self._find_voice_channel(guild, channel_id)
            if channel is not None:
                return guild, channel
        return None

    def _known_channel(self, channel_id: int) -> bool:
        return any(channel_id in g.channels or channel_id in g.threads for g in self.guilds)
