import json
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.station import Playlist, StationInfo, StationResponseError, Stats
from bot.station.play import Play

from .fixtures import responses

NOW = datetime(2026, 11, 20, 14, 31, 10, tzinfo=UTC)


def test_full_info_is_parsed_with_every_coercion():
    info = StationInfo.parse(responses.full_info(), UTC, NOW)
    assert info.name == "Radio Example"
    assert info.description is None  # "" means missing
    assert info.playback is not None
    assert info.playback.position == timedelta(seconds=65)
    assert info.playback.length == timedelta(seconds=215)
    assert info.current is not None
    assert info.current.file_name == "Alpha Band - First Song.mp3"
    assert info.current.listeners == 17
    assert info.links.listen == "https://c5.radioboss.fm/stream/123"
    assert info.links.pls == "https://c5.radioboss.fm/playlist/123/stream.pls"
    assert info.recent[0].artwork == "https://c5.radioboss.fm/w/recent/123/991.jpg"
    assert info.recent[1].artwork == "https://c5.radioboss.fm/w/recent/123/990.jpg"  # numeric id
    play = info.current_play()
    assert play is not None
    assert (play.artist, play.title, play.album, play.year) == (
        "Alpha Band",
        "First Song",
        "Greatest",
        "1999",
    )
    assert play.started == datetime(2026, 11, 20, 14, 30, 5, tzinfo=UTC)
    assert play.started_exact


def test_minimal_info_with_collapsed_lists_and_na():
    info = StationInfo.parse(responses.minimal_info(), UTC, NOW)
    assert info.current is None
    assert info.next_track is None
    assert info.next_display is None
    assert info.listener_count == 3
    assert len(info.recent) == 1
    play = info.current_play()
    assert play is not None
    assert play.title == "Solo Title Without Artist"
    assert play.artist is None
    assert play.started is None


def test_live_prefers_nowplaying_over_autodj_title():
    raw = responses.full_info()
    raw.update(
        live=True, autodj=True, nowplaying="DJ Nova - Friday Live", playback={"pos": 1000, "len": 0}
    )
    info = StationInfo.parse(raw, UTC, NOW)
    play = info.current_play()
    assert play is not None
    assert play.live
    assert (play.artist, play.title) == ("DJ Nova", "Friday Live")
    assert info.playback is not None
    assert info.playback.length is None


def test_nothing_on_air_gives_no_play():
    info = StationInfo.parse({"nowplaying": "n/a", "autodj_title": ""}, UTC, NOW)
    assert info.current_play() is None


def test_same_play_rule():
    start = datetime(2026, 11, 20, 14, 0, tzinfo=UTC)
    a = Play("Song", "Artist", started=start, started_exact=True, file="a.mp3")
    assert a.same_as(Play("song ", "ARTIST", started=start, started_exact=True, file="a.mp3"))
    # The same song again later is a new play.
    assert not a.same_as(
        Play("Song", "Artist", started=start + timedelta(minutes=30), started_exact=True)
    )
    # Estimated starts drift with latency: within tolerance they match.
    estimate = Play("Song", "Artist", started=start + timedelta(seconds=3))
    assert a.same_as(estimate)
    assert not a.same_as(Play("Other", "Artist", started=start, started_exact=True))
    assert not a.same_as(Play("Song", "Artist", started=start, started_exact=True, file="b.mp3"))


def test_lastplayed_of_an_earlier_play_is_not_taken_as_start():
    raw = responses.full_info()
    raw["recent"] = []
    raw["currenttrack_info"]["@attributes"]["LASTPLAYED"] = "2026-11-19 09:00:00"
    info = StationInfo.parse(raw, UTC, NOW)
    play = info.current_play()
    assert play is not None
    assert not play.started_exact
    assert play.started == NOW - timedelta(seconds=65)


def test_playlist_start_times_anchor_to_nearest_day_and_keep_order():
    zone = ZoneInfo("America/New_York")
    fetched = datetime(2026, 11, 21, 4, 58, tzinfo=UTC)  # 23:58 in New York on the 20th
    playlist = Playlist.parse(responses.playlist_items(), zone, fetched)
    late, midnight, before = playlist.items
    assert late.starts_at == datetime(2026, 11, 20, 23, 57, tzinfo=zone)
    assert midnight.starts_at == datetime(2026, 11, 21, 0, 0, tzinfo=zone)
    assert before.played
    assert not late.played
    assert before.duration == timedelta(minutes=61, seconds=5)
    assert before.file_name == "Before.mp3"
    assert [i.playlist_index for i in playlist.items] == [0, 1, 2]


def test_playlist_single_object_track():
    body = {"TRACK": responses.playlist_items()["TRACK"][0]}
    assert len(Playlist.parse(body, UTC, NOW).items) == 1
    assert Playlist.parse({"TRACK": []}, UTC, NOW).items == ()


def test_stats_days_outside_range_dropped_and_missing_days_zero():
    stats = Stats.parse(responses.stats_body())
    days = stats.days_between(date(2026, 11, 1), date(2026, 11, 4))
    assert [(d.day.day, d.sessions, d.unique) for d in days] == [
        (1, 10, 5),
        (2, 0, 0),
        (3, 7, 3),
        (4, 0, 0),
    ]
    assert stats.countries[1].iso == "fr"
    assert len(stats.countries_tlh) == 1


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=15), children, max_size=6)
    ),
    max_leaves=40,
)
field_names = st.sampled_from(
    [
        "station_name",
        "nowplaying",
        "autodj_title",
        "live",
        "autodj",
        "playback",
        "pos",
        "len",
        "currenttrack_info",
        "nexttrack_info",
        "@attributes",
        "ARTIST",
        "TITLE",
        "DURATION",
        "LASTPLAYED",
        "listeners",
        "links",
        "mounts",
        "recent",
        "title",
        "started",
        "artworkid",
        "artwork_recent",
        "TRACK",
        "STARTTIME",
        "ITEMTYPE",
        "days",
        "date",
        "cnt",
        "countries",
        "country_iso",
        "total_tlh",
    ]
)
shaped = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(["", "n/a", "03:61", "61:05", "1:00:00 PM", "2026-02-30 10:00:00", "ARTID"]),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(field_names, children, max_size=8)
    ),
    max_leaves=60,
)


@settings(max_examples=300, deadline=None)
@given(st.one_of(json_values, shaped))
def test_any_json_gives_a_model_or_response_error(value):
    for parse in (
        lambda v: StationInfo.parse(v, UTC, NOW),
        lambda v: Playlist.parse(v, UTC, NOW),
        Stats.parse,
    ):
        try:
            model = parse(value)
        except StationResponseError:
            continue
        json.dumps(repr(model))  # the model is complete and printable
        if isinstance(model, StationInfo):
            model.current_play()
            _ = (model.links.listen, model.artwork, model.next_display, model.listener_count)
        if isinstance(model, Stats):
            model.days_between(date(2026, 1, 1), date(2026, 1, 10))


def test_parse_memo_gives_the_same_models_as_a_fresh_parse():
    from bot.simulator import StationSimulator

    sim = StationSimulator(clock=lambda: 1_790_000_000.0)
    station = sim.add_station(1, track_seconds=(5, 9))
    memo: dict = {}
    base = 1_790_000_000.0
    for step in range(40):  # crosses several track changes
        body = station.info(base + step * 0.7)
        if step % 7 == 3:
            station.quirks = {"string_numbers"} if step % 2 else set()
        with_memo = StationInfo.parse(body, UTC, NOW, memo=memo)
        assert with_memo == StationInfo.parse(body, UTC, NOW)
    assert memo  # the memo was used
