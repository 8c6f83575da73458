"""The embed builder and safe text: never over a Discord limit, never a ping."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.programme.jingles import SkipRules
from bot.render import embeds, station_embeds
from bot.station import StationInfo
from bot.ui.streams import with_more_streams
from bot.util.i18n import Translator
from bot.util.text import safe, search_url

from .support import discord_rules as rules

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


def pieced(bits: list[str], *, text: int, pieces: int, extreme: str) -> st.SearchStrategy[str]:
    """Strings of up to ``pieces`` pieces, each one of ``bits`` or any text up to ``text``
    long; or the one ``extreme`` string."""
    return st.lists(st.sampled_from(bits) | st.text(max_size=text), max_size=pieces).map(
        "".join
    ) | st.just(extreme)


hostile = pieced(HOSTILE_BITS, text=50, pieces=40, extreme="@everyone " * 1000)


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
        assert len(field["name"]) <= embeds.FIELD_NAME
        assert len(field["value"]) <= embeds.FIELD_VALUE
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
    _, listen, view = station_embeds.listen_embed(info, extra)
    if listen is not None:
        _check(listen)
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
    assert len(embed) <= 6000
    assert len(embed.fields) <= 25
    assert len(embed.title or "") == 256


def test_link_view_limits():
    links = [(f"label {'x' * 100} {i}", f"https://example.org/{i}") for i in range(40)]
    links.insert(0, ("bad", "javascript:alert(1)"))
    view = embeds.link_view(links)
    assert view is not None
    assert len(view.children) == 25
    rows = [item.row for item in view.children]
    assert max(rows.count(r) for r in set(rows)) <= 5


@settings(max_examples=30, deadline=None)
@given(hostile, hostile, hostile)
def test_full_announcements_and_history_stay_within_limits(title, artist, extra):
    info = _info(title or "x", artist, extra)
    play = info.current_play()
    if play is not None:
        embed, view = station_embeds.announcement(info, play, extra, style="full")
        _check(embed)
        _check_view(view)
        assert len(embed.url or "") <= 512
    moment = datetime(2026, 1, 1, tzinfo=UTC)
    heading = safe(extra, limit=200)  # the cog makes the heading safe
    _check(station_embeds.history_embed([(moment, title, artist)] * 40, heading, moment))


def test_title_links_to_a_search_for_the_track():
    assert search_url("Sigur Rós", "Hoppípolla & more?") == (
        "https://www.google.com/search?q=Sigur+R%C3%B3s+Hopp%C3%ADpolla+%26+more%3F"
    )
    long = search_url("Ж" * 400, "Ж" * 400)
    assert long is not None
    assert len(long) <= 512
    assert long.startswith("https://")
    assert search_url(None, "\u202e") is None  # nothing left to search for
    info = _info("Harbour Lights", "The Lanterns", "Main")
    play = info.current_play()
    assert play is not None
    for style in station_embeds.STYLES:
        embed, _ = station_embeds.announcement(info, play, "Main", style=style)
        assert embed.url == "https://www.google.com/search?q=The+Lanterns+Harbour+Lights"


def _listen_view(info: StationInfo):
    content, embed, view = station_embeds.listen_embed(info, "S")
    view = with_more_streams(view, "s", station_embeds.more_streams(info.links))
    assert view is not None
    errors = rules.FormErrors()
    body = {"content": content or "", "components": view.to_components()}
    if embed is not None:
        body["embeds"] = [embed.to_dict()]
    rules.check_message(body, errors)
    assert not errors, errors.body()  # within Discord's rules (select menus included)
    return embed, view


def test_listen_overflow_goes_to_masked_links_never_twice():
    mounts = [{"name": f"/m{i}", "ssl": f"https://s.example/m{i}(x)"} for i in range(15)]
    info = StationInfo.parse(
        {"station_name": "S", "links": {"ssl": "https://s.example/l", "mounts": mounts}},
        UTC,
        datetime(2026, 1, 1, tzinfo=UTC),
    )
    embed, view = _listen_view(info)
    button, menu = view.children
    assert button.label == "Listen"
    assert len(menu.item.options) == 15
    assert embed is None  # nothing past the menu: one line of text, no near-empty box
    # 40 distinct links: the first button, 25 in the menu, the other 14 as masked links.
    many = [{"name": f"/m{i}", "ssl": f"https://s.example/m{i}(x)"} for i in range(40)]
    info = StationInfo.parse(
        {"station_name": "S", "links": {"mounts": many}}, UTC, datetime(2026, 1, 1, tzinfo=UTC)
    )
    embed, view = _listen_view(info)
    button, menu = view.children
    assert len(menu.item.options) == 25
    assert len({o.value for o in menu.item.options}) == 25
    assert embed is not None
    masked = re.findall(r"\[([^\]]+)\]\((https://[^)\s]+)\)", embed.description or "")
    assert len(masked) == 14
    assert all("%28x%29" in url for _, url in masked)
    offered = {button.url, *(c.url for c in station_embeds.more_streams(info.links)[:25])}
    assert not offered & {url.replace("%28", "(").replace("%29", ")") for _, url in masked}


def test_more_streams_labels_are_plain_and_bounded():
    name = "/" + "\u202eévil\u200b" * 40
    links = {"ssl": "https://s.example/l", "mounts": [{"name": name, "ssl": "https://s.example/x"}]}
    info = StationInfo.parse({"links": links}, UTC, datetime(2026, 1, 1, tzinfo=UTC))
    (choice,) = station_embeds.more_streams(info.links)
    assert choice.label.startswith("Stream: évil")
    assert "\u202e" not in choice.label
    assert "\u200b" not in choice.label
    assert len(choice.label) <= 100
    assert len(choice.description) <= 100
    _listen_view(info)


def test_recent_is_on_the_readers_clock_with_no_station_day_line_among_the_rows():
    """Discord draws each <t:…> in the reader's zone: a line at the station's midnight fell
    inside a Tokyo reader's morning ("Saturday, station time" above their Sunday 07:58)."""
    berlin = ZoneInfo("Europe/Berlin")
    raw = {
        "nowplaying": "A - Now",
        "recent": [
            {"title": "A - Now", "started": "2026-11-23 00:05:00"},
            {"title": "B - Before midnight", "started": "2026-11-22 23:58:00"},
            {"title": "C - The evening before", "started": "2026-11-22 09:00:00"},
        ],
    }
    a, b, c = (
        int(datetime(2026, 11, 22, h, m, tzinfo=UTC).timestamp())
        for h, m in ((23, 5), (22, 58), (8, 0))
    )
    info = StationInfo.parse(raw, berlin, datetime(2026, 11, 22, 23, 6, tzinfo=UTC))
    lines = (station_embeds.recent(info, "S", 10).description or "").splitlines()
    # Times alone for the last hours; a row 14 h older than the one above it, with its date.
    assert lines == [
        f"<t:{a}:t> **▶ A - Now**",
        f"<t:{b}:t> B - Before midnight",
        f"<t:{c}:f> C - The evening before",
    ]
    # Read two days later: the first row carries its date (the reader's), the rest run on.
    info = StationInfo.parse(raw, berlin, datetime(2026, 11, 25, 10, tzinfo=UTC))
    lines = (station_embeds.recent(info, "S", 10).description or "").splitlines()
    assert lines[:2] == [f"<t:{a}:f> **▶ A - Now**", f"<t:{b}:t> B - Before midnight"]
    assert not any("──" in line or "station time" in line for line in lines)


