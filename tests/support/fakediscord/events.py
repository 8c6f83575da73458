"""A guild's scheduled events: list, create, read, modify and delete, with Discord's limits and
its 2026 permission split (CREATE_EVENTS to create; rules in ``discord_rules.events``).

Of the other splits of 2026-02-23, none touches a route OnAir calls: slowmode never applies to a
bot (channel.mdx), so BYPASS_SLOWMODE changes nothing, and PIN_MESSAGES and
CREATE_GUILD_EXPRESSIONS guard pins, emoji, stickers and sounds, which this fake does not serve
(404: a call OnAir made to one would fail its test).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from .. import discord_rules as rules
from .objects import Guild, Recorded, snowflake
from .voice import VoiceSide
from .wire import json_response, refuse


class ScheduledEvents(VoiceSide):
    """The /guilds/{guild}/scheduled-events routes."""

    def live_events(self, guild: Guild) -> list[dict[str, Any]]:
        """The guild's SCHEDULED and ACTIVE events (what counts toward Discord's 100)."""
        return [e for e in guild.events.values() if e["status"] in (rules.SCHEDULED, rules.ACTIVE)]

    async def _events(self, guild_id: int, event_id: int | None, r: Recorded) -> web.Response:
        """Scheduled events: list, create, read, modify, delete. Creating one needs Create
        Events; editing or deleting one the bot made needs Create Events or Manage Events, and
        one someone else made Manage Events (else 403, 50013: ``rules.may_change_event``); a
        guild holds at most 100 scheduled or active events (else 400, 30038); the bodies were
        checked by ``_check_event`` (which also refuses any change to a finished event: 400,
        180000). An event carries every field Discord's answer does."""
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
        body = dict(r.json or {})
        if not self._may_change(guild, current, body):
            return refuse(rules.missing_permissions())
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

    def _may_change(
        self, guild: Guild, current: dict[str, Any] | None, body: dict[str, Any]
    ) -> bool:
        """The bot's permissions where the event is (the guild's for an EXTERNAL one, its
        channel's otherwise) against what Discord asks of this change."""
        merged = {**(current or {}), **body}
        kind = merged.get("entity_type")
        channel = 0 if kind == rules.EXTERNAL else int(merged.get("channel_id") or 0)
        own = current is None or current.get("creator_id") == str(self.bot_id)
        return rules.may_change_event(
            self.bot_permissions(guild, channel),
            entity_type=kind,
            creating=current is None,
            own=own,
        )

    def add_event(self, guild: Guild, *, creator_id: int, name: str = "Open mic") -> int:
        """An EXTERNAL event someone else (``creator_id``) made in ``guild``, as Discord keeps
        it (SCHEDULED, an hour from now); its id."""
        new_id = snowflake()
        start = datetime.now(UTC) + timedelta(hours=1)
        guild.events[new_id] = {
            "id": str(new_id),
            "guild_id": str(guild.id),
            "channel_id": None,
            "creator_id": str(creator_id),
            "creator": self.user(creator_id, "host"),
            "name": name,
            "description": None,
            "image": None,
            "scheduled_start_time": start.isoformat(),
            "scheduled_end_time": (start + timedelta(hours=1)).isoformat(),
            "privacy_level": rules.GUILD_ONLY,
            "status": rules.SCHEDULED,
            "entity_type": rules.EXTERNAL,
            "entity_id": None,
            "entity_metadata": {"location": "the studio"},
            "user_count": 0,
            "recurrence_rule": None,
            "guild_scheduled_event_exceptions": [],
        }
        return new_id
