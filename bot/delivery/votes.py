"""Song vote polls with discord.py: post, end and read, and the outcome's line."""

from __future__ import annotations

import contextlib
from datetime import timedelta
from typing import Any

import discord

from ..util.i18n import N_
from ..votes.service import PollError
from ..votes.tally import Tally
from .announcements import (
    NOT_A_TEXT_CHANNEL,
    PERMANENT,
    REFUSED,
    RateGate,
    gone,
    own_message_since,
    refused,
    text_channel,
)

POLL_EXPIRED = 520001  # Discord: the poll has ended already
POLL_INVALID_CHANNEL = 520002  # Discord: polls cannot be posted in this kind of channel
# Stored in English as the paused votes' reason, translated where /onair status shows it.
NO_POLLS_THERE = N_("Discord allows no polls in that channel")


class DiscordPollSender:
    """Polls through the bot's own client (discord.py's rate limiter governs every call)."""

    def __init__(self, client: discord.Client, *, gate: RateGate | None = None) -> None:
        self.client = client
        self.gate = gate or RateGate()

    async def post_poll(
        self,
        channel_id: int,
        content: str,
        question: str,
        answers: list[str],
        *,
        hours: int,
        nonce: str,
    ) -> int:
        poll = discord.Poll(question=question, duration=timedelta(hours=hours))
        for answer in answers:
            poll.add_answer(text=answer)
        try:
            channel = await self._channel(channel_id)
            await self.gate.acquire()
            message = await channel.send(
                content, poll=poll, nonce=nonce, allowed_mentions=discord.AllowedMentions.none()
            )
        except discord.HTTPException as error:
            raise _poll_error(error, channel_id) from None
        return int(message.id)

    async def end_poll(self, channel_id: int, message_id: int) -> Tally | None:
        try:
            channel = await self._channel(channel_id)
            message = channel.get_partial_message(message_id)
            await self.gate.acquire()
            try:
                ended = await message.end_poll()
            except discord.HTTPException as error:
                if error.code != POLL_EXPIRED:
                    raise
                await self.gate.acquire()
                ended = await channel.fetch_message(message_id)  # ended already: read it
        except discord.NotFound:
            return None
        except discord.HTTPException as error:
            raise _poll_error(error, channel_id) from None
        return _tally(ended)

    async def read_poll(self, channel_id: int, message_id: int) -> Tally | None:
        try:
            channel = await self._channel(channel_id)
            await self.gate.acquire()
            message = await channel.fetch_message(message_id)
        except discord.NotFound:
            return None
        except discord.HTTPException as error:
            raise _poll_error(error, channel_id) from None
        return _tally(message)

    async def find_poll(
        self, channel_id: int, question: str | None, answers: list[str], since: float
    ) -> int | None:
        def same(message: discord.Message) -> bool:
            poll = message.poll
            if poll is None or (question is not None and poll.question != question):
                return False
            return [a.text for a in poll.answers] == answers

        try:
            channel = await self._channel(channel_id)
        except (discord.HTTPException, PollError):
            return None
        return await own_message_since(self.client, self.gate, channel, since, same)

    async def say(self, channel_id: int, text: str) -> None:
        try:
            channel = await self._channel(channel_id)
            await self.gate.acquire()
            await channel.send(text, allowed_mentions=discord.AllowedMentions.none())
        except discord.HTTPException as error:
            raise _poll_error(error, channel_id) from None

    async def server_name(self, guild_id: int) -> str:
        guild = self.client.get_guild(guild_id)
        if guild is None:
            with contextlib.suppress(discord.HTTPException):
                guild = await self.client.fetch_guild(guild_id)
        return guild.name if guild is not None else ""

    async def _channel(self, channel_id: int) -> Any:
        channel = await text_channel(self.client, self.gate, channel_id)
        if channel is None:
            raise PollError(NOT_A_TEXT_CHANNEL, final=True, lasting=True)
        return channel


def _poll_error(error: discord.HTTPException, channel_id: int) -> PollError:
    """Lasting: the channel refuses OnAir's polls (a permission, the channel gone, a kind of
    channel without polls) until an admin acts; another refusal is of that one message."""
    if error.status in PERMANENT:
        return PollError(gone(error.status, channel_id), final=True, lasting=True)
    if error.code == POLL_INVALID_CHANNEL:
        return PollError(NO_POLLS_THERE, final=True, lasting=True)
    if error.status in REFUSED:
        return PollError(refused(error), final=True)
    return PollError(f"Discord failed ({error.status})", final=False)


def _tally(message: discord.Message) -> Tally | None:
    """Discord's count by the answer's place in the poll (its answers come in their order)."""
    if message.poll is None:
        return None
    counts = {i: answer.vote_count for i, answer in enumerate(message.poll.answers)}
    return Tally(counts, message.poll.is_finalised())
