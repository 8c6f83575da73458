"""Hostile numbers (thousands of digits, past float range, NaN, negative lengths) in any field:
models or StationResponseError, nothing else; `onair check` never shows a traceback."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.console import summary
from bot.station import Playlist, StationInfo, StationResponseError, Stats, coerce
from bot.util.serialize import to_jsonable

from .fixtures import responses
from .support.cli import admin, check
from .support.stations import make_client

NOW = datetime(2026, 11, 20, 14, 31, 10, tzinfo=UTC)
HUGE = 10**4000

HOSTILE: list[Any] = [
    HUGE,
    -HUGE,
    10**20,
    2**64,
    1e308,
    -1e308,
    math.inf,
    -math.inf,
    math.nan,
    -1,
    -1.5,
    "9" * 5000,
    "-" + "9" * 5000,
    "1e999",
    "-1e999",
    "nan",
    "inf",
    "99999999999:00",
    "1:99999999999:00",
    "99999999999999999999",
    "12:" + "9" * 5000 + ":00",
    "9" * 5000 + ":00",
    "-00:05",
]
hostile = st.sampled_from(HOSTILE) | st.integers() | st.floats()
json_values = st.recursive(
    hostile | st.none() | st.booleans() | st.text(max_size=10),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(), children),
    max_leaves=8,
)

BODIES = {
    "info": responses.full_info,
    "playlist": responses.playlist_items,
    "stats": responses.stats_body,
}


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _paths(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _paths(child, (*path, index))


def _replaced(body: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    body = copy.deepcopy(body)
    target = body
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return body


def _use(model: Any) -> None:
    """Everything `onair check`, `--json` and the embeds read from a model."""
    json.dumps(to_jsonable(model))
    if isinstance(model, StationInfo):
        play = model.current_play()
        json.dumps(to_jsonable(play))
        _ = (model.links.listen, model.artwork, model.next_display, model.listener_count)
        summary.now_playing_lines(model)
        summary.recent_lines(model)
        if play is not None:
            _ = (play.display, play.duration)
    if isinstance(model, Playlist):
        summary.playlist_lines(model, NOW)
    if isinstance(model, Stats):
        model.days_between(date(2026, 1, 1), date(2026, 1, 10))
        summary.stats_lines(model, "a", "b")


def _parse(kind: str, body: Any) -> Any:
    if kind == "info":
        return StationInfo.parse(body, UTC, NOW, memo={})
    if kind == "playlist":
        return Playlist.parse(body, UTC, NOW)
    return Stats.parse(body)


@settings(max_examples=600, deadline=None)
@given(kind=st.sampled_from(sorted(BODIES)), where=st.integers(0, 10_000), value=json_values)
def test_any_json_value_in_any_field_gives_models_or_response_error(kind, where, value):
    body = BODIES[kind]()
    paths = list(_paths(body))
    body = _replaced(body, paths[where % len(paths)], value)
    try:
        model = _parse(kind, body)
    except StationResponseError:
        return
    _use(model)


@pytest.mark.parametrize("kind", sorted(BODIES))
def test_every_field_with_every_hostile_number(kind):
    for path in _paths(BODIES[kind]()):
        for value in HOSTILE:
            body = _replaced(BODIES[kind](), path, value)
            try:
                model = _parse(kind, body)
            except StationResponseError:
                continue
            _use(model)


@pytest.mark.parametrize("value", HOSTILE, ids=[f"h{i}" for i in range(len(HOSTILE))])
def test_coercions_give_unknown_for_hostile_numbers(value):
    for convert in (coerce.integer, coerce.number, coerce.duration, coerce.milliseconds):
        result = convert(value)
        assert result is None or isinstance(result, int | float | timedelta)
        if isinstance(result, int | float):
            assert math.isfinite(result)
            assert abs(result) < 2**63
    coerce.text(value)  # a string or None, never an exception
    for convert in (coerce.boolean, coerce.iso_date, coerce.clock_time):
        convert(value)
    coerce.local_datetime(value, UTC)


def test_negative_lengths_are_unknown():
    assert coerce.milliseconds(-5) is None
    assert coerce.duration("-5") is None
    assert coerce.duration(-1) is None


async def test_unreadable_numbers_are_response_errors(simulator, session):
    body = '{"listeners": ' + "9" * 5000 + "}"  # more digits than Python's int() reads
    simulator.inject("status", status=200, endpoint="info", body=body)
    with pytest.raises(StationResponseError, match="not valid JSON"):
        await make_client(simulator, session).info()


def _hostile_info_body() -> str:
    body = responses.full_info()
    for path in list(_paths(body)):
        if path and not isinstance(_get(body, path), dict | list):
            body = _replaced(body, path, HUGE if len(path) % 2 else 1e308)
    return json.dumps(body)


def _get(body: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        body = body[step]
    return body


@pytest.mark.e2e
def test_onair_check_never_shows_a_traceback_for_hostile_numbers(sim_url):
    try:
        # Every leaf of the info answer a huge number or 1e308: read as unknowns.
        fault = {"kind": "status", "status": 200, "endpoint": "info", "body": _hostile_info_body()}
        admin(sim_url, "POST", "/_admin/fault", fault)
        done = check(sim_url)
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode in (0, 2), done.stderr
        if done.returncode == 2:
            assert len(done.stderr.strip().splitlines()) == 1
        admin(sim_url, "DELETE", "/_admin/fault")
        # A number JSON itself cannot read: exit 2 with one line.
        unreadable = '{"station_name": "x", "listeners": ' + "9" * 5000 + "}"
        fault = {"kind": "status", "status": 200, "endpoint": "info", "body": unreadable}
        admin(sim_url, "POST", "/_admin/fault", fault)
        done = check(sim_url)
        assert done.returncode == 2
        assert "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert "cli-test-key" not in done.stderr
    finally:
        admin(sim_url, "DELETE", "/_admin/fault")
