"""Per-subscription filters: which plays a channel wants announced.

A jingle (:mod:`bot.programme.jingles`: an item shorter than 30 s, a live show never) is
announced in neither mode: a post would give a station ID its own Listen and ❤, and a card
would show it for a few seconds under a "Next" line that already leaves it out. The card stays
on the track before it, as "Next" and the playlist treat jingles.
"""

from __future__ import annotations

from ..guard.patterns import matches
from ..programme.jingles import is_jingle
from ..station import Play
from ..storage import Subscription


def skip_reason(sub: Subscription, play: Play, item_type: str | None = None) -> str | None:
    """Why ``sub`` does not want ``play`` announced, or None when it does."""
    if play.live and not sub.announce_live:
        return "live shows off"
    if not play.live and is_jingle(play.duration, ()):
        return "a jingle"
    too_short = play.duration is not None and play.duration.total_seconds() < sub.min_seconds
    if sub.min_seconds and not play.live and too_short:
        return "shorter than the minimum"
    if item_type and item_type.upper() in {t.upper() for t in sub.skip_item_types}:
        return f"item type {item_type}"
    texts = (play.display, play.file or "")
    if sub.skip_pattern and any(matches(sub.skip_pattern, text) for text in texts if text):
        return "matches the skip pattern"
    return None
