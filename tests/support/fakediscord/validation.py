"""The fake as strict as Discord: each route's body is checked by tests/support/discord_rules
before the route runs, and a violation is answered as Discord answers it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

from aiohttp import web

from .. import discord_rules as rules
from .objects import Recorded
from .state import FakeDiscordState
from .wire import (
    CALLBACK,
    EVENT,
    EVENTS,
    MY_VOICE_STATE,
    STAGE_INSTANCE,
    STAGE_INSTANCES,
    VOICE_STATUS,
    json_response,
    refuse,
)

# Routes only the rules look at (wire.py holds those the routes match too).
COMMANDS = re.compile(r"^/applications/(\d+)(?:/guilds/(\d+))?/commands$")
CHANNEL_MESSAGES = re.compile(r"^/channels/(\d+)/messages$")
CHANNEL_MESSAGE = re.compile(r"^/channels/(\d+)/messages/(\d+)$")
WEBHOOK = re.compile(r"^/webhooks/(\d+)/([^/]+)$")
WEBHOOK_MESSAGE = re.compile(r"^/webhooks/(\d+)/([^/]+)/messages/(@original|\d+)$")

# A route's check: the request and its route match in, Discord's refusal (or None) out.
Check = Callable[[Recorded, re.Match[str]], rules.Rejection | None]


def _body(check: Callable[[Any, rules.FormErrors], None]) -> Check:
    """A check of the body alone: Discord's 400 (50035) with every field ``check`` finds."""

    def run(r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        errors = rules.FormErrors()
        check(r.json, errors)
        return rules.rejection(errors)

    return run


class Validation(FakeDiscordState):
    """Route → rule table and the checks that need the fake's state."""

    def _bot_permissions(self, channel_id: int) -> int:
        """The bot's permissions in a text channel (a thread: its parent's), as Discord
        computes them: @everyone's and its own role's, then the channel's overwrites for
        @everyone, for the role and for the bot itself, in that order."""
        for guild in self.guilds:
            if channel_id in guild.channels or channel_id in guild.threads:
                permissions = guild.everyone_permissions | guild.bot_role_permissions
                parent = channel_id if channel_id in guild.channels else guild.channels[0]
                overwrites = guild.channel_overwrites.get(parent, [])
                for target in (guild.id, guild.bot_role, self.bot_id):
                    for overwrite in overwrites:
                        if overwrite["id"] == str(target):
                            permissions &= ~int(overwrite["deny"])
                            permissions |= int(overwrite["allow"])
                return permissions
        return 0

    def _validate(self, r: Recorded) -> web.Response | None:
        """The first route rule that matches checks the body; None lets the request through."""
        if self.strict and sum(len(data) for _, _, data in r.files) > rules.UPLOAD_MAX:
            return json_response(rules.too_large().body, 413)
        for method, pattern, check in self._rules():
            match = pattern.match(r.route)
            if match and r.method == method:
                found = check(r, match)
                if found is not None and self.strict:
                    return refuse(found)
                return None
        return None

    def _rules(
        self,
    ) -> list[tuple[str, re.Pattern[str], Check]]:
        return [
            ("PUT", COMMANDS, self._check_commands),
            ("POST", CALLBACK, self._check_callback),
            ("POST", CHANNEL_MESSAGES, self._check_create),
            ("PATCH", CHANNEL_MESSAGE, self._check_edit),
            ("POST", WEBHOOK, self._check_follow_up),
            ("PATCH", WEBHOOK_MESSAGE, self._check_edit),
            ("PATCH", MY_VOICE_STATE, _body(rules.check_my_voice_state)),
            ("PUT", VOICE_STATUS, _body(rules.check_voice_status)),
            ("POST", STAGE_INSTANCES, _body(partial(rules.check_stage_instance, create=True))),
            ("PATCH", STAGE_INSTANCE, _body(partial(rules.check_stage_instance, create=False))),
            ("POST", EVENTS, self._check_event),
            ("PATCH", EVENT, self._check_event),
        ]

    def _check_commands(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        """The commands themselves, then the install types the application supports."""
        errors = rules.FormErrors()
        rules.check_commands(r.json, errors)
        rules.check_install_types(r.json, self.app_install_types, errors)
        return rules.rejection(errors)

    def _check_event(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        """A scheduled event's body, judged against the stored event when it is a change (an
        unknown event is left to the route: 404)."""
        current = None
        if match.lastindex == 2:
            guild = next((g for g in self.guilds if g.id == int(match.group(1))), None)
            current = guild.events.get(int(match.group(2))) if guild is not None else None
            if current is None:
                return None
            if current.get("status") in rules.FINISHED_STATUSES:
                return rules.finished_event()
        errors = rules.FormErrors()
        rules.check_scheduled_event(r.json, errors, current=current, now=datetime.now(UTC))
        return rules.rejection(errors)

    def _check_callback(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        interaction = self.interactions.get(match.group(1))
        if interaction is None:
            return rules.unknown_interaction()
        if interaction.acknowledged:
            return rules.already_acknowledged()
        late = time.monotonic() - interaction.created
        if self.callback_window is not None and late > self.callback_window:
            return rules.unknown_interaction()
        found = rules.check_callback(
            r.json, interaction.kind, rules.FormErrors(), uploads=r.filenames
        )
        if found is None or not self.strict:
            interaction.acknowledged = True
        return found

    def _check_create(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        errors = rules.FormErrors()
        rules.check_message(r.json, errors, uploads=r.filenames)
        rules.check_poll(r.json, errors)
        if errors:
            return rules.rejection(errors)
        if rules.is_empty(r.json or {}, r.filenames):
            return rules.empty_message()
        if isinstance(r.json, dict) and r.json.get("poll") is not None:
            channel = int(match.group(1)) if match.re is CHANNEL_MESSAGES else 0
            if channel and not self._bot_permissions(channel) & rules.SEND_POLLS:
                return rules.missing_permissions()
        return None

    def _check_follow_up(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        token = match.group(2)
        interaction = self.interactions.get(token.removeprefix("itoken-"))
        if token.startswith("itoken-") and (interaction is None or not interaction.acknowledged):
            return rules.unknown_webhook()
        return self._check_create(r, match)

    def _check_edit(self, r: Recorded, match: re.Match[str]) -> rules.Rejection | None:
        body = r.json or {}
        current = self._target(r, match)
        if current is not None and current["author"]["id"] != str(self.bot_id):
            return rules.not_author()
        if current is not None and "poll" in current and isinstance(body, dict) and "poll" in body:
            return rules.poll_not_editable()  # a poll is final once posted
        uploads = list(r.filenames)
        if current is not None and "attachments" not in body:
            uploads += [a.get("filename", "") for a in current.get("attachments") or []]
        errors = rules.FormErrors()
        rules.check_message(body, errors, uploads=uploads)
        if errors:
            return rules.rejection(errors)
        if current is not None and isinstance(body, dict):
            after = {**current, **{k: v for k, v in body.items() if v is not None}}
            if "attachments" not in body:
                after["attachments"] = current.get("attachments")
            if rules.is_empty(after, r.filenames):
                return rules.empty_message()
        return None

    def _target(self, r: Recorded, match: re.Match[str]) -> dict[str, Any] | None:
        """The stored message an edit targets (None when unknown: the route answers 404)."""
        message = match.group(match.lastindex or 0)
        if message == "@original":
            token = match.group(2)
            mid = self._originals.get(token.removeprefix("itoken-"))
        else:
            mid = int(message)
        return self.messages.get(mid) if mid is not None else None
