"""Sending scheduled posts with discord.py: the one place they meet Discord."""

from __future__ import annotations

import json
from typing import Any

import discord

from ..render.alert_embeds import alert_message
from ..render.recap_embeds import recap_embed
from ..scheduled.outbox import PostError
from ..storage import ScheduledPost
from ..util.i18n import ENGLISH, Lang, guild_lang
from .announcements import (
    PERMANENT,
    REFUSED,
    RateGate,
    earlier_post,
    gone,
    post_message,
    refused,
    text_channel,
)


def render(
    post: ScheduledPost, lang: Lang = ENGLISH
) -> tuple[str | None, discord.Embed, discord.ui.View | None, int]:
    """(content, embed, view, role allowed to be pinged) of a stored post."""
    try:
        payload = json.loads(post.payload)
    except ValueError:
        raise PostError("unreadable stored post", final=True) from None
    if not isinstance(payload, dict):
        raise PostError("unreadable stored post", final=True)
    if post.kind == "recap":
        return None, recap_embed(payload, lang), None, 0
    message = alert_message(payload, lang)
    return message.content, message.embed, message.view, message.role


class DiscordPostSender:
    """Posts through the bot's own client (discord.py's rate limiter governs every call); any
    process may post to any channel, so the process that decides a post sends it."""

    def __init__(self, client: discord.Client, *, gate: RateGate | None = None) -> None:
        self.client = client
        self.gate = gate or RateGate()

    async def send(self, post: ScheduledPost, *, nonce: str, resumed: bool) -> int | None:
        content, embed, view, role = render(post, await guild_lang(self.client, post.guild_id))
        mentions = (
            discord.AllowedMentions(everyone=False, users=False, roles=[discord.Object(role)])
            if role
            else discord.AllowedMentions.none()
        )
        try:
            channel = await self._channel(post.channel_id)
            if resumed:
                earlier = await earlier_post(
                    self.client, self.gate, channel, embed, post.created_at
                )
                if earlier is not None:
                    return earlier
            return await post_message(
                self.gate, channel, content, embed=embed, view=view, mentions=mentions, nonce=nonce
            )
        except discord.HTTPException as error:
            if error.status in PERMANENT:
                raise PostError(gone(error.status, post.channel_id), final=True) from None
            if error.status in REFUSED:
                raise PostError(refused(error), final=True) from None
            raise PostError(f"Discord failed ({error.status})", final=False) from None

    async def _channel(self, channel_id: int) -> Any:
        channel = await text_channel(self.client, self.gate, channel_id)
        if channel is None:
            raise PostError("the target is not a text channel or thread", final=True)
        return channel
