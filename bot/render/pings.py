"""The requesters who asked to be pinged, fitted into an announcement's content.

However many opted in, the content stays within Discord's 2,000 characters and its
``allowed_mentions.users`` within 100 ids (Discord refuses the whole post otherwise, and the
play is lost in that channel): as many are pinged as fit, the rest are named without a ping,
and those that even names do not fit are counted ("and 12 more"). Names are listener text:
escaped, isolated, never able to form a mention.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..util.i18n import ENGLISH, Lang
from ..util.text import isolate, safe

MAX_USER_MENTIONS = 100  # Discord: allowed_mentions.users holds at most 100 ids
NAME = 40  # characters of a display name shown


@dataclass(frozen=True, slots=True)
class Pings:
    """The content's requester part and the users it mentions (what may ping: no one else)."""

    text: str
    users: tuple[int, ...]


NOBODY = Pings("", ())


def fit(requesters: Sequence[tuple[int, str]], room: int, lang: Lang = ENGLISH) -> Pings:
    """``requesters`` (user id, display name), each once, within ``room`` characters: the first
    pinged, then the rest named, then counted. Empty when not even a count fits."""
    if not requesters or room <= 0:
        return NOBODY
    mentions = [f"<@{user}>" for user, _ in requesters]
    # The most pinged: within 100 ids, with room left to count the others.
    pinged = min(len(mentions), MAX_USER_MENTIONS)
    while pinged > 0 and _length(mentions[:pinged], _count(len(mentions) - pinged, lang)) > room:
        pinged -= 1
    head = " ".join(mentions[:pinged])
    rest = requesters[pinged:]
    if not rest:
        return Pings(head, tuple(user for user, _ in requesters[:pinged]))
    fallback = lang.t("a listener")
    names = [f"**{isolate(safe(name, limit=NAME, fallback=fallback))}**" for _, name in rest]
    named = 0
    tail = _count(len(rest), lang)
    while named < len(names):
        longer = _named(names[: named + 1], len(rest) - named - 1, lang)
        if _length([head] if head else [], longer) > room:
            break
        named += 1
        tail = longer
    text = " ".join(part for part in (head, tail) if part)
    if len(text) > room:  # not even "and N more" fits beside the pings
        text = head
    return Pings(text, tuple(user for user, _ in requesters[:pinged]))


def _length(parts: list[str], tail: str) -> int:
    return len(" ".join([*parts, tail] if tail else parts))


def _count(others: int, lang: Lang) -> str:
    if not others:
        return ""
    return lang.tn("and {count} more", "and {count} more", others)


def _named(names: list[str], others: int, lang: Lang) -> str:
    listed = ", ".join(names)
    if not others:
        return lang.t("also requested by {names}", names=listed)
    return lang.tn(
        "also requested by {names} and {count} more",
        "also requested by {names} and {count} more",
        others,
        names=listed,
    )