def test_a_day_line_keeps_its_closing_rule_on_its_last_word():
    """On a 400 px phone the German line wraps; the "──" must not sit alone on a line."""
    translator = Translator.load()
    for code in ("en", "de", "pt_BR", "es", "fr"):
        line = station_embeds.day_heading(date(2026, 11, 28), translator.lang(code))
        assert line.startswith("──\u00a0"), (code, line)
        assert line.endswith("\u00a0──"), (code, line)
        assert " ──" not in line
        assert "── " not in line


def test_recent_leaves_jingles_out_as_next_and_the_playlist_do():
    raw = {
        "nowplaying": "A - Now",
        "recent": [
            {"title": "A - Now", "started": "2026-11-23 10:10:00"},
            {"title": "Station ID", "started": "2026-11-23 10:09:52"},  # 8 s: a jingle
            {"title": "B - Before", "started": "2026-11-23 10:06:00"},
            {"title": "Sweeper 2", "started": "2026-11-23 10:02:00"},  # a skip pattern's
            {"title": "C - Earlier", "started": "2026-11-23 10:01:00"},
        ],
    }
    info = StationInfo.parse(raw, UTC, datetime(2026, 11, 23, 10, 11, tzinfo=UTC))
    skip = SkipRules(patterns=("(?i)^sweeper",))
    embed = station_embeds.recent(info, "S", 10, skip=skip)
    lines = (embed.description or "").splitlines()
    assert [line.split("> ", 1)[1] for line in lines] == [
        "**▶ A - Now**",
        "B - Before",
        "C - Earlier",
    ]
    assert embed.footer.text == "3 of 3 recent tracks · ▶ on air now"


