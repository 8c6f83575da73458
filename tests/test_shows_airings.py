"""What counts as the same airing of a live show (one event per airing): the same show and the
same start as the station reports it, with the same-play rule's tolerance for estimated starts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.shows.events import aired_before, airing_key
from bot.station import Play

START = datetime(2026, 11, 25, 20, 0, 7, 400_000, tzinfo=UTC)


def show(started: datetime | None, *, exact: bool = True, title: str = "Friday @ Mix") -> Play:
    return Play(title=title, artist="DJ Nova", live=True, started=started, started_exact=exact)


def test_the_key_records_the_number_and_the_start():
    assert airing_key(show(START), 3) == f"dj nova|friday @ mix@3~{int(START.timestamp())}"
    assert airing_key(show(None), 0) == "dj nova|friday @ mix@0"


def test_the_same_play_is_the_same_airing_and_a_new_start_is_not():
    done = [airing_key(show(START), 0)]
    assert aired_before(show(START), done)
    assert aired_before(show(START + timedelta(seconds=0.5)), done)  # stored in whole seconds
    assert not aired_before(show(START + timedelta(minutes=3)), done)  # the DJ reconnected
    assert not aired_before(show(START + timedelta(days=7)), done)  # next week's show
    assert not aired_before(show(START, title="Another Show"), done)
    # An estimated start moves with request latency: within the same-play tolerance (20 s).
    estimated = [airing_key(show(START, exact=False), 0)]
    assert aired_before(show(START + timedelta(seconds=15), exact=False), estimated)
    assert not aired_before(show(START + timedelta(seconds=40), exact=False), estimated)


def test_without_a_start_nothing_tells_plays_apart():
    assert not aired_before(show(None), [airing_key(show(None), 0)])
    assert not aired_before(show(START), [airing_key(show(None), 0)])  # an older row: no start
