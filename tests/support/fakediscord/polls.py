"""Polls as Discord keeps them: a message's ``poll`` made from the create request, members'
votes (``vote``, what a test's users do: apps cannot vote), the End Poll route, and the tally
that finishes after a poll ends (MESSAGE_UPDATE with ``is_finalized``)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Any

from aiohttp import web

from .. import discord_rules as rules
from .objects import Recorded
from .payloads import Payloads, _now
from .wire import json_response, refuse


class Polls(Payloads):
    """Poll messages: made, voted on, ended and tallied."""

    def _poll_ended(self, poll: dict[str, Any]) -> bool:
        return datetime.fromisoformat(poll["expiry"]) <= _now()

    async def vote(self, message_id: int, user_id: int, *answer_ids: int) -> None:
        """A member votes (their earlier vote replaced, as the client does): Discord counts it,
        and sends MESSAGE_POLL_VOTE_ADD only to a bot with GUILD_MESSAGE_POLLS."""
        message = self.messages[message_id]
        poll = message["poll"]
        if self._poll_ended(poll):
            raise AssertionError("Discord takes no vote on an ended poll (520001)")
        known = {a["answer_id"] for a in poll["answers"]}
        if not answer_ids or not set(answer_ids) <= known:
            raise AssertionError(f"no such answer: {answer_ids}")
        if len(answer_ids) > 1 and not poll["allow_multiselect"]:
            raise AssertionError("this poll takes one answer per member")
        votes = self.poll_votes.setdefault(message_id, {})
        votes[user_id] = set(answer_ids)
        self._count(message_id)
        if self.intents & rules.GUILD_MESSAGE_POLLS:
            for answer in answer_ids:
                await self.dispatch(
                    "MESSAGE_POLL_VOTE_ADD",
                    {
                        "user_id": str(user_id),
                        "channel_id": message["channel_id"],
                        "message_id": str(message_id),
                        "guild_id": str(self._guild_of(int(message["channel_id"]))),
                        "answer_id": answer,
                    },
                )

    def _guild_of(self, channel_id: int) -> int:
        return next(
            (g.id for g in self.guilds if channel_id in g.channels or channel_id in g.threads), 0
        )

    def _count(self, message_id: int) -> None:
        counts: dict[int, int] = {}
        for answers in self.poll_votes.get(message_id, {}).values():
            for answer in answers:
                counts[answer] = counts.get(answer, 0) + 1
        results = self.messages[message_id]["poll"]["results"]
        # An answer with no votes has no entry; apps cannot vote, so ``me_voted`` is false.
        results["answer_counts"] = [
            {"id": answer, "count": count, "me_voted": False}
            for answer, count in sorted(counts.items())
        ]

    async def _expire_poll(self, channel_id: int, message_id: int, r: Recorded) -> web.Response:
        """End Poll: only the author's own poll, once; answers the message with the poll
        ended but not yet tallied, and the tally follows as a MESSAGE_UPDATE."""
        if not self._known_channel(channel_id):
            return json_response({"message": "Unknown Channel", "code": 10003}, 404)
        message = self.messages.get(message_id)
        if message is None or message_id not in self.channel_messages[channel_id]:
            return json_response({"message": "Unknown Message", "code": 10008}, 404)
        poll = message.get("poll")
        if poll is None:
            return refuse(rules.not_a_poll())
        if message["author"]["id"] != str(self.bot_id):
            return refuse(rules.not_poll_author())
        if self._poll_ended(poll):
            return refuse(rules.poll_expired())
        poll["expiry"] = _now().isoformat()
        answer = json_response(message)
        task = asyncio.get_running_loop().create_task(self._finalise(message_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return answer

    async def _finalise(self, message_id: int) -> None:
        """Discord's final tally after a poll ends, then MESSAGE_UPDATE with it."""
        await asyncio.sleep(0)
        message = self.messages.get(message_id)
        if message is None:
            return
        self._count(message_id)
        message["poll"]["results"]["is_finalized"] = True
        data = {**message, "guild_id": str(self._guild_of(int(message["channel_id"])))}
        await self.dispatch("MESSAGE_UPDATE", data)
