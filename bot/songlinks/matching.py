"""Which search result is the song on air, if any: a pure function of the names.

A wrong link is worse than none, so a result matches only when the primary artist and the
bare title are the same after folding case, accents, punctuation and ``&``/``and``, and the
recordings are of the same kind: a live, remixed, acoustic, instrumental, karaoke, demo or
otherwise named version ("Part 2", "Taylor's Version") matches only the same version.
"Remastered", "Radio Edit", "Single Version", "Mono", a year and "feat. X" (in the title or
the artist) do not make another recording. Of the results that match, the first one whose
title is the same word for word wins, else the first (the search's own order).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..songsearch import SongHit

# Tags that name the same recording (or a label of it): ignored.
_SAME_RECORDING = re.compile(
    r"^(?:"
    r"(?:\d{4} )?(?:digital(?:ly)? )?remaster(?:ed)?(?: \d{4})?(?: version)?(?: \d{4})?"
    r"|(?:\d{4} )?remaster(?:ed)? (?:edition|mix)"
    r"|radio (?:edit|version|mix)|single (?:edit|version)|album (?:edit|version)|edit"
    r"|original(?: mix| version)?|mono|stereo|explicit|clean|bonus track|\d{4}"
    r"|(?:from|aus|de|do|da) .+"
    r")$"
)
_FEAT_TAG = re.compile(r"^(?:feat|ft|featuring|with|con|com|mit|avec) ")
_FEAT_TAIL = re.compile(r"\s+(?:feat\.?|ft\.?|featuring)\s.*$", re.IGNORECASE)
_ARTIST_SPLIT = re.compile(
    r"\s+(?:feat\.?|ft\.?|featuring|&|and|x|with|vs\.?|e|y|und|et)\s+|\s*[,;/]\s*", re.IGNORECASE
)
_FEAT_ARTIST = re.compile(r"\s+(?:feat\.?|ft\.?|featuring)\s+", re.IGNORECASE)
_BRACKETED = re.compile(r"[(\[]([^()\[\]]*)[)\]]")
_DASH_PART = re.compile(r"\s+[-–—]\s+")
_LIVE = re.compile(r"\b(?:live|ao vivo|en vivo|en directo|unplugged|dal vivo|en concierto)\b")
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("live", _LIVE),
    ("acoustic", re.compile(r"\b(?:acoustic|acustico|akustik|acoustique)\b")),
    ("instrumental", re.compile(r"\binstrumental\b")),
    ("karaoke", re.compile(r"\bkaraoke\b")),
    ("demo", re.compile(r"\bdemo\b")),
    ("sped", re.compile(r"\b(?:sped up|slowed)\b")),
)
_ALBUM_LIVE = re.compile(r"^live (?:at|in|from|on|aus|ao|en|a|au)\b|\blive$|^live$")


@dataclass(frozen=True, slots=True)
class SongName:
    """A title read as its bare words and the versions it names."""

    bare: str
    versions: frozenset[str]


def fold(text: str) -> str:
    """Lower case, accents and punctuation gone, ``&`` as "and", whitespace folded."""
    decomposed = unicodedata.normalize("NFKD", text.replace("&", " and "))
    kept = []
    for char in decomposed:
        category = unicodedata.category(char)
        if category.startswith("M"):
            continue  # accents
        kept.append(char if category[0] in "LN" else " ")
    return " ".join("".join(kept).casefold().split())


def version_of(tag: str) -> str | None:
    """The kind of recording a tag names (None: the same recording)."""
    text = fold(tag)
    if not text or _FEAT_TAG.match(text + " ") or _SAME_RECORDING.match(text):
        return None
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return f"other:{text}"  # a remix, a part, a named version: only the same one


def read_title(title: str) -> SongName:
    """The bare title and the versions its brackets and " - " parts name."""
    tags = _BRACKETED.findall(title)
    rest = _BRACKETED.sub(" ", title)
    parts = _DASH_PART.split(rest)
    head = [parts[0]]
    for part in parts[1:]:
        if version_of(part) is None or _is_tag_like(part):
            tags.append(part)
        else:
            head.append(part)
    bare = _FEAT_TAIL.sub("", " - ".join(head))
    versions = frozenset(v for v in (version_of(t) for t in tags) if v is not None)
    return SongName(fold(bare), versions)


def _is_tag_like(part: str) -> bool:
    text = fold(part)
    return any(p.search(text) for _, p in _KINDS) or "remix" in text or "mix" in text.split()


def primary_artist(artist: str) -> str:
    """The first named artist (before "feat.", "&", ",", "x", ...), folded."""
    return fold(_ARTIST_SPLIT.split(artist.strip(), maxsplit=1)[0])


def same_artist(ours: str, theirs: str) -> bool:
    return fold(ours) == fold(theirs) or primary_artist(ours) == primary_artist(theirs)


def album_is_live(album: str) -> bool:
    text = fold(album)
    if _ALBUM_LIVE.search(text):
        return True
    return any(version_of(tag) == "live" for tag in _BRACKETED.findall(album))


def matches(artist: str, title: str, hit: SongHit) -> bool:
    """Whether ``hit`` is the recording of ``artist`` - ``title``."""
    if not fold(artist) or not fold(title) or not same_artist(artist, hit.artist):
        return False
    ours, theirs = read_title(title), read_title(hit.title)
    if not ours.bare or ours.bare != theirs.bare:
        return False
    their_versions = set(theirs.versions)
    if hit.album and album_is_live(hit.album):
        their_versions.add("live")
    return ours.versions == their_versions


def search_words(artist: str, title: str) -> tuple[str, str]:
    """What to search for: the primary artist and the bare title as the station wrote them
    (accents kept), with "live" when the title says it. "feat. X", "(Radio Edit)" and other
    labels are left out: a search requires every word, and the listing may not carry them."""
    main = _FEAT_ARTIST.split(artist.strip(), maxsplit=1)[0].strip() or artist.strip()
    parts = _DASH_PART.split(_BRACKETED.sub(" ", title))
    head = [parts[0], *(p for p in parts[1:] if version_of(p) is not None and not _is_tag_like(p))]
    bare = " ".join(_FEAT_TAIL.sub("", " - ".join(head)).split()) or title.strip()
    if "live" in read_title(title).versions:
        bare += " live"
    return main, bare


def best_match(artist: str, title: str, hits: Sequence[SongHit]) -> SongHit | None:
    """The first hit whose title is word for word the same, else the first that matches."""
    found = [hit for hit in hits if matches(artist, title, hit)]
    exact = [hit for hit in found if fold(hit.title) == fold(title)]
    chosen = exact or found
    return chosen[0] if chosen else None
