"""Listener commands through the real discord.py against the fake Discord: what each command
sends and says, its menus, charts and pages, and titles that could ping. When Discord itself
fails (429, 403, a reconnect) see test_bot_discord_faults.py.
"""

from __future__ import annotations

import re
from urllib.parse import quote_plus

import pytest

from bot import errors
from bot.render import station_embeds
from bot.simulator import Programme
from bot.simulator.library import LibraryItem

from .support.botenv import STATION_KEY, running_bot
from .support.discord_http import all_text
from .support.discord_rules import (
    AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE,
    DEFERRED_CHANNEL_MESSAGE,
    EPHEMERAL,
    STRING_SELECT,
    UPDATE_MESSAGE,
)

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


async def test_bot_logs_in_and_syncs(onair):
    names = sorted(c["name"] for c in onair.fake.commands)
    assert names == [
        "history",
        "join",
        "leave",
        "listen",
        "nowplaying",
        "onair",
        "playlist",
        "recent",
        "request",
        "requests",
        "station",
        "stats",
        "top",
    ]
    assert onair.fake.token == onair.fake.expected_token
    assert onair.fake.sent("PUT", r"^/applications/\d+/commands$")  # global sync by default


async def test_nowplaying_wire_body(onair):
    iid = await onair.fake.slash("nowplaying")
    message = await onair.fake.final_message(iid)
    embed = message["embeds"][0]
    airing = onair.sim.station(1).programme.at(onair.sim.clock())
    assert embed["title"] == airing.item.title
    # Facts on description lines (no narrow inline fields), the station once, in the footer.
    assert "fields" not in embed
    assert "author" not in embed
    lines = embed["description"].splitlines()
    assert lines[0] == f"**{airing.item.artist}** · *{airing.item.album}* ({airing.item.year})"
    assert set(lines[1]) <= {"▰", "▱"}  # the bar alone on its line (fits a phone)
    assert "▰" in lines[1]
    assert lines[2].startswith("🎵 AutoDJ · ")
    # Position / length, and "Next at" with its time, held together by no-break spaces (they
    # broke apart on a 400 px phone).
    assert re.search(r" · `\d+:\d\d\u00a0/\u00a0\d+:\d\d`$", lines[2])
    assert airing.item.genre in lines[2]
    info = onair.bot.registry.clients["main"].last_info
    assert lines[3].startswith("Next\u00a0at\u00a0<t:")
    assert lines[3].endswith(f":t>: {info.next_display}")
    # The configured name (as the station option lists it), not the station's own "OnAir Radio".
    assert embed["footer"]["text"] == f"Main FM · {info.listener_count} listening"
    assert embed["url"] == "https://www.google.com/search?q=" + quote_plus(
        f"{airing.item.artist} {airing.item.title}"
    )
    assert embed["thumbnail"]["url"].startswith(
        "https://c9.radioboss.fm/artwork/1/current.png?onair="
    )
    buttons = [b for row in message["components"] for b in row["components"]]
    assert [b["label"] for b in buttons] == ["Listen", "Web player", "Like"]  # M3U, PLS: /listen
    assert all(b["url"].startswith("https://") for b in buttons if "url" in b)
    assert buttons[-1]["custom_id"].startswith("onair:like:")
    assert buttons[-1]["emoji"]["name"] == "❤️"  # a real emoji
    assert message["allowed_mentions"] == {"parse": []}
    assert STATION_KEY not in all_text(onair.fake)


async def test_nowplaying_uses_cache_for_repeated_calls(live_simulator):
    # A cache that outlives the test: with the default 5 s, five answers on a slow loaded machine
    # could legitimately straddle an expiry and fetch twice.
    async with running_bot(live_simulator, cache_seconds=300) as onair:
        before = onair.sim.counters["info"]
        ids = [await onair.fake.slash("nowplaying") for _ in range(5)]
        for iid in ids:
            await onair.fake.final_message(iid)
        assert onair.sim.counters["info"] - before <= 1


