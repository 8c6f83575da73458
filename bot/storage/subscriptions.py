"""Subscriptions: which channel announces which station, how, and the last play it showed."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..station import Play
from ..templates.model import TemplateSet
from .models import SUB_COLUMNS, Subscription, play_to_json, subscription_from_row
from .primitives import StoragePrimitives, and_equal


class SubscriptionStore(StoragePrimitives):
    """A channel's subscriptions to stations."""

    async def upsert_subscription(self, sub: Subscription) -> Subscription:
        """Insert or update by (channel, station); keeps the stored last play and card."""
        await self.execute(
            """
            INSERT INTO subscriptions (guild_id, channel_id, station, mode, mention_role,
                min_seconds, skip_item_types, skip_pattern, announce_live, style, templates)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (channel_id, station) DO UPDATE SET
                guild_id = excluded.guild_id, mode = excluded.mode, style = excluded.style,
                mention_role = excluded.mention_role, min_seconds = excluded.min_seconds,
                skip_item_types = excluded.skip_item_types, skip_pattern = excluded.skip_pattern,
                announce_live = excluded.announce_live, paused_reason = NULL,
                templates = COALESCE(excluded.templates, subscriptions.templates)
            """,
            (
                sub.guild_id,
                sub.channel_id,
                sub.station,
                sub.mode,
                sub.mention_role,
                sub.min_seconds,
                json.dumps(list(sub.skip_item_types)),
                sub.skip_pattern,
                int(sub.announce_live),
                sub.style,
                None if sub.templates is None else sub.templates.to_json(),
            ),
        )
        row = await self.fetchone(
            f"SELECT {SUB_COLUMNS} FROM subscriptions WHERE channel_id = ? AND station = ?",
            (sub.channel_id, sub.station),
        )
        assert row is not None
        return subscription_from_row(row)

    async def subscriptions(
        self, station: str | None = None, *, guild_id: int | None = None
    ) -> list[Subscription]:
        params: list[Any] = []
        query = f"SELECT {SUB_COLUMNS} FROM subscriptions WHERE 1 = 1"
        query = and_equal(query, params, station=station, guild_id=guild_id)
        rows = await self.fetch(query + " ORDER BY id", params)
        return [subscription_from_row(row) for row in rows]

    async def remove_subscription(self, guild_id: int, channel_id: int, station: str | None) -> int:
        params: list[Any] = [guild_id, channel_id]
        query = "DELETE FROM subscriptions WHERE guild_id = ? AND channel_id = ?"
        query = and_equal(query, params, station=station)
        return await self.execute(query, params)

    async def remove_subscriptions_not_in(self, keep: Sequence[tuple[int, str]]) -> None:
        """Drop subscriptions missing from ``keep``."""
        wanted = set(keep)
        for sub in await self.subscriptions():
            if (sub.channel_id, sub.station) not in wanted:
                await self.execute("DELETE FROM subscriptions WHERE id = ?", (sub.id,))

    async def mark_announced(
        self, sub_id: int, play: Play, card_message_id: int | None = None
    ) -> None:
        await self.execute(
            "UPDATE subscriptions SET last_play = ?, "
            "card_message_id = COALESCE(?, card_message_id) WHERE id = ?",
            (play_to_json(play), card_message_id, sub_id),
        )

    async def set_templates(self, sub_id: int, templates: TemplateSet) -> None:
        """A subscription's announcement templates (an empty set: the built-in layout)."""
        await self.execute(
            "UPDATE subscriptions SET templates = ? WHERE id = ?",
            (None if templates.is_empty() else templates.to_json(), sub_id),
        )

    async def pause(self, sub_id: int, reason: str | None) -> None:
        await self.execute(
            "UPDATE subscriptions SET paused_reason = ? WHERE id = ?", (reason, sub_id)
        )
