"""Storage health: one WARNING line per outage, one INFO line when it is over (issue 27.5)."""

from __future__ import annotations

import logging

import pytest

from bot.storage.health import StorageHealth

LOGGER = logging.getLogger("onair.test")


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records]


def test_an_outage_warns_once_and_says_when_it_is_over(caplog):
    caplog.set_level(logging.DEBUG)
    health = StorageHealth()
    for _ in range(5):  # five polls while the database is gone
        began = health.begin()
        health.failed(began)
        health.warn(LOGGER, "could not do %s", "it")
    assert health.failing
    health.succeeded(health.begin())
    assert not health.failing
    levels = [level for level, _ in lines(caplog)]
    assert levels == [logging.WARNING] + [logging.DEBUG] * 4 + [logging.INFO]
    assert "until it works again" in lines(caplog)[0][1]
    assert "5 operation(s) failed" in lines(caplog)[-1][1]


def test_an_operation_begun_before_the_outage_neither_ends_nor_reopens_it(caplog):
    caplog.set_level(logging.DEBUG)
    health = StorageHealth()
    early = health.begin()  # in flight on a connection that is about to be cut
    health.failed(health.begin())
    health.warn(LOGGER, "first")
    health.succeeded(early)  # it began before the outage: says nothing of now
    assert health.failing
    health.succeeded(health.begin())
    assert not health.failing
    health.failed(early)  # a straggler of the outage that is over
    health.warn(LOGGER, "straggler")
    assert not health.failing
    assert [level for level, _ in lines(caplog)] == [logging.WARNING, logging.INFO, logging.DEBUG]


def test_once_a_write_failed_only_a_write_ends_the_outage():
    health = StorageHealth()
    health.failed(health.begin(), write=True)  # locked or read-only: reads still work
    health.succeeded(health.begin())
    assert health.failing
    health.succeeded(health.begin(), write=True)
    assert not health.failing


def test_an_error_no_operation_noted_is_still_a_warning(caplog):
    caplog.set_level(logging.DEBUG)
    StorageHealth().warn(LOGGER, "odd")
    assert lines(caplog) == [(logging.WARNING, "odd")]


def test_the_next_outage_warns_again(caplog):
    caplog.set_level(logging.DEBUG)
    health = StorageHealth()
    for _ in range(2):
        health.failed(health.begin())
        health.warn(LOGGER, "down")
        health.succeeded(health.begin())
    assert [level for level, _ in lines(caplog)] == [logging.WARNING, logging.INFO] * 2