async def test_recent_count_and_artwork(onair):
    iid = await onair.fake.slash("recent", {"count": 3})
    embed = (await onair.fake.final_message(iid))["embeds"][0]
    assert embed["description"].count("\n") == 2
    assert "ARTID" not in embed["thumbnail"]["url"]
    # 3 of the station's 10 recent plays, without the jingles among them.
    assert re.fullmatch(r"3 of [3-9] recent tracks · ▶ on air now", embed["footer"]["text"])


async def test_recent_count_out_of_range_is_rejected_by_discord_schema(onair):
    command = next(c for c in onair.fake.commands if c["name"] == "recent")
    count = next(o for o in command["options"] if o["name"] == "count")
    assert (count["min_value"], count["max_value"]) == (1, 20)


async def test_listen_has_two_buttons_and_every_other_link_once_in_a_menu(onair):
    iid = await onair.fake.slash("listen")
    message = await onair.fake.final_message(iid)
    # One line of text, not a near-empty box; no link in the text.
    assert not message.get("embeds")
    assert message["content"] == "Tune in to **Main FM**:"
    first, second = message["components"]
    assert [b["label"] for b in first["components"]] == ["Listen", "Web player"]
    (menu,) = second["components"]
    assert menu["type"] == STRING_SELECT
    assert menu["placeholder"] == "More streams"
    labels = [o["label"] for o in menu["options"]]
    # Plain words: no protocol or mount jargon.
    assert not [label for label in labels if re.search(r"HTTP|M3U|PLS|Mount|/", label)]
    assert "Open in a media player" in labels
    assert "Stream: lofi" in labels
    # The mount the station's own links play ("/stream") is not offered again as a stream.
    assert "Stream: stream" not in labels
    info = onair.bot.registry.clients["main"].last_info
    urls = [info.links.listen, info.links.page]
    urls += [c.url for c in station_embeds.more_streams(info.links)]
    assert len(set(urls)) == len(urls)  # every link once, buttons and menu together
    assert info.links.pls in urls
    others = [m for m in info.links.mounts if m.ssl != info.links.ssl]
    assert [m.name for m in others] == ["/lofi"]
    assert all(m.ssl in urls and m.m3u_ssl in urls for m in others)


async def test_choosing_a_stream_in_the_menu_gives_its_link_privately(onair):
    iid = await onair.fake.slash("listen")
    await onair.fake.final_message(iid)
    message = onair.fake.original(iid)
    menu = message["components"][1]["components"][0]
    option = next(o for o in menu["options"] if o["label"] == "Stream: lofi")
    choice = await onair.fake.choose(message, menu["custom_id"], [option["value"]])
    reply = await onair.fake.final_message(choice)
    assert reply["flags"] & EPHEMERAL
    lofi = next(
        m for m in onair.bot.registry.clients["main"].last_info.links.mounts if "lofi" in m.name
    )
    assert f"<{lofi.ssl}>" in reply["content"]
    assert "**Stream: lofi**" in reply["content"]
    (button,) = reply["components"][0]["components"]
    assert button["url"] == lofi.ssl
    # The message with the menu is left as it was (nothing public changes).
    assert not onair.fake.sent("PATCH", rf"/messages/{message['id']}$")


async def test_station_card(onair):
    iid = await onair.fake.slash("station")
    embed = (await onair.fake.final_message(iid))["embeds"][0]
    assert embed["title"] == "Main FM"  # the configured name, as everywhere
    assert "fields" not in embed
    assert "Eclectic · 🎵 AutoDJ · " in embed["description"]
    assert "[Website](https://" in embed["description"]


