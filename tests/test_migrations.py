"""Any number of processes opening one fresh database at once all come up: the schema migrations
run inside one write transaction, so a second process waits for the first and finds the schema
done, instead of failing with "table ... already exists"."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from bot.storage import SchemaTooNew, SqliteStorage
from bot.storage.migrations import MIGRATIONS

from .support.storage_backends import POSTGRES_ENV, reset_postgres

ROOT = Path(__file__).resolve().parent.parent
PROCESSES = 6

# Each process imports everything first, says so, and opens the storage only when told: the
# parent releases them all together once every one is ready.
OPENER = """
import asyncio, sys
from bot.storage import PostgresStorage, SqliteStorage
target = sys.argv[1]
storage = PostgresStorage(target) if target.startswith("postgres") else SqliteStorage(target)
print("ready", flush=True)
sys.stdin.readline()
async def main():
    try:
        await storage.open()
        rows = await storage.fetch("SELECT version FROM schema_version ORDER BY version")
    finally:
        await storage.close()
    print("versions", [row[0] for row in rows], flush=True)
asyncio.run(main())
"""


async def _open_together(target: str) -> list[tuple[int, str, str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            OPENER,
            target,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=ROOT,
            env=env,
        )
        for _ in range(PROCESSES)
    ]
    for proc in procs:
        assert proc.stdout is not None
        assert (await asyncio.wait_for(proc.stdout.readline(), 60)).strip() == b"ready"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write(b"go\n")
        await proc.stdin.drain()
    results = []
    for proc in procs:
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        results.append((proc.returncode or 0, out.decode(), err.decode()))
    return results


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_processes_opening_a_fresh_database_together_all_come_up(kind, tmp_path):
    if kind == "sqlite":
        targets = [str(tmp_path / f"fresh{n}.sqlite3") for n in range(3)]
    else:
        url = os.environ.get(POSTGRES_ENV)
        if not url:
            pytest.skip(f"PostgreSQL tests need {POSTGRES_ENV}")
        targets = [url]
    expected = f"versions {list(range(1, len(MIGRATIONS) + 1))}"
    for target in targets:  # several fresh files: the race is not won by luck
        if kind == "postgres":
            await reset_postgres(target)
        for code, out, err in await _open_together(target):
            assert code == 0, err
            assert out.strip() == expected, (out, err)


def _database_at(path: Path, version: int) -> None:
    """A SQLite file as OnAir ``version`` left it (its first ``version`` migrations)."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for number, script in enumerate(MIGRATIONS[:version], start=1):
            db.executescript(script.format(**SqliteStorage.dialect))
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
        db.commit()


async def test_an_upgrade_says_from_which_schema_to_which(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="onair.storage")
    path = tmp_path / "old.sqlite3"
    old = len(MIGRATIONS) - 2
    _database_at(path, old)
    storage = await SqliteStorage(str(path)).open()
    await storage.close()
    fresh = await SqliteStorage(str(tmp_path / "new.sqlite3")).open()
    await fresh.close()
    again = await SqliteStorage(str(path)).open()  # nothing to do: nothing said
    await again.close()
    assert [r.getMessage() for r in caplog.records if r.name == "onair.storage"] == [
        f"database upgraded from schema {old} to {len(MIGRATIONS)}",
        f"database created (schema {len(MIGRATIONS)})",
    ]


async def test_a_database_a_newer_onair_upgraded_is_refused_untouched(tmp_path):
    path = tmp_path / "newer.sqlite3"
    _database_at(path, len(MIGRATIONS))
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("INSERT INTO schema_version (version) VALUES (?)", (len(MIGRATIONS) + 1,))
        db.commit()
    storage = SqliteStorage(str(path))
    with pytest.raises(SchemaTooNew) as raised:
        await storage.open()
    await storage.close()
    assert str(raised.value).startswith(
        f"the database is at schema {len(MIGRATIONS) + 1}, newer than this OnAir knows "
        f"({len(MIGRATIONS)}): a newer OnAir upgraded it"
    )
    with contextlib.closing(sqlite3.connect(path)) as db:
        versions = [row[0] for row in db.execute("SELECT version FROM schema_version")]
    assert versions == list(range(1, len(MIGRATIONS) + 2))
