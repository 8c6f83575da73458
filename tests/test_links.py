"""``safe_url``: every URL OnAir sends is one Discord accepts, or it is left out.

The oracle is the fake Discord's own reading of ``format: uri`` (``tests/support/discord_uri``),
written separately from the bot's check: whatever ``safe_url`` lets through, the fake accepts."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.render import alert_embeds, station_embeds
from bot.render import templated as announce
from bot.render.embeds import cache_busted
from bot.shows.text import event_location
from bot.station import StationInfo
from bot.ui.streams import with_more_streams
from bot.util.links import BUTTON_URL, EMBED_URL, EVENT_LOCATION, TEXT_URL, safe_url
from bot.util.text import bare_link, masked_link

from .support import discord_rules as rules
from .support.discord_uri import uri_scheme

ISSUE_27 = "https://r.example/m>[Free](https://phish.example/y)"


@pytest.mark.parametrize(
    "url",
    [
        "https://c5.radioboss.fm/w/artwork/123.png",
        "http://c5.radioboss.fm:8000/stream",
        "https://c5.radioboss.fm/p/1?who=@x&a=(b)#top",
        "https://[2001:db8::1]:8443/stream",
        "https://127.0.0.1/x",
        "https://example.com/%41",
        "HTTPS://EXAMPLE.COM/",
    ],
)
def test_a_valid_http_url_is_sent_as_it_is(url):
    assert safe_url(url, BUTTON_URL) == url


@pytest.mark.parametrize(
    "url",
    [
        ISSUE_27,
        "https://r.example/z>[F](https://phish.example)",
        "https://r.example/a b",
        'https://r.example/"x"',
        "https://r.example/<x>",
        "https://r.example/{x}|^`\\",
        "https://r.example/[x]",
        "https://r.example/%zz",
        "https://r.example/a\nb",
        "https://r.example/\u202e",
        "https://exämple.com/",  # an internationalised host could pass for another
        "https://x.example@everyone",
        "https://user:pw@c9.radioboss.fm/p/1",
        "https://:8443/x",
        "https:///x",
        "https://[::1/x",
        "https://[fe80::1%25eth0]/",
        "https://[::g]/",
        "https://r.example:70000/",
        "https://r.example:/",
        "javascript:alert(1)",
        "discord://-/channels/1/2",  # a button could take it; OnAir sends only http(s)
        "ftp://r.example/x",
        "//r.example/x",
        "r.example/x",
        "",
        None,
    ],
)
def test_a_broken_or_hostile_url_is_left_out(url):
    assert safe_url(url, EMBED_URL) is None


def test_the_limit_is_the_places_own():
    base = "https://example.com/"
    at_limit = base + "a" * (BUTTON_URL - len(base))
    assert safe_url(at_limit, BUTTON_URL) == at_limit
    assert safe_url(at_limit + "a", BUTTON_URL) is None
    assert safe_url(at_limit + "a", EMBED_URL) == at_limit + "a"
    assert safe_url("https://" + "a" * 200, EVENT_LOCATION) is None


def test_https_only_refuses_plain_http():
    assert safe_url("http://r.example/a.png", EMBED_URL, https_only=True) is None
    assert safe_url("https://r.example/a.png", EMBED_URL, https_only=True) is not None


def test_surrounding_whitespace_goes_and_non_ascii_after_the_host_is_encoded():
    assert safe_url("  https://r.example/x \n", BUTTON_URL) == "https://r.example/x"
    encoded = safe_url("https://r.example/Beyoncé/Ж.png?q=ü#é", EMBED_URL)
    assert encoded == "https://r.example/Beyonc%C3%A9/%D0%96.png?q=%C3%BC#%C3%A9"
    assert unquote(encoded) == "https://r.example/Beyoncé/Ж.png?q=ü#é"
    assert safe_url("https://r.example/\ud800", EMBED_URL) is None  # a lone surrogate
    # Encoding makes it longer: the limit holds after it.
    assert safe_url("https://r.example/" + "é" * 100, BUTTON_URL) is None


def test_work_is_bounded_whatever_the_input():
    assert safe_url("https://r.example/" + "a" * 10_000_000, EMBED_URL) is None
    assert safe_url("https://" + "a" * 4000 + "!", EMBED_URL) is None


# Properties --------------------------------------------------------------------------------

URL_BITS = [
    "https://",
    "http://",
    "HTTPS://",
    "r.example",
    "[::1]",
    "[",
    "]",
    ":",
    ":8443",
    "/",
    "?",
    "#",
    "@",
    "%",
    "%41",
    "%e2%82%ac",
    "<",
    ">",
    '"',
    " ",
    "(",
    ")",
    "é",
    "Ж",
    "\u202e",
    "\n",
    "\x00",
    "\ud800",
    "javascript:",
    "[Free](https://phish.example/y)",
]
urlish = st.lists(st.sampled_from(URL_BITS) | st.text(max_size=8), max_size=12).map("".join)


@settings(max_examples=500, deadline=None)
@given(urlish, st.sampled_from([EVENT_LOCATION, BUTTON_URL, EMBED_URL]), st.booleans())
def test_whatever_passes_is_a_uri_discord_accepts(text, limit, https_only):
    url = safe_url(text, limit, https_only=https_only)
    if url is None:
        return
    assert len(url) <= limit
    assert uri_scheme(url) in (("https",) if https_only else ("http", "https"))
    assert url.isascii()
    assert url.isprintable()
    assert safe_url(url, limit, https_only=https_only) == url  # a second pass changes nothing


_segment = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@",
    max_size=12,
)
_host = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?(\.[a-z]{2,6}){0,3}", fullmatch=True)


@st.composite
def valid_urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https"]))
    port = draw(st.one_of(st.just(""), st.integers(1, 65535).map(lambda p: f":{p}")))
    path = "".join("/" + s for s in draw(st.lists(_segment, max_size=5)))
    query = draw(st.one_of(st.just(""), _segment.map(lambda q: "?" + q)))
    fragment = draw(st.one_of(st.just(""), _segment.map(lambda f: "#" + f)))
    return f"{scheme}://{draw(_host)}{port}{path}{query}{fragment}"


@settings(max_examples=300, deadline=None)
@given(valid_urls())
def test_every_valid_http_url_within_the_limit_is_kept_unchanged(url):
    assert uri_scheme(url) in ("http", "https")  # the oracle agrees it is valid
    assert safe_url(url, EMBED_URL) == url


# Where the URLs go -------------------------------------------------------------------------

LINK_FIELDS = ("artwork", "stationlogo", "page", "port443", "ssl", "http", "m3u", "m3u_ssl")


def _info(links: dict[str, str], website: str) -> StationInfo:
    raw = {
        "station_name": "Main FM",
        "station_url": website,
        "nowplaying": "Artist - Title",
        "listeners": 5,
        "currenttrack_info": {"@attributes": {"ARTIST": "Artist", "TITLE": "Title"}},
        "playback": {"pos": 1000, "len": 5000},
        "links": {
            **links,
            "mounts": [{"name": "/m", "ssl": links.get("ssl", ""), "http": links.get("http", "")}],
        },
        "recent": [{"title": "Artist - Title", "started": "2026-01-01 10:00:00"}] * 3,
    }
    return StationInfo.parse(raw, UTC, datetime(2026, 1, 1, 10, 0, 1, tzinfo=UTC))


def _accepted(embed, view) -> None:
    """What the bot would send, judged by the fake Discord's rules for a message."""
    body = {"embeds": [embed.to_dict()]}
    if view is not None:
        body["components"] = view.to_components()
    errors = rules.FormErrors()
    rules.check_message(body, errors)
    assert not errors, errors.tree
    assert "phish.example" not in str(body)