async def test_stats_defers_and_attaches_chart(onair):
    iid = await onair.fake.slash("stats", {"period": "30d"})
    callback = await onair.fake.response(iid)
    assert callback.json["type"] == DEFERRED_CHANNEL_MESSAGE  # deferred first
    # Discord allows 15 minutes for the follow-up of a deferred answer. The first chart starts a
    # process that imports matplotlib: about a second alone, past 10 s on a loaded machine (seen
    # once at load 15-28 on 2 cores, two xdist workers among other suites).
    follow = await onair.fake.wait_request("POST", rf"^/webhooks/\d+/itoken-{iid}", within=60)
    body = follow[0].json
    embed = body["embeds"][0]
    assert embed["image"]["url"] == "attachment://stats.png"
    assert "fields" not in embed
    text = embed["description"]
    for words in ("sessions", "unique listeners", "h listened", "busiest day"):
        assert words in text
    # The 30 days end today: its partial count is said, not left to read as a collapse.
    assert "-# Today so far (station time): lower than a whole day." in text
    countries = text.split("**Top countries**\n")[1].splitlines()
    assert countries[0].startswith("🇩🇪")
    assert len(countries) == 6
    assert countries[-1].startswith("-# and ")
    assert "more countries" in countries[-1]
    _, filename, data = follow[0].files[0]
    assert filename == "stats.png"
    assert data.startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"from": "2026-13-01"}, "YYYY-MM-DD"),
        ({"from": "2026-03-10", "to": "2026-03-01"}, "after"),
        ({"from": "2020-01-01", "to": "2022-01-01"}, "the most is 366"),
        # Word joiners after the hyphens: no line breaks inside a date (pt-BR broke "2025-").
        (
            {"from": "2020-01-01", "to": "2022-01-01"},
            "`from:2021-\u206001-\u206001 to:2022-\u206001-\u206001`",
        ),
        ({"from": "2999-01-01", "to": "2999-01-02"}, "in the future"),
        ({"period": "7d", "from": "2026-01-01"}, "either"),
    ],
)
async def test_stats_bad_dates_are_ephemeral_and_named(onair, options, words):
    before = onair.sim.counters["stats"]
    iid = await onair.fake.slash("stats", options)
    callback = await onair.fake.response(iid)
    assert callback.json["type"] == CHANNEL_MESSAGE
    assert callback.json["data"]["flags"] & EPHEMERAL
    assert words in callback.json["data"]["content"]
    assert onair.sim.counters["stats"] == before


async def test_station_down_shows_last_known_state_then_friendly_error(onair):
    fresh = await onair.fake.final_message(await onair.fake.slash("nowplaying"))
    assert [b["label"] for row in fresh["components"] for b in row["components"]] == [
        "Listen",
        "Web player",
        "Like",
    ]
    onair.sim.inject("status", status=503)
    client = onair.bot.registry.clients["main"]
    client.forget_cached()
    message = await onair.fake.final_message(await onair.fake.slash("nowplaying"), within=30)
    last = message["embeds"][0]["description"].splitlines()[-1]
    assert re.fullmatch(r"⚠️ The station is not answering; last updated <t:\d+:R>\.", last)
    # Nothing on air to like, and no Listen to a stream nothing says still plays.
    assert not message.get("components")
    # Once Discord fills in "há 2 minutos", the Portuguese still reads ("são de há" did not).
    onair.fake.user_locales[onair.fake.owner_id] = "pt-BR"
    message = await onair.fake.final_message(await onair.fake.slash("nowplaying"), within=30)
    last = message["embeds"][0]["description"].splitlines()[-1]
    assert re.fullmatch(r"⚠️ A rádio não está respondendo; dados atualizados <t:\d+:R>\.", last)
    assert not message.get("components")
    del onair.fake.user_locales[onair.fake.owner_id]
    client.last_info = None
    client.forget_cached()
    iid = await onair.fake.slash("station")
    reply = await onair.fake.final_message(iid, within=30)
    assert reply["content"] == errors.STATION_UNAVAILABLE
    onair.sim.faults.clear()


async def test_bad_key_and_unknown_station_messages(onair):
    onair.sim.station(1).key = "rotated"
    iid = await onair.fake.slash("recent")
    reply = await onair.fake.final_message(iid)
    assert reply["flags"] & EPHEMERAL
    assert reply["content"] == errors.STATION_KEY_REFUSED
    iid = await onair.fake.slash("nowplaying", {"station": "nope"})
    reply = await onair.fake.final_message(iid)
    assert reply["flags"] & EPHEMERAL
    assert "don't know that station" in reply["content"]