def test_stats_chart_is_dark_and_untitled():
    from io import BytesIO

    from matplotlib.image import imread

    from bot.render.chart import BACKGROUND, chart_words, render_stats_chart
    from bot.station import DayStats

    days = [DayStats(date(2026, 11, d), 100 * d, 50 * d) for d in range(1, 31)]
    pixels = imread(BytesIO(render_stats_chart(days)), format="png")
    assert pixels.shape[:2] == (360, 800)
    corner = tuple(round(float(v) * 255) for v in pixels[-1, -1, :3])
    assert corner == tuple(int(BACKGROUND[i : i + 2], 16) for i in (1, 3, 5))
    bright = (pixels[..., :3].mean(axis=2) > 0.9).mean()
    assert bright < 0.02  # no white canvas: only text and lines are light
    # Today, so far: its last stretch drawn otherwise (dashed, named on a legend row of its
    # own: 40 px taller), not as a plain drop.
    drawn = render_stats_chart(days, today_last=True)
    partial = imread(BytesIO(drawn), format="png")
    assert partial.shape[:2] == (400, 800)
    assert "today, so far" in chart_words(drawn)
    assert "today, so far" not in chart_words(render_stats_chart(days))


def test_nowplaying_bar_fits_a_phone_and_a_stale_card_is_grey_without_the_live_parts():
    info = _info("Title", "Artist", "S")
    fresh, _ = station_embeds.nowplaying(info, "S", stale=False)
    bar_line = next(line for line in fresh.description.splitlines() if "▰" in line)
    assert set(bar_line) <= {"▰", "▱"}  # the bar alone: the times go on the meta line
    assert len(bar_line) == station_embeds.BAR_WIDTH
    assert "`0:01\u00a0/\u00a00:05`" in fresh.description  # never broken on a phone
    assert fresh.colour == embeds.BRAND
    stale, _ = station_embeds.nowplaying(info, "S", stale=True)
    assert stale.colour == embeds.STALE
    assert "▰" not in stale.description
    assert "▱" not in stale.description
    assert "\u00a0/\u00a0" not in stale.description
    assert "started" not in stale.description
    assert "Next" not in stale.description
    assert "The station is not answering" in stale.description
    assert stale.footer.text == "S"  # no listener count of the past


def test_an_arabic_title_is_isolated_so_the_duration_stays_after_it():
    from bot.programme.timeline import Slot
    from bot.util.text import isolate

    arabic = "نور الهدى - ليل المدينة"
    assert isolate(arabic) == f"\u2068{arabic}\u2069"
    assert isolate("Latin title") == "Latin title"  # nothing to isolate
    raw = {
        "TRACK": [
            {"ARTIST": "نور الهدى", "TITLE": "ليل المدينة", "DURATION": "04:40"},
            {"ARTIST": "A", "TITLE": "B", "DURATION": "03:00"},
        ]
    }
    from bot.station import Playlist

    playlist = Playlist.parse(raw, UTC, datetime(2026, 1, 1, tzinfo=UTC))
    rows = [Slot(item, "upcoming") for item in playlist.items]
    embed = station_embeds.playlist_page(rows, 0, 10, "نور FM", UTC, date(2026, 1, 1))
    assert f"\u2068{arabic}\u2069 (4:40)" in embed.description
    assert embed.title == "Playlist of \u2068نور FM\u2069"
    assert "` A - B (3:00)" in embed.description


def test_one_recent_track_and_one_playlist_item_are_singular():
    raw = {"nowplaying": "A - Now", "recent": [{"title": "A - Now", "started": "2026-11-23 10:10"}]}
    info = StationInfo.parse(raw, UTC, datetime(2026, 11, 23, 10, 11, tzinfo=UTC))
    embed = station_embeds.recent(info, "S", 10)
    assert embed.footer.text == "1 of 1 recent track · ▶ on air now"
    from bot.programme.timeline import Slot
    from bot.station import Playlist

    raw_list = {"TRACK": [{"ARTIST": "A", "TITLE": "B", "DURATION": "03:00"}]}
    playlist = Playlist.parse(raw_list, UTC, datetime(2026, 1, 1, tzinfo=UTC))
    slot = Slot(playlist.items[0], "upcoming")
    page = station_embeds.playlist_page([slot], 0, 10, "S", UTC, today=date(2026, 1, 1))
    assert page.footer.text == "Page 1/1 · 1 item"
