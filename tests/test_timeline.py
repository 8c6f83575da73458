"""The playlist in the order it plays: across midnight, round the end of the playlist, with days."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from bot.console.summary import playlist_lines
from bot.programme.timeline import timeline
from bot.render import station_embeds
from bot.station import Play, Playlist, PlaylistItem
from bot.station.playlist import anchor_clock_time

BERLIN = ZoneInfo("Europe/Berlin")
# 23:55 in Berlin: the playlist crosses midnight.
NOW = datetime(2026, 11, 22, 23, 55, tzinfo=BERLIN)


def item(title: str, clock: str, played: bool = False, minutes: int = 4) -> PlaylistItem:
    start = time.fromisoformat(clock)
    return PlaylistItem(
        title=title,
        artist="A",
        start_time=start,
        starts_at=anchor_clock_time(start, BERLIN, NOW),
        duration=timedelta(minutes=minutes),
        item_type="TRACK_PLAYED" if played else "TRACK",
    )


# Playlist order is not time order: the station wrapped round its list, so the first two
# entries play after the last one, and the played ones are listed out of time order.
PLAYLIST = Playlist(
    items=(
        item("Wrapped 1", "00:07"),
        item("Wrapped 2", "00:11"),
        item("Played late", "23:50", played=True),
        item("Played early", "23:42", played=True),
        item("On air", "23:54"),
        item("Next", "23:58"),
        item("After midnight", "00:02"),
    ),
    fetched_at=NOW,
)


def test_playlist_is_ordered_by_when_each_item_plays_across_midnight():
    slots = timeline(PLAYLIST, Play("On air", "A"), NOW.astimezone(UTC), BERLIN)
    assert [s.item.title for s in slots] == [
        "Played early",
        "Played late",
        "On air",
        "Next",
        "After midnight",
        "Wrapped 1",
        "Wrapped 2",
    ]
    assert [s.state for s in slots] == ["played"] * 2 + ["playing"] + ["upcoming"] * 4
    times = [s.at for s in slots]
    assert times == sorted(times)  # never jumps backwards
    assert times[3] is not None
    assert times[3].date() == date(2026, 11, 22)
    assert times[4] == datetime(2026, 11, 23, 0, 2, tzinfo=BERLIN)  # next day
    assert times[6] == datetime(2026, 11, 23, 0, 11, tzinfo=BERLIN)


def test_without_a_matching_current_item_upcoming_follows_the_last_played():
    slots = timeline(PLAYLIST, None, NOW.astimezone(UTC), BERLIN)
    # "On air" is found by its start and length spanning now.
    assert next(s for s in slots if s.state == "playing").item.title == "On air"
    late = datetime(2026, 11, 23, 1, 0, tzinfo=BERLIN)
    slots = timeline(PLAYLIST, None, late.astimezone(UTC), BERLIN)
    assert not any(s.state == "playing" for s in slots)
    assert next(s.item.title for s in slots if s.state == "upcoming") == "On air"


def test_playlist_page_shows_sections_and_a_day_line_at_midnight():
    slots = station_embeds.playlist_rows(
        PLAYLIST, None, NOW.astimezone(UTC), BERLIN
    )  # found by time
    embed = station_embeds.playlist_page(slots, 0, 10, "Main", BERLIN, today=NOW.date())
    lines = (embed.description or "").splitlines()

    def at(day: int, hour: int, minute: int) -> str:  # a Discord timestamp, the reader's zone
        return f"<t:{int(datetime(2026, 11, day, hour, minute, tzinfo=BERLIN).timestamp())}:t>"

    assert lines[0] == "**Played**"
    assert lines[1].startswith(f"-# {at(22, 23, 42)}")
    assert "**On air**" in lines
    assert "**Up next**" in lines
    playing = lines[lines.index("**On air**") + 1]
    assert playing.startswith(f"▶ **{at(22, 23, 54)} A - On air")
    midnight = lines.index("-# ──\u00a0Monday 23 November, station time\u00a0──")
    assert at(22, 23, 58) in lines[midnight - 1]
    assert at(23, 0, 2) in lines[midnight + 1]
    assert embed.footer.text == "Page 1/1 · 7 items"
    # A later page that starts on another day says which day at its top.
    second = station_embeds.playlist_page(slots, 1, 5, "Main", BERLIN, today=NOW.date())
    assert (second.description or "").splitlines()[
        0
    ] == "-# ──\u00a0Monday 23 November, station time\u00a0──"


def test_check_lists_the_next_three_in_time_order_with_a_day_line():
    lines = playlist_lines(PLAYLIST, NOW.astimezone(UTC), info=None)
    assert lines[0] == "Playlist:    7 items, next 3:"
    assert lines[1].startswith("  23:58:00  A - Next")
    assert lines[2] == "  -- Monday 2026-11-23 --"
    assert lines[3].startswith("  00:02:00  A - After midnight")
    assert lines[4].startswith("  00:07:00  A - Wrapped 1")
