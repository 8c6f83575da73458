"""Guild stations of every host kind: `/onair station add` takes the kind and checks the
station's name on its host, storage keeps both (rows stored before read as RadioBOSS), the station
list says where each is on its host and `/onair status` names its host."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bot import errors
from bot.catalog.registry import HostState
from bot.config import StationConfig
from bot.render import admin_embeds
from bot.station.hosts import SOURCES
from bot.station.source import KIND_NAMES, KINDS
from bot.storage import GuildStation, PostgresStorage, SqliteStorage
from bot.storage.migrations import MIGRATIONS
from bot.util.i18n import ENGLISH, Translator

from .support.botenv import DEV_OVERRIDE, SECRET, fake_discord_fixture, running_bot
from .support.discord_rules import EPHEMERAL, MODAL
from .support.storage_backends import POSTGRES_ENV, admin_connection, reset_postgres

# The migration that gives guild stations their kind (found by what it does: helpers append
# migrations of their own, and the lead numbers them at merge).
KIND_MIGRATION = next(i for i, script in enumerate(MIGRATIONS) if "station_ref" in script)
OLD_ROW = (
    "INSERT INTO guild_stations (guild_id, slug, name, base_url, station_id, key_cipher, "
    "timezone) VALUES (42, 'mine', 'My FM', 'https://c5.radioboss.fm', 7, NULL, 'UTC')"
)
# What `station_id` is not, for each kind.
BAD_REFS = {"radioboss": "abc", "azuracast": "My Radio!", "icecast": "live", "shoutcast": "x1"}

fake = fake_discord_fixture()


def _sqlite_before_kinds(path: Path) -> None:
    """A SQLite file as OnAir left it before guild stations had a kind, with a station."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for number, script in enumerate(MIGRATIONS[:KIND_MIGRATION], start=1):
            db.executescript(script.format(**SqliteStorage.dialect))
            db.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
        db.execute(OLD_ROW)
        db.commit()


async def _postgres_before_kinds(url: str) -> None:
    await reset_postgres(url)
    async with admin_connection(url) as connection:
        await connection.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        for number, script in enumerate(MIGRATIONS[:KIND_MIGRATION], start=1):
            await connection.execute(script.format(**PostgresStorage.dialect))
            await connection.execute("INSERT INTO schema_version (version) VALUES ($1)", number)
        await connection.execute(OLD_ROW)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_stations_stored_before_kinds_read_as_radioboss(backend, tmp_path):
    if backend == "sqlite":
        path = tmp_path / "old.sqlite3"
        _sqlite_before_kinds(path)
        storage: Any = SqliteStorage(str(path))
    else:
        url = os.environ.get(POSTGRES_ENV)
        if not url:
            pytest.skip(f"PostgreSQL tests need {POSTGRES_ENV}")
        await _postgres_before_kinds(url)
        storage = PostgresStorage(url)
    await storage.open()
    try:
        [station] = await storage.guild_stations()
        assert station == GuildStation(42, "mine", "My FM", "https://c5.radioboss.fm", 7, None)
        assert station.kind == "radioboss"
        assert isinstance(station.station_id, int)
        # Saved again, it reads the same.
        await storage.save_guild_station(station)
        assert await storage.guild_stations() == [station]
    finally:
        await storage.close()


@pytest.mark.parametrize(
    ("kind", "ref"),
    [("radioboss", 7), ("azuracast", "my_radio"), ("icecast", "/live"), ("shoutcast", 2)],
)
async def test_a_guild_station_of_each_kind_is_stored_with_its_reference(storage, kind, ref):
    station = GuildStation(1, "mine", "My FM", "https://radio.example", ref, None, kind=kind)
    await storage.save_guild_station(station)
    [read] = await storage.guild_stations(1)
    assert read == station
    assert type(read.station_id) is type(ref)


@pytest.mark.parametrize(
    ("kind", "ref", "line"),
    [
        ("radioboss", 123, "https://c5.radioboss.fm · station #123"),
        ("azuracast", "my_radio", "https://c5.radioboss.fm · AzuraCast station `my_radio`"),
        ("icecast", "/live", "https://c5.radioboss.fm · Icecast mount `/live`"),
        ("shoutcast", 2, "https://c5.radioboss.fm · Shoutcast stream #2"),
    ],
)
def test_the_station_list_says_where_each_kind_is_on_its_host(kind, ref, line):
    station = StationConfig("s", "S", "https://c5.radioboss.fm", ref, kind=kind)
    assert admin_embeds.where_on_host(station, ENGLISH) == line
    embed = admin_embeds.station_list([station], ENGLISH)
    assert line in (embed.fields[0].value or "")


def test_a_mount_cannot_break_out_of_its_code_span():
    station = StationConfig("s", "S", "https://ice.example", "/a`b*", kind="icecast")
    assert admin_embeds.where_on_host(station, ENGLISH).count("`") == 2


def test_the_status_names_the_host_and_whether_its_push_is_live():
    german = Translator.load().lang("de")
    assert admin_embeds.host_line(HostState("icecast"), ENGLISH) == "host: Icecast (polled)"
    assert admin_embeds.host_line(HostState("azuracast", True), ENGLISH) == (
        "host: AzuraCast · 🟢 pushes each change"
    )
    waiting = admin_embeds.host_line(HostState("azuracast", False), ENGLISH)
    assert waiting == "host: AzuraCast · 🟠 push not connected, polling meanwhile"
    assert admin_embeds.host_line(HostState("azuracast", False), ENGLISH, here=False) == (
        "host: AzuraCast"
    )
    assert admin_embeds.host_line(HostState("azuracast", False), german) != waiting


def bot(sim: Any, fake: Any) -> Any:
    return running_bot(
        sim, fake=fake, env_extra={"ONAIR_SECRET_KEY": SECRET}, bot_extra=DEV_OVERRIDE
    )


async def add(env: Any, station_id: str, kind: str | None = None) -> dict[str, Any]:
    options = {"name": "Other FM", "base_url": env.sim.base_url, "station_id": station_id}
    if kind is not None:
        options["kind"] = kind
    iid = await env.fake.slash("onair", options, sub=["station", "add"])
    body: dict[str, Any] = (await env.fake.response(iid)).json
    return body


@pytest.mark.e2e
async def test_station_add_offers_the_kinds_and_checks_the_station_for_each(live_simulator, fake):
    async with bot(live_simulator, fake) as env:
        onair = next(c for c in fake.commands if c["name"] == "onair")
        group = next(o for o in onair["options"] if o["name"] == "station")
        command = next(o for o in group["options"] if o["name"] == "add")
        kind_option = next(o for o in command["options"] if o["name"] == "kind")
        offered = [(c["name"], c["value"]) for c in kind_option["choices"]]
        assert offered == [(KIND_NAMES[k], k) for k in KINDS]
        assert offered[0] == ("RadioBOSS Cloud", "radioboss")  # first, and the default

        for kind in KINDS:
            body = await add(env, BAD_REFS[kind], kind)
            assert body["data"]["flags"] & EPHEMERAL, body
            if kind in SOURCES:
                assert body["data"]["content"] == errors.STATION_REF_EXPECTED[kind]
            else:
                assert body["data"]["content"] == errors.KIND_NOT_READ.format(host=KIND_NAMES[kind])
        body = await add(env, "mars", "pluto")  # a client sending its own value
        assert body["data"]["flags"] & EPHEMERAL
        # No kind: RadioBOSS Cloud, whose number opens the key form as before.
        assert (await add(env, "2"))["type"] == MODAL
