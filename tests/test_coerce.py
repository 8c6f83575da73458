from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.station import coerce as c


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("", None),
        ("n/a", None),
        ("N/A", None),
        ({}, None),
        ([], None),
        (None, None),
        (" x ", "x"),
        (5, "5"),
    ],
)
def test_text_treats_missing_markers_as_none(raw, expected):
    assert c.text(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("12", 12),
        (12, 12),
        ("12.0", 12),
        ("", None),
        ("abc", None),
        (True, None),
        (float("nan"), None),
    ],
)
def test_integer(raw, expected):
    assert c.integer(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("03:42", timedelta(minutes=3, seconds=42)),
        ("61:05", timedelta(minutes=61, seconds=5)),
        ("1:02:03", timedelta(hours=1, minutes=2, seconds=3)),
        ("00:00", timedelta(0)),
        ("3:75", None),
        ("", None),
        ("soon", None),
    ],
)
def test_duration_minutes_may_exceed_59(raw, expected):
    assert c.duration(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1:05:09 PM", time(13, 5, 9)),
        ("12:00:00 AM", time(0, 0, 0)),
        ("12:30:00 PM", time(12, 30, 0)),
        ("9:59:59 am", time(9, 59, 59)),
        ("13:10:00", time(13, 10, 0)),
        ("13:10:00 PM", None),
        ("", None),
    ],
)
def test_clock_time_12_hour(raw, expected):
    assert c.clock_time(raw) == expected


def test_local_datetime_uses_station_zone():
    zone = ZoneInfo("Europe/Berlin")
    parsed = c.local_datetime("2026-07-01 12:00:00", zone)
    assert parsed == datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
    assert c.local_datetime("0000-00-00 00:00:00", zone) is None


def test_milliseconds_and_lists():
    assert c.milliseconds("215000") == timedelta(seconds=215)
    assert c.milliseconds(-1) is None
    assert c.as_list({"a": 1}) == [{"a": 1}]
    assert c.as_list({}) == []
    assert c.as_list("x") == []


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("~files\\Music\\A - B.mp3", "A - B.mp3"),
        ("\\Music\\C.mp3", "C.mp3"),
        ("D.mp3", "D.mp3"),
        ("~files", None),
        (None, None),
    ],
)
def test_file_base_name(path, name):
    assert c.file_base_name(path) == name
