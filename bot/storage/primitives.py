"""The four primitives a backend supplies; every domain's operations are written on them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

Row = Sequence[Any]
Statement = tuple[str, Sequence[Any]]


def and_equal(sql: str, params: list[Any], **columns: object) -> str:
    """``sql`` narrowed by `` AND <column> = ?`` for each column given a value (None: any), in
    the order given; the values are added to ``params``. Column names come from our code."""
    for column, value in columns.items():
        if value is not None:
            sql += f" AND {column} = ?"
            params.append(value)
    return sql


def upsert(table: str, key: str, columns: str) -> str:
    """``INSERT`` of one row keyed by ``key`` that replaces the ``columns`` of the row already
    there (each a list of names, comma separated); the values go in the order key, then
    columns. Written once so each store names its columns once. Names come from our code."""
    updated = [c.strip() for c in columns.split(",")]
    names = [*(k.strip() for k in key.split(",")), *updated]
    marks = ", ".join("?" * len(names))
    sets = ", ".join(f"{c} = excluded.{c}" for c in updated)
    return (
        f"INSERT INTO {table} ({', '.join(names)}) VALUES ({marks}) "
        f"ON CONFLICT ({key}) DO UPDATE SET {sets}"
    )


def upsert_row(table: str, key: str, columns: str, row: object) -> Statement:
    """:func:`upsert` with its values read from ``row``: each column is the attribute of that
    name (the stored models name their fields as their columns)."""
    names = [n.strip() for n in f"{key}, {columns}".split(",")]
    return upsert(table, key, columns), tuple(getattr(row, n) for n in names)


class StoragePrimitives(ABC):
    """Portable SQL (``?`` placeholders) in, rows out: the per-domain stores build on these."""

    @abstractmethod
    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run a statement; return the number of rows it changed."""

    @abstractmethod
    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    @abstractmethod
    async def execute_atomic(
        self, statements: Sequence[Statement], *, guarded: bool = False
    ) -> list[int]:
        """Run statements in one transaction (all or none); return each one's changed rows.
        ``guarded``: when the first changes no row, the others are not run (counts 0)."""

    @abstractmethod
    async def write_fetch(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one writing statement with ``RETURNING``, commit, and return its rows."""

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await self.fetch(sql, params)
        return rows[0] if rows else None
