"""An announcement worded by the subscription's templates, kept within Discord's limits.

The built-in layout (``station_embeds.announcement``) is rendered first; each templated part
replaces its part of it. A part that renders empty (say ``{album}`` for a play without one)
keeps the built-in part, so a template can never send an empty message. Values are station text:
made inert (``safe``: markdown escaped, no mention can form, one line) before substitution; the
admin's own literal text keeps its markdown. When a part passes its limit, or the embed 6,000
characters, the longest values are cut first (one cap for every value, the largest that fits).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC

import discord

from ..programme.jingles import NO_RULES, SkipRules
from ..station import Play, StationInfo
from ..storage import Subscription
from ..templates.formatter import Part, Placeholder, render
from ..templates.model import TemplateSet, Wording, parsed
from ..util.i18n import ENGLISH, Lang
from ..util.links import TEXT_URL, safe_url
from ..util.text import clip, safe, timestamp
from . import pings, station_embeds, station_parts
from .embeds import DESCRIPTION, FOOTER, TITLE, TOTAL

CONTENT = 2000  # a message's content
# Characters of the content the requesters' pings are sure of beside a long content template
# (the template is sure of the rest; either takes what the other leaves).
PINGS_ROOM = 1000
VALUE = 1024  # no single value is longer than this, before the budget
LIMITS = {"content": CONTENT, "title": TITLE, "description": DESCRIPTION, "footer": FOOTER}
MARKDOWN_PARTS = frozenset({"content", "description"})  # <t:…> and markdown render there
_ZWSP = "\u200b"
_URL_CODES = {"(": "%28", ")": "%29", "[": "%5B", "]": "%5D", "<": "%3C", ">": "%3E", "@": "%40"}


@dataclass(frozen=True, slots=True)
class Announcement:
    """What one channel is sent: content (role ping and the content template), embed, view."""

    content: str | None
    embed: discord.Embed
    view: discord.ui.View | None
    budget: dict[str, tuple[int, int]]  # part: (characters used, limit); "embed": the total
    pinged: tuple[int, ...] = ()  # the requesters the content mentions (no one else may ping)


def _plain(value: str | None) -> str:
    """One line of text for parts without markdown (footer, title): controls dropped, every
    ``@`` defused; nothing escaped (a backslash would show)."""
    if not value:
        return ""
    kept = "".join(
        " " if unicodedata.category(c) == "Cc" else c
        for c in value
        if unicodedata.category(c) not in ("Cf", "Cs")
    )
    return clip(" ".join(kept.split()).replace("@", "@" + _ZWSP), VALUE)


def _url(url: str | None) -> str:
    address = safe_url(url, TEXT_URL)
    if address is None:
        return ""
    return "".join(_URL_CODES.get(c, c) for c in address)


def values(
    info: StationInfo,
    play: Play,
    station_name: str,
    likes: int,
    *,
    markdown: bool,
    requested_by: tuple[str, ...] = (),
) -> dict[str, str]:
    """The value of every name for one play; ``markdown``: for a part that renders markdown."""
    text: Callable[[str | None], str] = (lambda v: safe(v, limit=VALUE)) if markdown else _plain
    listeners = info.listener_count
    started = ""
    if play.started is not None:
        started = (
            timestamp(play.started, "t")
            if markdown
            else play.started.astimezone(UTC).strftime("%H:%M UTC")
        )
    return {
        "artist": text(play.artist),
        "title": text(play.title),
        "album": text(play.album),
        "year": text(play.year),
        "genre": text(station_parts.track_genre(info, play)),
        # The one name of a station in every message: as configured or added (what the
        # station option lists), the station's own name only when that is empty.
        "station": text(station_name or info.name),
        "listeners": f"{listeners:,}" if listeners is not None else "",
        "listen_url": _url(info.links.listen),
        "started": started,
        "likes": f"{likes:,}",
        # Display names typed by listeners: as untrusted as station text.
        "requested_by": ", ".join(text(name) for name in requested_by),
    }


def _length(parts: tuple[Part, ...], vals: Mapping[str, str], cap: int) -> int:
    total = 0
    for part in parts:
        if isinstance(part, str):
            total += len(part)
        else:
            value = vals.get(part.name, "")
            total += min(len(value), cap) if value else len(part.fallback or "")
    return total


def _longest(parts: tuple[Part, ...], vals: Mapping[str, str]) -> int:
    return max((len(vals.get(p.name, "")) for p in parts if isinstance(p, Placeholder)), default=0)


def _largest_cap(fits: Callable[[int], bool], high: int) -> int:
    """The largest cap in [0, high] that ``fits`` (monotone), by bisection."""
    if fits(high):
        return high
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def render_parts(
    wording: Wording,
    markdown_values: Mapping[str, str],
    plain_values: Mapping[str, str],
    *,
    limits: Mapping[str, int],
    embed_room: int,
) -> dict[str, str]:
    """Each templated text part rendered within its limit, and the embed parts together within
    ``embed_room``, cutting the longest values first. Parts that render blank are left out."""
    sources = {
        name: (parsed(text), markdown_values if name in MARKDOWN_PARTS else plain_values)
        for name in LIMITS
        if (text := getattr(wording, name))
    }
    caps: dict[str, int] = {}
    for name, (parts, vals) in sources.items():
        caps[name] = _largest_cap(
            lambda cap, p=parts, v=vals, n=name: _length(p, v, cap) <= limits[n],  # type: ignore[misc]
            _longest(parts, vals),
        )
    embed_parts = [n for n in sources if n != "content"]
    if embed_parts:
        high = max(caps[n] for n in embed_parts)

        def embed_fits(cap: int) -> bool:
            return sum(_length(*sources[n], min(cap, caps[n])) for n in embed_parts) <= embed_room

        shared = _largest_cap(embed_fits, high)
        for name in embed_parts:
            caps[name] = min(caps[name], shared)
    out: dict[str, str] = {}
    for name, (parts, vals) in sources.items():
        text = render(parts, vals, cap=caps[name], clip=clip)
        text = clip(text.strip(), limits[name])  # the literal text alone never passes; a guard
        if text.strip():
            out[name] = text
    return out


def announcement(
    templates: TemplateSet | None,
    info: StationInfo,
    play: Play,
    station_name: str,
    *,
    style: station_embeds.Style,
    mention_role: int = 0,
    likes: int = 0,
    skip: SkipRules = NO_RULES,
    card: bool = False,
    requested_by: tuple[str, ...] = (),
    voted_in: str | None = None,
    ping_users: tuple[tuple[int, str], ...] = (),
    lang: Lang = ENGLISH,
) -> Announcement:
    """The announcement of ``play`` for a subscription: the built-in layout (``style``,
    ``skip``, ``card`` and who ``requested_by`` go to it) with the parts its templates word
    (the live or AutoDJ variant by the play), the role ping and the requesters who opted in to
    a ping (``ping_users``: user id, display name) first, as many as fit (``pings.fit``)."""
    embed, view = station_embeds.announcement(
        info,
        play,
        station_name,
        style=style,
        skip=skip,
        card=card,
        requested_by=requested_by,
        voted_in=voted_in,
        lang=lang,
    )
    if voted_in is not None:  # a template's {requested_by} names the voters too
        requested_by = (*requested_by, lang.t("the listeners of {server}", server=voted_in))
    role = f"<@&{mention_role}>" if mention_role else ""
    room = CONTENT - (len(role) + 1 if role else 0)
    asked = pings.fit(ping_users, room, lang)
    wording = templates.for_play(play.live) if templates is not None else Wording()
    rendered: dict[str, str] = {}
    if not wording.is_empty():
        name = station_name
        kept = _kept_length(embed, wording)
        limits = dict(LIMITS)
        limits["content"] = room - min(len(asked.text) + 1 if asked.text else 0, PINGS_ROOM)
        rendered = render_parts(
            wording,
            values(info, play, name, likes, markdown=True, requested_by=requested_by),
            values(info, play, name, likes, markdown=False, requested_by=requested_by),
            limits=limits,
            embed_room=TOTAL - kept,
        )
        if "title" in rendered:
            embed.title = rendered["title"]
        if "description" in rendered:
            embed.description = rendered["description"]
        if "footer" in rendered:
            embed.set_footer(text=rendered["footer"], icon_url=embed.footer.icon_url)
        colour = wording.colour_value()
        if colour is not None:
            embed.colour = discord.Colour(colour)
        _fit(embed)
    body = rendered.get("content", "")
    if body:  # the requesters take what the template's content leaves
        asked = pings.fit(ping_users, room - len(body) - 1, lang)
    content = " ".join(part for part in (role, asked.text, body) if part) or None
    return Announcement(content, embed, view, budget(content, embed), asked.users)


def _fit(embed: discord.Embed) -> None:
    """Keep the embed within Discord's 6,000 characters, whatever the template left of the
    built-in layout (a part that renders blank keeps the built-in one, which the room given to
    the templates did not count): the longest of description, title and footer is cut first."""
    while (excess := len(embed) - TOTAL) > 0:
        parts = {
            "description": embed.description or "",
            "title": embed.title or "",
            "footer": embed.footer.text or "",
        }
        longest = max(parts, key=lambda part: len(parts[part]))
        if not parts[longest]:
            return  # nothing of ours left to cut
        cut = clip(parts[longest], max(0, len(parts[longest]) - excess))
        if longest == "description":
            embed.description = cut or None
        elif longest == "title":
            embed.title = cut or None
        else:
            embed.set_footer(text=cut or None, icon_url=embed.footer.icon_url)


def _kept_length(embed: discord.Embed, wording: Wording) -> int:
    """Characters of the built-in parts a template does not replace (counted in the 6,000)."""
    kept = 0
    if not wording.title:
        kept += len(embed.title or "")
    if not wording.description:
        kept += len(embed.description or "")
    if not wording.footer:
        kept += len(embed.footer.text or "")
    kept += len(embed.author.name or "")
    kept += sum(len(f.name or "") + len(f.value or "") for f in embed.fields)
    return kept


def budget(content: str | None, embed: discord.Embed) -> dict[str, tuple[int, int]]:
    """Characters used of each limit: what `/onair template preview` shows."""
    parts = {
        "content": (len(content or ""), CONTENT),
        "title": (len(embed.title or ""), TITLE),
        "description": (len(embed.description or ""), DESCRIPTION),
        "footer": (len(embed.footer.text or ""), FOOTER),
    }
    total = len(embed)  # discord.py counts Discord's way: title, description, fields, ...
    parts["embed"] = (total, TOTAL)
    return parts


def for_subscription(
    sub: Subscription,
    info: StationInfo,
    play: Play,
    station_name: str,
    lang: Lang,
    *,
    likes: int = 0,
    requested_by: tuple[str, ...] = (),
    voted_in: str | None = None,
    ping_users: tuple[tuple[int, str], ...] = (),
) -> Announcement:
    """What ``sub``'s channel is sent for ``play``: its templates, style, role, skip rules and
    mode, in ``lang`` (the guild's). The deliverer and ``/onair template preview`` both build it
    here, so a preview is the post it shows, buttons and all."""
    return announcement(
        sub.templates,
        info,
        play,
        station_name,
        style=station_embeds.effective_style(sub.style),
        mention_role=sub.mention_role,
        likes=likes,
        skip=SkipRules.of([sub]),
        card=sub.mode == "card",
        requested_by=requested_by,
        voted_in=voted_in,
        ping_users=ping_users,
        lang=lang,
    )
