"""The embed builder and safe text: never over a Discord limit, never a ping."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.render import embeds, station_embeds
from bot.render.text import safe
from bot.station import StationInfo

HOSTILE_BITS = [
    "@everyone",
    "@here",
    "<@123456789012345678>",
    "<@&123456789012345678>",
    "<#1234>",
    "**",
    "__",
    "~~",
    "||",
    "`",
    "```",
    "> ",
    "# ",
    "- ",
    "1. ",
    "[x](https://evil.example)",
    "\u202e",
    "\u2067",
    "\u200b",
    "\u200d",
    "\ufeff",
    "\n",
    "\\",
    "https://x.example",
    "ﷺ",
    "مرحبا",
    "Ω",
    "🎵",
]
hostile = st.lists(st.sampled_from(HOSTILE_BITS) | st.text(max_size=50), max_size=40).map(
    "".join
) | st.just("@everyone " * 1000)


def _no_ping(text: str) -> None:
    assert not re.search(r"@(everyone|here)", text)
    assert not re.search(r"<@[!&]?\d+>", text)
    for char in ("\u202e", "\u2067", "\u200d", "\ufeff"):
        assert char not in text


@settings(max_examples=200, deadline=None)
@given(hostile)
def test_safe_text_is_inert(value):
    text = safe(value, limit=256)
    assert len(text) <= 256
    _no_ping(text)
    assert "](" not in text.replace("\\]", "")


def _info(title: str, artist: str, extra: str) -> StationInfo:
    raw = {
        "station_name": extra,
        "nowplaying": f"{artist} - {title}",
        "nexttrack": extra * 3,
        "listeners": 5,
        "currenttrack_info": {
            "@attributes": {"ARTIST": artist, "TITLE": title, "ALBUM": extra, "YEAR": extra}
        },
        "playback": {"pos": 1000, "len": 5000},
        "links": {
            "artwork": "https://a.example/art.png",
            "stationlogo": "javascript:alert(1)",
            "page": extra,
        },
        "recent": [{"title": f"{artist} - {title}", "started": "2026-01-01 10:00:00"}] * 10,
        "station_description": extra * 50,
        "station_genre": extra,
    }
    return StationInfo.parse(raw, UTC, datetime(2026, 1, 1, 10, 0, 1, tzinfo=UTC))


def _check(embed) -> None:
    data = embed.to_dict()
    assert len(embed) <= embeds.TOTAL
    assert len(data.get("title", "")) <= embeds.TITLE
    assert len(data.get("description", "")) <= embeds.DESCRIPTION
    assert len(data.get("fields", [])) <= embeds.FIELDS
    for field in data.get("fields", []):
        assert len(field["name"]) <= embeds.FIELD_NAME and len(field["value"]) <= embeds.FIELD_VALUE
    assert len(data.get("footer", {}).get("text", "")) <= embeds.FOOTER
    assert len(data.get("author", {}).get("name", "")) <= embeds.AUTHOR
    for key in ("image", "thumbnail"):
        if key in data:
            assert data[key]["url"].startswith(("https://", "attachment://"))
    _no_ping(str(data))


def _check_view(view) -> None:
    if view is None:
        return
    assert len(view.children) <= embeds.COMPONENTS
    for item in view.children:
        assert len(item.label or "") <= embeds.BUTTON_LABEL
        assert item.url.startswith(("http://", "https://"))


@settings(max_examples=60, deadline=None)
@given(hostile, hostile, hostile)
def test_every_station_embed_stays_within_limits(title, artist, extra):
    info = _info(title or "x", artist, extra)
    embed, view = station_embeds.nowplaying(info, extra, stale=True)
    _check(embed)
    _check_view(view)
    _check(station_embeds.recent(info, extra, 20))
    _check(station_embeds.station_embed(info, extra))
    embed, view = station_embeds.listen_embed(info, extra)
    _check(embed)
    _check_view(view)
    play = info.current_play()
    if play is not None:
        embed, view = station_embeds.announcement(info, play, extra)
        _check(embed)


def test_builder_drops_fields_to_fit_6000():
    builder = embeds.EmbedBuilder("t" * 300, "d" * 5000)
    for index in range(30):
        builder.field(f"name {index}", "v" * 2000)
    embed = builder.build()
    assert len(embed) <= 6000 and len(embed.fields) <= 25
    assert len(embed.title or "") == 256


def test_link_view_limits():
    links = [(f"label {'x' * 100} {i}", f"https://example.org/{i}") for i in range(40)]
    links.insert(0, ("bad", "javascript:alert(1)"))
    view = embeds.link_view(links)
    assert view is not None and len(view.children) == 25
    rows = [item.row for item in view.children]
    assert max(rows.count(r) for r in set(rows)) <= 5
