"""AzuraCast's answers read as OnAir's station model: payloads shaped as AzuraCast's own
``Api_NowPlaying`` (``backend/src/Entity/Api/NowPlaying/*.php``, the OpenAPI examples), its
Centrifugo pushes, schedule, requestable list and refusals."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot import errors
from bot.station.errors import RequestRefused, RequestsOff
from bot.station.hosts import REQUESTS, SOURCES
from bot.station.hosts.azuracast import AzuraCastClient, AzuraCastRequests
from bot.station.hosts.azuracast.models import (
    OFFLINE_SONG_ID,
    now_playing,
    pushed_payloads,
    schedule,
)
from bot.station.hosts.azuracast.requests import (
    parse_requestable,
    parse_submitted,
    refusal_reason,
)
from bot.station.schedule import from_json, to_json

NOW = datetime(2026, 6, 1, 12, 0, 30, tzinfo=UTC)
STARTED = 1780315200  # 2026-06-01 12:00:00 UTC


def song(artist: str, title: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": "9f33bbc912c19603e51be8e0987d076b",
        "art": "https://radio.example.com/api/station/1/art/abc-1700000000.jpg",
        "custom_fields": [],
        "text": f"{artist} - {title}" if artist else title,
        "artist": artist,
        "title": title,
        "album": "Moving Castle",
        "genre": "Rock",
        "isrc": "US28E1600021",
        "lyrics": "",
    } | extra


def payload(**changes: Any) -> dict[str, Any]:
    """An ``Api_NowPlaying`` as AzuraCast 0.20+ serves it."""
    body: dict[str, Any] = {
        "station": {
            "id": 1,
            "name": "AzuraTest Radio",
            "shortcode": "azuratest_radio",
            "description": "An AzuraCast station!",
            "frontend": "icecast",
            "backend": "liquidsoap",
            "timezone": "America/Chicago",
            "listen_url": "http://radio.example.com:8000/radio.mp3",
            "url": "https://example.com/",
            "public_player_url": "https://radio.example.com/public/azuratest_radio",
            "playlist_pls_url": "https://radio.example.com/public/azuratest_radio/playlist.pls",
            "playlist_m3u_url": "https://radio.example.com/public/azuratest_radio/playlist.m3u",
            "is_public": True,
            "requests_enabled": True,
            "mounts": [
                {
                    "id": 2,
                    "name": "/low.aac (64kbps AAC)",
                    "url": "http://radio.example.com:8000/low.aac",
                    "bitrate": 64,
                    "format": "aac",
                    "listeners": {"total": 1, "unique": 1, "current": 1},
                    "path": "/low.aac",
                    "is_default": False,
                },
                {
                    "id": 1,
                    "name": "/radio.mp3 (128kbps MP3)",
                    "url": "https://radio.example.com/listen/azuratest_radio/radio.mp3",
                    "bitrate": 128,
                    "format": "mp3",
                    "listeners": {"total": 19, "unique": 14, "current": 19},
                    "path": "/radio.mp3",
                    "is_default": True,
                },
            ],
            "remotes": [],
            "hls_enabled": False,
            "hls_is_default": False,
            "hls_url": None,
            "hls_listeners": 0,
        },
        "listeners": {"total": 20, "unique": 15, "current": 20},
        "live": {"is_live": False, "streamer_name": "", "broadcast_start": None, "art": None},
        "now_playing": {
            "sh_id": 5120,
            "played_at": STARTED,
            "duration": 180,
            "playlist": "Top 100",
            "streamer": "",
            "is_request": False,
            "song": song("Chet Porter", "Aluko River"),
            "elapsed": 30,
            "remaining": 150,
        },
        "playing_next": {
            "cued_at": STARTED + 170,
            "played_at": STARTED + 180,
            "duration": 201.5,
            "playlist": "Top 100",
            "is_request": True,
            "song": song("Kaito", "Neon Umbrella", art="https://radio.example.com/next.jpg"),
        },
        "song_history": [
            {
                "sh_id": 5119,
                "played_at": STARTED - 240,
                "duration": 240,
                "playlist": "Top 100",
                "streamer": "",
                "is_request": False,
                "song": song("Lumen Drift", "Aurora Loop"),
            }
        ],
        "is_online": True,
        "cache": "hit",
    }
    body.update(changes)
    return body


def test_kind_is_registered_with_its_requests_client():
    assert SOURCES["azuracast"] is AzuraCastClient
    assert REQUESTS["azuracast"] is AzuraCastRequests


def test_now_playing_maps_to_the_station_model():
    info = now_playing(payload(), NOW)
    assert info.name == "AzuraTest Radio"
    assert info.description == "An AzuraCast station!"
    assert info.listeners == 20
    assert info.current is not None
    assert (info.current.artist, info.current.title, info.current.album) == (
        "Chet Porter",
        "Aluko River",
        "Moving Castle",
    )
    assert info.current.genre == "Rock"
    assert info.playback is not None
    assert info.playback.position == timedelta(seconds=30)
    assert info.playback.length == timedelta(seconds=180)
    assert info.next_display == "Kaito - Neon Umbrella"
    assert info.next_track is not None
    assert info.next_track.duration == timedelta(seconds=201.5)
    assert info.artwork == "https://radio.example.com/api/station/1/art/abc-1700000000.jpg"
    assert info.links.artwork_next == "https://radio.example.com/next.jpg"
    assert info.links.page == "https://radio.example.com/public/azuratest_radio"
    # The play on air heads recent with its exact start; the history follows.
    assert [item.title for item in info.recent] == [
        "Chet Porter - Aluko River",
        "Lumen Drift - Aurora Loop",
    ]
    assert info.recent[1].started == datetime.fromtimestamp(STARTED - 240, UTC)
    play = info.current_play()
    assert play is not None
    assert (play.artist, play.title) == ("Chet Porter", "Aluko River")
    assert play.started == datetime.fromtimestamp(STARTED, UTC)
    assert play.started_exact
    assert play.duration == timedelta(seconds=180)


def test_the_same_play_polled_later_is_the_same_and_a_replay_is_new():
    first = now_playing(payload(), NOW).current_play()
    later = payload()
    later["now_playing"] = later["now_playing"] | {"elapsed": 90, "remaining": 90}
    second = now_playing(later, NOW + timedelta(seconds=60)).current_play()
    assert first is not None
    assert second is not None
    assert first.same_as(second)
    again = payload()
    again["now_playing"] = again["now_playing"] | {"sh_id": 5200, "played_at": STARTED + 3600}
    replay = now_playing(again, NOW + timedelta(hours=1)).current_play()
    assert replay is not None
    assert not replay.same_as(first)


def test_listen_links_are_https_first_default_mount_first():
    links = now_playing(payload(), NOW).links
    # listen_url (the default mount) is http here; the default mount's own URL is https.
    assert links.listen == "https://radio.example.com/listen/azuratest_radio/radio.mp3"
    assert [m.name for m in links.mounts] == [
        "/radio.mp3 (128kbps MP3) (128 kbps MP3)",
        "/low.aac (64kbps AAC) (64 kbps AAC)",
    ]
    assert links.mounts[1].http == "http://radio.example.com:8000/low.aac"
    assert links.m3u == "https://radio.example.com/public/azuratest_radio/playlist.m3u"


def test_a_live_dj_without_a_title_is_the_title():
    body = payload(
        live={
            "is_live": True,
            "streamer_name": "DJ Jazzy Jeff",
            "broadcast_start": STARTED,
            "art": "https://radio.example.com/dj.jpg",
        }
    )
    body["now_playing"] = body["now_playing"] | {
        "duration": 0,
        "streamer": "DJ Jazzy Jeff",
        "song": song("", "", text="", album="", genre=""),
    }
    info = now_playing(body, NOW)
    play = info.current_play()
    assert play is not None
    assert (play.title, play.live, play.started_exact) == ("DJ Jazzy Jeff", True, True)
    assert info.artwork == "https://radio.example.com/dj.jpg"
    assert info.playback is not None
    assert info.playback.length is None


def test_a_live_dj_with_a_title_names_both():
    body = payload(
        live={"is_live": True, "streamer_name": "DJ Nova", "broadcast_start": STARTED, "art": None}
    )
    play = now_playing(body, NOW).current_play()
    assert play is not None
    assert (play.artist, play.title, play.live) == ("Chet Porter", "Aluko River", True)


def test_offline_is_nothing_on_air():
    body = payload(is_online=False, playing_next=None)
    body["now_playing"] = {
        "sh_id": 0,
        "played_at": 0,
        "duration": 0,
        "playlist": "",
        "streamer": "",
        "is_request": False,
        "song": song("", "Station Offline", id=OFFLINE_SONG_ID, text="Station Offline"),
        "elapsed": 0,
        "remaining": 0,
    }
    info = now_playing(body, NOW)
    assert info.current_play() is None
    assert info.on_air_title is None


def test_the_default_album_art_is_artwork():
    body = payload()
    default_art = "https://radio.example.com/static/uploads/azuratest_radio/album_art.1700000.png"
    body["now_playing"]["song"]["art"] = default_art
    assert now_playing(body, NOW).artwork == default_art


@pytest.mark.parametrize(
    "hostile",
    [
        {"station": [], "listeners": "many", "now_playing": [], "song_history": {}},
        {"now_playing": {"song": {"title": ["x"], "artist": 5}, "played_at": "soon"}},
        {"now_playing": {"song": {"title": "x" * 10_000}, "elapsed": 10**400, "duration": -5}},
        {"song_history": [None, 5, {"song": None}, {"song": {"title": "Ok"}, "played_at": 1e308}]},
        {
            "station": {
                "mounts": [{"url": "javascript:alert(1)"}, {"url": 5}],
                "listen_url": "ftp:x",
            }
        },
    ],
)
def test_hostile_values_are_unknowns(hostile):
    info = now_playing(payload(**hostile), NOW)
    assert info.fetched_at == NOW
    for item in info.recent:
        assert item.title is None or len(item.title) <= 500
    for mount in info.links.mounts:
        assert (mount.http or mount.ssl or "").startswith("http")


def test_the_connect_reply_and_each_pub_carry_now_playing():
    np = payload()
    connect = {
        "connect": {
            "client": "bb56837e",
            "version": "6.1.0 OSS",
            "subs": {
                "station:azuratest_radio": {
                    "recoverable": True,
                    "epoch": "xyz",
                    "publications": [
                        {
                            "data": {"np": np, "triggers": ["song_changed"], "current_time": 1},
                            "offset": 7,
                        }
                    ],
                    "offset": 7,
                    "positioned": True,
                    "was_recovering": True,
                    "recovered": True,
                }
            },
            "ping": 25,
            "session": "3159c4f8",
            "time": 1780315230000,
        }
    }
    channel = "station:azuratest_radio"
    assert pushed_payloads(json.dumps(connect), channel) == [np]
    pub = {"channel": channel, "pub": {"data": {"np": np, "triggers": []}, "offset": 8}}
    assert pushed_payloads(json.dumps(pub), channel) == [np]
    other = {"channel": "station:other", "pub": {"data": {"np": np}, "offset": 8}}
    assert pushed_payloads(json.dumps(other), channel) == []
    assert pushed_payloads("{}", channel) == []  # a ping
    assert pushed_payloads('{"pub": {"data": {"np": {"sta', channel) == []  # cut mid-event


def test_schedule_entries_are_typed_and_sorted():
    rows = [
        {
            "id": 2,
            "type": "streamer",
            "name": "DJ Nova",
            "title": "Friday Night Live",
            "description": "Streamer: DJ Nova",
            "start_timestamp": STARTED + 7200,
            "start": "2026-06-01T09:00:00-05:00",
            "end_timestamp": STARTED + 10800,
            "end": "2026-06-01T10:00:00-05:00",
            "is_now": False,
        },
        {
            "id": 1,
            "type": "playlist",
            "name": "Morning Mix",
            "title": "Morning Mix",
            "description": "Playlist: Morning Mix",
            "start_timestamp": STARTED - 600,
            "start": "2026-06-01T06:50:00-05:00",
            "end_timestamp": STARTED + 600,
            "end": "2026-06-01T07:10:00-05:00",
            "is_now": True,
        },
        {"id": 3, "title": "no start"},
        "junk",
    ]
    shows = schedule(rows)
    assert [(s.title, s.is_now, s.is_live_show) for s in shows] == [
        ("Morning Mix", True, False),
        ("Friday Night Live", False, True),
    ]
    assert shows[1].start == datetime.fromtimestamp(STARTED + 7200, UTC)
    assert shows[1].end == datetime.fromtimestamp(STARTED + 10800, UTC)
    assert schedule({"code": 404}) == ()
    # The airing is the entry on its day in the station's zone (from ``start``, not UTC).
    assert shows[1].day == "2026-06-01"
    assert shows[1].slot == "streamer:2:2026-06-01"


def test_a_schedule_survives_its_round_trip_through_storage_text():
    rows = [
        {
            "id": 2,
            "type": "streamer",
            "name": "DJ Nova",
            "title": "DJ Nova",
            "start_timestamp": STARTED,
            "start": "2026-06-01T09:00:00-05:00",
            "end_timestamp": STARTED + 3600,
            "is_now": False,
        }
    ]
    shows = schedule(rows)
    assert from_json(to_json(shows)) == shows
    assert from_json("not json") == ()
    assert from_json('[{"title": "x", "start": "soon"}, 5]') == ()


def test_requestable_songs_paged_or_bare():
    row = {
        "request_id": "6516fa6a2b4e3c5a98cd7a21",
        "request_url": "/api/station/1/request/6516fa6a2b4e3c5a98cd7a21",
        "song": song("Kaito", "Neon Umbrella"),
    }
    paged = {"page": 1, "per_page": 25, "total": 1, "total_pages": 1, "links": {}, "rows": [row]}
    for body in (paged, [row], [row, row, {"request_id": None, "song": song("A", "B")}]):
        answer = parse_requestable(body)
        assert [(t.id, t.title) for t in answer.tracks] == [
            ("6516fa6a2b4e3c5a98cd7a21", "Kaito - Neon Umbrella")
        ]
    off = {
        "code": 500,
        "type": "StationUnsupportedException",
        "message": "This station does not currently accept requests.",
        "formatted_message": "This station does not currently accept requests.",
        "extra_data": {},
        "success": False,
    }
    with pytest.raises(RequestsOff):
        parse_requestable(off)


def refused(message: str) -> dict[str, Any]:
    return {
        "code": 500,
        "type": "CannotCompleteActionException",
        "message": f"Cannot submit request: {message}",
        "formatted_message": f"Cannot submit request: {message}",
        "extra_data": {"class": "CannotCompleteActionException", "file": "x.php", "line": 3},
        "success": False,
    }


@pytest.mark.parametrize(
    ("message", "meant"),
    [
        ("This song was already requested and will play soon.", errors.REQUEST_ALREADY_QUEUED),
        (
            "This song or artist has been played too recently. Wait a while before requesting "
            "it again.",
            errors.REQUEST_PLAYED_RECENTLY,
        ),
        (
            "You have submitted a request too recently! Please wait 4 minutes before "
            "submitting another one.",
            errors.REQUEST_STATION_LIMIT,
        ),
        ("This station does not currently accept requests.", errors.REQUESTS_STATION_OFF),
        ("This track is not requestable.", errors.REQUEST_REFUSED_QUOTED),
    ],
)
def test_azuracast_refusals_mean_onairs_reasons(message, meant):
    with pytest.raises(RequestRefused) as caught:
        parse_submitted(refused(message))
    reason = caught.value.reason
    assert reason is not None
    assert not reason.startswith("Cannot submit")
    told = errors.request_refused("Main FM", reason)
    assert told.args[0] == meant
    if meant == errors.REQUEST_STATION_LIMIT:
        assert "4 minutes" in told.message


def test_accepted_and_unknown_answers():
    parse_submitted({"success": True, "message": "Your request has been submitted."})
    assert refusal_reason("Cannot submit request: You are not permitted to submit requests.") == (
        "You are not permitted to submit requests."
    )