hostile_url = st.sampled_from(
    [
        ISSUE_27,
        "https://r.example/a b",
        "https://r.example/%zz",
        "https://:8443/x",
        "javascript:alert(1)",
        "https://x.example@everyone",
        "https://r.example/" + "a" * 3000,
        "https://r.example/ok.png",
        "http://r.example/ok",
    ]
) | urlish.filter(lambda s: "phish" not in s)


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({key: hostile_url for key in LINK_FIELDS}), hostile_url)
def test_every_render_with_hostile_station_links_is_accepted(links, website):
    info = _info(links, website)
    for stale in (False, True):
        embed, view = station_embeds.nowplaying(info, "Main FM", stale=stale)
        _accepted(embed, view)
    _accepted(station_embeds.recent(info, "Main FM", 3), None)
    _accepted(station_embeds.station_embed(info, "Main FM"), None)
    embed, view = station_embeds.listen_embed(info, "Main FM")
    view = with_more_streams(view, "main", station_embeds.more_streams(info.links))
    _accepted(embed, view)
    play = info.current_play()
    assert play is not None
    for style, card in (("compact", False), ("full", False), ("full", True)):
        embed, view = station_embeds.announcement(info, play, "Main FM", style=style, card=card)
        _accepted(embed, view)
    alert = alert_embeds.alert_message(
        {"kind": "live_start", "station_name": "Main FM", "title": "Show", "listen": links["ssl"]}
        | {"page": links["page"], "at": "2026-01-01T10:00:00+00:00"}
    )
    _accepted(alert.embed, alert.view)
    listen_url = announce.values(info, play, "Main FM", 0, markdown=True)["listen_url"]
    assert "phish" not in listen_url
    assert listen_url == "" or safe_url(listen_url, TEXT_URL) == listen_url
    location = event_location("Main FM", info.links.listen)
    assert 1 <= len(location) <= EVENT_LOCATION
    assert "phish" not in location
    assert not location.startswith(("https://", "http://")) or safe_url(
        location, EVENT_LOCATION, https_only=True
    )


def test_text_links_cannot_close_early_or_add_a_link():
    assert masked_link("Website", ISSUE_27) is None
    assert bare_link(ISSUE_27) is None
    assert masked_link("Website", "https://r.example/a_(b)") == (
        "[Website](https://r.example/a_%28b%29)"
    )
    assert bare_link("https://r.example/é") == "<https://r.example/%C3%A9>"
    assert masked_link("W", "https://r.example/" + "a" * TEXT_URL) is None


def test_cache_busting_keeps_a_fragment_last_and_the_url_valid():
    assert cache_busted("https://r.example/a.png#f", "k") == (
        "https://r.example/a.png?onair=13fbd79c3d#f"
    )
    assert cache_busted(ISSUE_27, "k") is None
    longest = "https://r.example/" + "a" * (EMBED_URL - len("https://r.example/"))
    assert cache_busted(longest, "k") == longest  # no room to bust: the artwork still shows
