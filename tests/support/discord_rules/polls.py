"""Polls (Discord's Poll resource and Create Message's ``poll``): the create request's shape and
limits, who may post and end one, and the errors Discord gives for them.

A question is 1-300 characters of text, an answer 1-55 with ``poll_media`` required, 1-10
answers, ``duration`` 1-768 hours (default 24), ``layout_type`` 1; a poll needs SEND_POLLS in
the channel (403, 50013), cannot share a message with IS_COMPONENTS_V2 (400), and once posted its
message's poll cannot be edited (520003). Only the poll's author may end it (403, 50005), ending
an ended poll is 520001 and ending a message with no poll 520006. Results are Discord's to
count; apps cannot vote.
"""

from __future__ import annotations

from typing import Any

from .constants import IS_COMPONENTS_V2
from .errors import FormErrors, Path, _refusal
from .fields import _array, _integer, _object, _objects, _text

SEND_POLLS = 1 << 49  # the permission
GUILD_MESSAGE_POLLS = 1 << 24  # the intent: MESSAGE_POLL_VOTE_ADD / _REMOVE in guilds
QUESTION_MAX = 300
ANSWER_MAX = 55
ANSWERS_MAX = 10
DURATION_MIN, DURATION_MAX, DURATION_DEFAULT = 1, 768, 24  # hours (32 days)
EMOJI_NAME_MAX = 32
DEFAULT_LAYOUT = 1

POLL_VOTING_BLOCKED = 520000
POLL_EXPIRED = 520001
POLL_INVALID_CHANNEL = 520002
POLL_NOT_EDITABLE = 520003
POLL_EMOJI_INCLUDED = 520004
NOT_A_POLL = 520006

poll_expired = _refusal(400, POLL_EXPIRED, "Poll expired")
poll_not_editable = _refusal(400, POLL_NOT_EDITABLE, "Cannot edit a poll message")
not_a_poll = _refusal(400, NOT_A_POLL, "Cannot expire a non-poll message")
not_poll_author = _refusal(403, 50005, "Cannot edit a message authored by another user")


def check_poll(body: Any, errors: FormErrors, path: Path = ()) -> None:
    """A message body's ``poll`` (a create request), when present."""
    if not isinstance(body, dict) or body.get("poll") is None:
        return
    where = (*path, "poll")
    poll = _object(errors, where, body["poll"])
    if poll is None:
        return
    flags = body.get("flags")
    if isinstance(flags, int) and flags & IS_COMPONENTS_V2:
        errors.add(where, "MESSAGE_POLL_COMPONENTS_V2", "Polls cannot be sent with components v2.")
    question = _object(errors, (*where, "question"), poll.get("question"))
    if question is None:
        errors.add((*where, "question"), "BASE_TYPE_REQUIRED", "This field is required")
    else:
        _media(errors, (*where, "question"), question, QUESTION_MAX, emoji=False)
    if poll.get("answers") is None:
        errors.add((*where, "answers"), "BASE_TYPE_REQUIRED", "This field is required")
    answers = _array(errors, (*where, "answers"), poll.get("answers"), ANSWERS_MAX, 1)
    for at, answer in _objects(errors, (*where, "answers"), answers):
        media = _object(errors, (*at, "poll_media"), answer.get("poll_media"))
        if media is None:
            errors.add((*at, "poll_media"), "BASE_TYPE_REQUIRED", "This field is required")
        else:
            _media(errors, (*at, "poll_media"), media, ANSWER_MAX, emoji=True)
    duration = poll.get("duration")
    if isinstance(duration, float) and duration.is_integer():
        duration = int(duration)  # JSON's 1.0 is the integer 1 to Discord (discord.py sends it)
    _integer(errors, (*where, "duration"), duration, DURATION_MIN, DURATION_MAX)
    multiselect = poll.get("allow_multiselect")
    if multiselect is not None and not isinstance(multiselect, bool):
        errors.add(
            (*where, "allow_multiselect"), "BASE_TYPE_BOOLEAN", "Must be either true or false."
        )
    layout = poll.get("layout_type")
    if layout is not None and layout != DEFAULT_LAYOUT:
        errors.add((*where, "layout_type"), "BASE_TYPE_CHOICES", "Value must be one of {1}.")


def _media(
    errors: FormErrors, path: Path, media: dict[str, Any], limit: int, *, emoji: bool
) -> None:
    """Poll media: ``text`` required (1 to ``limit``); an emoji on answers only (the question
    supports text alone), by id or by a name of at most 32."""
    _text(errors, (*path, "text"), media.get("text"), limit, minimum=1, required=True)
    found = _object(errors, (*path, "emoji"), media.get("emoji"))
    if found is None:
        return
    if not emoji:
        errors.add((*path, "emoji"), "POLL_QUESTION_EMOJI", "Only text is supported.")
    _text(errors, (*path, "emoji", "name"), found.get("name"), EMOJI_NAME_MAX)


def may_send_polls(permissions: int) -> bool:
    return bool(permissions & SEND_POLLS)
