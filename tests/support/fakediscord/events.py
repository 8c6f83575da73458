"""A guild's scheduled events: list, create, read, modify and delete, with Discord's limits."""

from __future__ import annotations

import hashlib
from typing import Any

from aiohttp import web

from .. import discord_rules as rules
from .objects import MANAGE_EVENTS, Guild, Recorded, snowflake
from .voice import VoiceSide
from .wire import json_response, refuse


class ScheduledEvents(VoiceSide):
    """The /guilds/{guild}/scheduled-events routes."""

    def live_events(self, guild: Guild) -> list[dict[str, Any]]:
        """The guild's SCHEDULED and ACTIVE events (what counts toward Discord's 100)."""
        return [e for e in guild.events.values() if e["status"] in (rules.SCHEDULED, rules.ACTIVE)]

    async def _events(self, guild_id: int, event_id: int | None, r: Recorded) -> web.Response:
        """Scheduled events: list, create, read, modify, delete. Changes need Manage Events
        (else 403, 50013); a guild holds at most 100 scheduled or active events (else 400,
        30038); the bodies were checked by ``_check_event`` (which also refuses any change to a
        finished event: 400, 180000). An event carries every field Discord's answer does."""
        guild = next((g for g in self.guilds if g.id == guild_id), None)
        if guild is None:
            return json_response({"message": "Unknown Guild", "code": 10004}, 404)
        if event_id is None and r.method == "GET":
            return json_response(list(guild.events.values()))
        current = guild.events.get(event_id) if event_id is not None else None
        if event_id is not None and current is None:
            return refuse(rules.unknown_scheduled_event())
        if r.method == "GET":
            return json_response(current)
        if not self.bot_permissions(guild, 0) & MANAGE_EVENTS:
            return refuse(rules.missing_permissions())
        body = dict(r.json or {})
        if r.method == "DELETE":
            assert current is not None
            del guild.events[int(current["id"])]
            await self.dispatch("GUILD_SCHEDULED_EVENT_DELETE", current)
            return web.Response(status=204)
        if current is None:
            if len(self.live_events(guild)) >= rules.EVENTS_MAX:
                return refuse(rules.too_many_events())
            new_id = snowflake()
            current = {
                "id": str(new_id),
                "guild_id": str(guild.id),
                "channel_id": None,
                "creator_id": str(self.bot_id),
                "creator": self.user(self.bot_id, "OnAir", bot=True),
                "description": None,
                "image": None,
                "scheduled_end_time": None,
                "status": rules.SCHEDULED,
                "entity_id": None,
                "user_count": 0,
                "recurrence_rule": None,
                "entity_metadata": None,
                "guild_scheduled_event_exceptions": [],
            }
            guild.events[new_id] = current
            event = "GUILD_SCHEDULED_EVENT_CREATE"
        else:
            event = "GUILD_SCHEDULED_EVENT_UPDATE"
        if body.get("image") is not None:  # a data URI in, its hash out (as Discord answers)
            body["image"] = hashlib.sha256(str(body["image"]).encode()).hexdigest()[:32]
        current.update(body)
        await self.dispatch(event, current)
        self._changed.set()
        return json_response(current)