async def test_autocomplete_lists_stations_visible_in_guild(live_simulator):
    async with running_bot(live_simulator, stations=2) as env:
        iid = await env.fake.autocomplete("nowplaying", "station", "")
        callback = await env.fake.response(iid)
        assert callback.json["type"] == AUTOCOMPLETE_RESULT
        choices = callback.json["data"]["choices"]
        assert [c["value"] for c in choices] == ["main", "second1"]
        iid = await env.fake.autocomplete("nowplaying", "station", "sec")
        callback = await env.fake.response(iid)
        assert [c["value"] for c in callback.json["data"]["choices"]] == ["second1"]
        other = env.fake.guilds[0]
        msg = await env.fake.final_message(
            await env.fake.slash("nowplaying", {"station": "second1"}, guild=other)
        )
        # The name the autocomplete listed is the name the answer uses.
        assert msg["embeds"][0]["footer"]["text"].startswith("Second 1 FM · ")


async def test_playlist_paginates_1000_items_only_for_invoker(onair):
    onair.sim.playlist_size = 1000
    iid = await onair.fake.slash("playlist")
    message = await onair.fake.final_message(iid)
    embed = message["embeds"][0]
    # Jingles (items under 30 s) are hidden: the pages hold the rest, ten a page.
    found = re.search(r"/(\d+) · (\d+) items · (\d+) jingles hidden", embed["footer"]["text"])
    assert found
    pages, items, hidden = map(int, found.groups())
    assert items + hidden == 1000
    assert hidden > 0
    assert pages == -(-items // 10)
    buttons = message["components"][0]["components"]
    assert buttons[0]["label"] == "⏮"
    assert f"/{pages}" in buttons[2]["label"]
    assert len(re.findall(r"<t:\d+:t>", embed["description"])) == 10  # ten items a page
    target = onair.fake.original(iid)
    page_before = buttons[2]["label"]

    click = await onair.fake.click(target, "pg:next")
    update = await onair.fake.response(click)
    assert update.json["type"] == UPDATE_MESSAGE
    new_label = update.json["data"]["components"][0]["components"][2]["label"]
    assert new_label != page_before

    stranger = await onair.fake.click(target, "pg:last", user_id=4242424242424242)
    refused = await onair.fake.response(stranger)
    assert refused.json["type"] == CHANNEL_MESSAGE
    assert refused.json["data"]["flags"] & EPHEMERAL
    assert "Only the person" in refused.json["data"]["content"]

    last = await onair.fake.click(target, "pg:last")
    update = await onair.fake.response(last)
    assert update.json["data"]["components"][0]["components"][2]["label"] == f"{pages}/{pages}"
    assert update.json["data"]["components"][0]["components"][3]["disabled"] is True

    # "Show jingles" lists all 1000, and keeps the reader on the rows they were reading (it
    # jumped back to the item on air).
    reading = re.findall(r"<t:\d+:t> [^\n]+", update.json["data"]["embeds"][0]["description"])[0]
    (toggle,) = message["components"][1]["components"]
    assert toggle["label"] == f"Show jingles ({hidden})"
    update = await onair.fake.response(await onair.fake.click(target, "pg:jingles"))
    data = update.json["data"]
    assert data["embeds"][0]["footer"]["text"].endswith(" · 1000 items")
    # 100 pages of 10, the first one short when the pages break where the row keeps its place
    assert re.fullmatch(r"\d+/10[01]", data["components"][0]["components"][2]["label"])
    assert reading in data["embeds"][0]["description"]
    assert data["components"][1]["components"][0]["label"] == "Hide jingles"
    update = await onair.fake.response(await onair.fake.click(target, "pg:jingles"))
    assert reading in update.json["data"]["embeds"][0]["description"]  # and back


async def test_show_jingles_keeps_on_air_and_up_next_where_they_were_on_the_page(onair):
    """Clicking "Show jingles" on the page that is playing: it jumped from 2/4 to 2/6, a page
    of what played before, and "On air" and "Up next" left it."""
    iid = await onair.fake.slash("playlist")
    message = await onair.fake.final_message(iid)
    target = onair.fake.original(iid)
    lines = message["embeds"][0]["description"].splitlines()
    on_air = next(i for i, line in enumerate(lines) if line.startswith("▶ **"))
    assert lines[on_air - 1] == "**On air**"
    assert lines[on_air + 1] == "**Up next**"  # the opening page shows what comes next
    (toggle,) = message["components"][1]["components"]
    assert toggle["label"].startswith("Show jingles (")
    pages_before = message["components"][0]["components"][2]["label"]
    for label in ("Hide jingles", toggle["label"]):  # shown, then hidden again
        update = await onair.fake.response(await onair.fake.click(target, "pg:jingles"))
        data = update.json["data"]
        assert data["components"][1]["components"][0]["label"] == label
        shown = data["embeds"][0]["description"].splitlines()
        # The item on air, on the same line of the page, with its headings around it.
        assert shown[on_air] == lines[on_air]
        assert shown[on_air - 1] == "**On air**"
        assert shown[on_air + 1] == "**Up next**"
    assert shown == lines  # and back: the page it was
    assert data["components"][0]["components"][2]["label"] == pages_before


async def test_paginator_disables_itself_on_timeout(onair):
    from bot.ui import Paginator

    onair.sim.playlist_size = 40
    original_init = Paginator.__init__

    def short(self, *args, **kwargs):  # a real Paginator with a short timeout
        kwargs["timeout"] = 0.3
        original_init(self, *args, **kwargs)

    Paginator.__init__ = short  # type: ignore[method-assign]
    try:
        iid = await onair.fake.slash("playlist")
        await onair.fake.final_message(iid)
        edits = await onair.fake.wait_request(
            "PATCH", rf"^/webhooks/\d+/itoken-{iid}/messages/@original", within=10
        )
    finally:
        Paginator.__init__ = original_init  # type: ignore[method-assign]
    buttons = edits[0].json["components"][0]["components"]
    assert all(b["disabled"] for b in buttons)


async def test_playlist_marks_played_playing_upcoming_in_station_zone(onair):
    iid = await onair.fake.slash("playlist")
    embed = (await onair.fake.final_message(iid))["embeds"][0]
    text = embed["description"]
    assert "▶" in text
    # The station's STARTTIME (a clock time in its zone) became a Discord timestamp: each
    # reader sees it in their own zone, like every other time OnAir shows.
    airing = onair.sim.station(1).programme.at(onair.sim.clock())
    playing_line = next(line for line in text.splitlines() if "▶" in line)
    (started,) = map(int, re.findall(r"<t:(\d+):t>", playing_line))
    assert abs(started - airing.started) < 2
    assert not re.search(r"`\d\d:\d\d`", text)  # no fixed clock times


HOSTILE = (
    "@everyone <@123456789012345678> <@&987654321098765432> **bold** [x](https://evil.example) "
    + "A" * 5000
)


async def test_hostile_titles_are_escaped_and_never_ping(live_simulator):
    item = LibraryItem(
        "@here DJ ||spoiler||", HOSTILE, 30.0, album="`code` ~~strike~~ \u202eRTL", year="2026"
    )
    live_simulator.station(1).programme = Programme(
        [(item, 30.0)], epoch=live_simulator.clock() - 1
    )
    async with running_bot(live_simulator) as env:
        message = await env.fake.final_message(await env.fake.slash("nowplaying"))
    embed = message["embeds"][0]
    blob = repr(message)
    assert "@everyone" not in blob.replace("@\u200beveryone", "")
    assert "<@123" not in blob
    assert "<@&987" not in blob
    assert "@here" not in blob.replace("@\u200bhere", "")
    assert "\\*\\*bold\\*\\*" in embed["title"] or len(embed["title"]) <= 256
    assert len(embed["title"]) <= 256
    assert "\u202e" not in blob
    assert message["allowed_mentions"] == {"parse": []}
