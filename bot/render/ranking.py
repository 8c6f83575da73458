"""The one row format of ranked tracks, shared by ``/top`` and the weekly recap.

``🥇 **Harbour Lights** · The Lanterns · 517 plays``: a medal for the first three tracks, then
``4\\.`` (escaped, so Discord's markdown does not turn rows 4 and 5 into a numbered list that
restarts at 1). Live shows are not a contest: they get no medal and no rank.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..util.i18n import ENGLISH, Lang
from ..util.text import clip, isolate, safe
from .embeds import FIELD_VALUE

MEDALS = ("🥇", "🥈", "🥉")
Row = tuple[str, str | None, int]  # (title, artist, count)


def counted(unit: str, count: int, lang: Lang = ENGLISH) -> str:
    """``3 plays``, in ``lang`` (a live show's airings are the recap's)."""
    if unit == "plays":
        return lang.tn("{count} play", "{count} plays", count)
    if unit == "likes":
        return lang.tn("{count} like", "{count} likes", count)
    return lang.tn("on air once", "on air {count} times", count)


def track(title: str, artist: str | None) -> str:
    name = f"**{isolate(safe(title, limit=70, fallback='?'))}**"
    if not artist:
        return name
    return f"{name} · {isolate(safe(artist, limit=50))}"


def ranked(
    rows: Sequence[Row], unit: str, *, medals: bool = True, limit: int = 10, lang: Lang = ENGLISH
) -> str:
    """Rows of ``rank track · count`` (``medals``: ranks for a contest; live shows have none)."""
    lines = []
    for index, (title, artist, count) in enumerate(rows[:limit]):
        entry = f"{track(title, artist)} · {counted(unit, count, lang)}"
        if medals:
            rank = MEDALS[index] if index < len(MEDALS) else f"{index + 1}\\."
            entry = f"{rank} {entry}"
        lines.append(entry)
    return clip("\n".join(lines), FIELD_VALUE)
