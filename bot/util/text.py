"""Text helpers for Discord output: escaping untrusted text, clipping, timestamps, bars, flags."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timedelta
from urllib.parse import quote_plus

from .links import TEXT_URL, safe_url

ELLIPSIS = "…"
_MARKDOWN = re.compile(r"([\\*_~`|>#\[\]])")
_ORDERED = re.compile(r"^(\d+)\.(?=\s)")
_URL_SCHEMES = re.compile(r"(?i)\b(https?)://")
# Bidi overrides/isolates can flip the rest of a message; zero-width and other format characters
# can hide text. Everything in Unicode category Cf or Cc is dropped (tabs/newlines become spaces),
# and lone surrogates (Cs, from a JSON "\ud800" escape), which no UTF-8 message can carry.
_ZWSP = "\u200b"


def _strip_controls(value: str) -> str:
    if value.isprintable():
        return value  # no control, format or separator characters other than plain spaces
    out = []
    for char in value:
        category = unicodedata.category(char)
        if category == "Cc":
            out.append(" ")
        elif category not in ("Cf", "Cs"):  # Cs: a lone surrogate cannot be sent (UTF-8)
            out.append(char)
    return "".join(out)


def safe(value: str | None, *, limit: int | None = None, fallback: str = "") -> str:
    """Untrusted station text made inert: one line, no markdown, no mentions, no links.

    Markdown characters are backslash-escaped, every ``@`` is followed by a zero-width space (no
    ``@everyone``, ``<@id>`` or ``<@&role>`` can form), bidi and zero-width characters are
    removed, and the result is clipped to ``limit`` characters.
    """
    if not value:
        return fallback
    text = " ".join(_strip_controls(value).split())
    if not text:
        return fallback
    text = _MARKDOWN.sub(r"\\\1", text)
    if text[0] in "-+":
        text = "\\" + text  # no list marker at the start of a line
    text = _ORDERED.sub(r"\1\\.", text)
    text = text.replace("@", "@" + _ZWSP)
    text = _URL_SCHEMES.sub(lambda m: f"{m.group(1)}:{_ZWSP}//", text)
    return clip(text, limit) if limit is not None else text


_FSI, _PDI = "\u2068", "\u2069"  # first strong isolate … pop directional isolate
_RTL = frozenset({"R", "AL", "AN"})


def isolate(text: str) -> str:
    """``text`` (already made safe, so it holds no bidi controls of its own) wrapped in Unicode
    isolates when it holds right-to-left letters: an Arabic or Hebrew title then keeps its own
    direction without reordering the rest of the line (a duration after it stays after it)
    or turning the whole line right-to-left. Left-to-right text is left as it is."""
    if not text or not any(unicodedata.bidirectional(char) in _RTL for char in text):
        return text
    return f"{_FSI}{text}{_PDI}"


def plain(value: str | None, *, limit: int) -> str:
    """Untrusted text for places Discord shows as plain text (select options, button labels):
    one line, no control or format characters, clipped; nothing escaped (a backslash would
    show)."""
    if not value:
        return ""
    return clip(" ".join(_strip_controls(value).split()), limit)


def one_line(value: object, limit: int) -> str:
    """Plain text on one line of at most ``limit`` characters (fields Discord shows as typed:
    a stage topic, an event's name and place, the bot's activity; a server's text as read):
    control characters become spaces, format characters (zero-width, bidi overrides), lone
    surrogates, private-use and unassigned code points go, whitespace folds. "" for anything
    that is not text."""
    if not isinstance(value, str) or not value:
        return ""
    value = value[: limit * 8]  # bounded work on any input
    kept = []
    for char in value:
        category = unicodedata.category(char)
        if category == "Cc":
            kept.append(" ")
        elif category not in ("Cf", "Cs", "Co", "Cn"):
            kept.append(char)
    return clip(" ".join("".join(kept).split()), limit)


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters, with an ellipsis when cut; never ends in a lone escape."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    cut = text[: limit - 1]
    trailing = len(cut) - len(cut.rstrip("\\"))
    if trailing % 2:
        cut = cut[:-1]
    return cut + ELLIPSIS


def timestamp(moment: datetime | None, style: str = "R") -> str:
    """Discord's ``<t:unix:style>`` (shown in each reader's own zone)."""
    if moment is None:
        return "?"
    return f"<t:{int(moment.timestamp())}:{style}>"


def duration(value: timedelta | None) -> str:
    if value is None:
        return "?"
    total = max(0, int(value.total_seconds()))
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def progress_bar(position: timedelta | None, length: timedelta | None, width: int = 16) -> str:
    if position is None or not length or length.total_seconds() <= 0:
        return ""
    share = max(0.0, min(1.0, position / length))
    done = round(share * width)
    return "▰" * done + "▱" * (width - done)


def flag(iso: str | None) -> str:
    """Flag emoji from a two-letter country code; a globe for anything else."""
    if not iso or len(iso) != 2 or not iso.isascii() or not iso.isalpha():
        return "🌐"
    return "".join(chr(0x1F1E6 + ord(c) - ord("a")) for c in iso.lower())


SEARCH_URL = "https://www.google.com/search?q="


def search_url(artist: str | None, title: str | None) -> str | None:
    """A web search for "artist title" (what a listener does to find a track), within 512."""
    words = " ".join(_strip_controls(f"{artist or ''} {title or ''}").split())
    while words:
        url = SEARCH_URL + quote_plus(words)
        if len(url) <= 512:
            return url
        words = words[: len(words) * 2 // 3].rstrip()
    return None


def masked_link(label: str, url: str | None) -> str | None:
    """``[label](url)`` for a URL ``safe_url`` accepts (else None); ``label`` must already be
    safe text. Parentheses in the URL are percent-encoded so the link cannot end early."""
    address = safe_url(url, TEXT_URL)
    if address is None:
        return None
    return f"[{label}]({_link_safe(address)})"


def bare_link(url: str | None) -> str | None:
    """``<url>`` (a link Discord shows without a preview) for a URL ``safe_url`` accepts (which
    holds no ``<>[]`` that could close it early and add a masked link after it)."""
    address = safe_url(url, TEXT_URL)
    if address is None:
        return None
    return f"<{_link_safe(address)}>"


def _link_safe(url: str) -> str:
    """Parentheses (RFC 3986 allows them) percent-encoded: a ``)`` would end a masked link."""
    return url.replace("(", "%28").replace(")", "%29")


def describe(error: BaseException) -> str:
    """An error as one short log line: its type and the first line of its text (200 characters
    at most), so a multi-line or huge message from a server cannot flood the log."""
    text = str(error).strip().splitlines()[0][:200] if str(error).strip() else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
