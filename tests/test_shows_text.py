"""The lines OnAir writes outside messages stay inside Discord's limits whatever a station sends."""

from __future__ import annotations

import pytest

from bot.shows.text import (
    EVENT_LOCATION_MAX,
    STAGE_TOPIC_MAX,
    VOICE_STATUS_MAX,
    event_description,
    event_location,
    event_name,
    stage_topic,
    voice_status,
)
from bot.station import Play


def test_a_track_and_a_live_show():
    assert voice_status(Play(title="Title", artist="Artist")) == "🎵 Artist - Title"
    assert (
        voice_status(Play(title="Friday Mix", artist="DJ", live=True)) == "🔴 LIVE: DJ - Friday Mix"
    )
    assert voice_status(None) is None
    assert stage_topic(Play(title="Title")) == "🎵 Title"


@pytest.mark.parametrize("size", [1, 119, 120, 121, 499, 500, 501, 5000, 100_000])
def test_long_station_text_is_cut_to_each_limit(size):
    play = Play(title="x" * size, artist="A")
    status = voice_status(play)
    topic = stage_topic(play)
    assert status is not None
    assert topic is not None
    assert len(status) <= VOICE_STATUS_MAX
    assert 1 <= len(topic) <= STAGE_TOPIC_MAX
    assert 1 <= len(event_name(play)) <= 100
    assert len(event_description("S" * size, play)) <= 1000


def test_hostile_text_is_one_inert_line():
    play = Play(title="Hit\n@everyone **bold** \u202e<@&123>\u200b", artist="A\x00B")
    status = voice_status(play)
    assert status is not None
    assert "\n" not in status
    assert "\x00" not in status
    assert "\u202e" not in status
    assert "@everyone" not in status  # defused with a zero-width space
    assert "\\*\\*bold\\*\\*" in status  # the status renders markdown: escaped
    topic = stage_topic(play)
    assert topic is not None
    assert "\n" not in topic
    assert "\u202e" not in topic
    assert "**bold**" in topic  # a topic is plain text: shown as sent


def test_a_title_of_only_invisible_characters_writes_nothing():
    assert voice_status(Play(title="\u200b\u202e")) is None
    assert stage_topic(Play(title="\u200b")) is None
    assert event_name(Play(title="\u200b")) == "Live show"


def test_event_location_is_the_https_listen_link_when_it_fits():
    assert event_location("Main FM", "https://c9.radioboss.fm/stream") == (
        "https://c9.radioboss.fm/stream"
    )
    long_link = "https://c9.radioboss.fm/" + "a" * 100
    assert event_location("Main FM", long_link) == "Main FM"
    assert event_location("Main FM", "http://insecure.example/x") == "Main FM"
    assert len(event_location("M" * 500, None)) <= EVENT_LOCATION_MAX
    assert event_location(None, None) == "Online radio"


def test_event_location_is_never_a_link_discord_would_refuse_elsewhere():
    # Issue 27: a place is plain text Discord shows as a link; the station's link as typed went
    # in whenever it started with https:// and fit.
    for typed in (
        "https://r.example/m>[Free](https://phish.example/y)",
        "https://r.example/a b",
        "https://x.example@everyone",
        "https://:8443/x",
        "https://r.example/\u202e",
    ):
        assert event_location("Main FM", typed) == "Main FM", typed
    exactly = "https://c9.radioboss.fm/" + "a" * (EVENT_LOCATION_MAX - 24)
    assert event_location("Main FM", exactly) == exactly
    assert event_location("Main FM", exactly + "a") == "Main FM"
