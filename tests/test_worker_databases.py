"""Each pytest-xdist worker has a PostgreSQL database of its own (scripts/test runs `-n 2`).

The storage and fleet tests drop every table as they start; two workers sharing one database
would drop each other's tables mid-test."""

from __future__ import annotations

import os

import pytest

from .support.storage_backends import POSTGRES_ENV, admin_connection, worker_url


def test_a_workers_database_is_the_given_ones_name_and_the_worker_id() -> None:
    url = "postgresql://onair@127.0.0.1:54329/onair_test?sslmode=disable"
    assert (
        worker_url(url, "gw1")
        == "postgresql://onair@127.0.0.1:54329/onair_test_gw1?sslmode=disable"
    )
    assert worker_url("postgresql://onair@127.0.0.1:54329", "gw0").endswith(":54329/postgres_gw0")


async def test_this_worker_talks_to_a_database_of_its_own() -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    url = os.environ.get(POSTGRES_ENV)
    if not worker or not url:
        pytest.skip("runs under pytest-xdist with ONAIR_TEST_POSTGRES_URL (CI's scripts/test)")
    try:
        async with admin_connection(url) as connection:
            name = await connection.fetchval("SELECT current_database()")
    except OSError as error:
        pytest.skip(f"no PostgreSQL server at {POSTGRES_ENV}: {type(error).__name__}")
    assert name.endswith(f"_{worker}")
