"""Operations: redacting logs, metrics and /healthz on loopback, and shard-aware polling."""

from __future__ import annotations

import asyncio
import io
import logging
import socket
from datetime import UTC, datetime

import aiohttp
import pytest
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from bot.announcer.pollreport import station_label
from bot.announcer.watcher import StationWatch
from bot.config import Settings, StationConfig
from bot.runtime.logs import RedactingFilter, setup_logging
from bot.shows.service import ShowsService
from bot.util.hooks import Hook

from .support.botenv import fake_discord_fixture, running_bot, subscription_config
from .support.fakediscord import CREATE_EVENTS, MANAGE_EVENTS, FakeDiscord
from .support.stations import KEY, make_client
from .support.waiting import wait_for

fake = fake_discord_fixture()


def test_root_logger_redacts_keys_and_tokens():
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logging.getLogger("discord").level)
    setup_logging("DEBUG", secrets=["tok.en.secret", "station-key-9"])
    root.handlers[0].stream = stream  # type: ignore[attr-defined]
    try:
        logging.getLogger("any").info("GET https://c1.radioboss.fm/api/info/1?key=abc123&x=1")
        logging.getLogger("any").warning("token tok.en.secret and key station-key-9 leaked?")
        try:
            raise RuntimeError("failed for https://h/api?key=zzz999")
        except RuntimeError:
            logging.getLogger("any").exception("boom")
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        logging.getLogger("discord").setLevel(saved[2])
    text = stream.getvalue()
    assert "abc123" not in text
    assert "tok.en.secret" not in text
    assert "station-key-9" not in text
    assert "zzz999" not in text
    assert "key=***" in text
    assert isinstance(RedactingFilter(), logging.Filter)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.e2e
async def test_metrics_and_healthz_on_loopback(fake, live_simulator):
    port = _free_port()
    guild = fake.guilds[0]
    config = f"[metrics]\nport = {port}\n" + subscription_config(guild.id, guild.channels[0])
    async with running_bot(live_simulator, fake=fake, extra_config=config) as env:
        await fake.wait_request("POST", rf"^/channels/{guild.channels[0]}/messages$")
        await env.bot.announcer.idle()
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/healthz") as response:
                assert response.status == 200
                assert (await response.json()) == {"ok": True}
            async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                text = await response.text()
        assert "onair_watched_stations 1" in text
        assert "onair_subscriptions 1" in text
        assert "onair_announcements_total 1" in text
        assert 'onair_announcement_delay_seconds_bucket{le="+Inf"} 1' in text


def test_shard_formula():
    settings = Settings(shard_count=4, shard_ids=(1,))
    guild_on_1 = (123 << 22) | 5  # (id >> 22) % 4 == 3 -> not ours
    assert not settings.handles_guild(guild_on_1)
    assert settings.handles_guild((121 << 22) | 7)  # 121 % 4 == 1
    assert Settings().handles_guild(guild_on_1)


@pytest.mark.e2e
async def test_process_polls_only_stations_of_its_own_shards(fake, live_simulator):
    guild = fake.guilds[0]
    other_shard = ((guild.id >> 22) % 2 + 1) % 2
    config = subscription_config(guild.id, guild.channels[0])
    bot_extra = f"shard_count = 2\nshard_ids = [{other_shard}]\n"
    async with running_bot(
        live_simulator, fake=fake, extra_config=config, bot_extra=bot_extra
    ) as env:
        assert env.bot.shard_count == 2
        assert env.bot.announcer.watched() == []  # this guild belongs to the other shard


async def test_a_failing_station_is_one_warning_per_cause_naming_it_and_its_key_variable(
    simulator, session, caplog
):
    caplog.set_level(logging.DEBUG)
    station = StationConfig(
        "main", "My Radio", simulator.base_url, 1, key=KEY, key_env="ONAIR_KEY_MAIN"
    )
    watch = StationWatch(
        make_client(simulator, session),
        job_id="watch:0123abcd",
        label=lambda: station_label([station]),
    )

    def said(level: int) -> list[str]:
        return [
            r.getMessage() for r in caplog.records if r.name == "onair.watch" and r.levelno == level
        ]

    simulator.inject("status", status=401, times=2)  # two polls: the key is refused
    simulator.inject("status", status=503, times=6)  # two polls of three attempts: no answer
    for _ in range(4):
        await watch.poll()
    await watch.poll()  # answers again
    await watch.poll()
    warnings = said(logging.WARNING)
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith(
        "station main (key from ONAIR_KEY_MAIN) refused the API key: check the key in that "
        "variable; polling again in"
    )
    assert warnings[1].startswith(
        "station main (key from ONAIR_KEY_MAIN) is not answering (HTTP 503); polling again in"
    )
    assert said(logging.INFO) == [
        "station main (key from ONAIR_KEY_MAIN) answers again (after 4 failed polls)"
    ]
    assert len(said(logging.DEBUG)) == 2  # the same cause again
    # nothing else at INFO or above: not the station client's line for each failed request
    loud = [r for r in caplog.records if r.levelno >= logging.INFO and r.name.startswith("onair")]
    assert len(loud) == 3, [r.getMessage() for r in loud]
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "watch:" not in text
    assert KEY not in text


@pytest.mark.e2e
async def test_the_bot_names_each_watched_station_as_configured(fake, live_simulator):
    guild = fake.guilds[0]
    config = subscription_config(guild.id, guild.channels[0])
    async with running_bot(live_simulator, fake=fake, extra_config=config) as env:
        await wait_for(lambda: bool(env.bot.announcer.watched()))
        labels = [w.label() for w in env.bot.announcer.watched()]
    assert labels == ["station main (key from ONAIR_TEST_STATION_KEY)"]


@pytest.mark.parametrize(("level", "shown"), [("INFO", False), ("DEBUG", True)])
async def test_apschedulers_lines_per_poll_are_debug_only(level, shown):
    stream = io.StringIO()
    root = logging.getLogger()
    touched = [logging.getLogger(name) for name in ("apscheduler", "discord", "aiosqlite")]
    saved = (root.handlers[:], root.level, [logger.level for logger in touched])
    setup_logging(level)
    root.handlers[0].stream = stream  # type: ignore[attr-defined]
    scheduler = AsyncIOScheduler()
    ran = asyncio.Event()

    async def poll() -> None:
        ran.set()

    try:
        scheduler.start()
        scheduler.add_job(poll, "date", run_date=datetime.now(UTC))
        await asyncio.wait_for(ran.wait(), timeout=10)
        await wait_for(lambda: not scheduler.get_jobs())  # "executed successfully" was logged
    finally:
        scheduler.shutdown(wait=False)
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
        for logger, was in zip(touched, saved[2], strict=True):
            logger.setLevel(was)  # setup_logging's levels would hide later tests' DEBUG lines
    text = stream.getvalue()
    assert ("Running job" in text) is shown, text
    assert ("Added job" in text) is shown, text


@pytest.mark.e2e
async def test_an_example_channel_id_is_named_as_such_not_as_a_deleted_channel(
    fake, live_simulator, caplog
):
    guild = fake.guilds[0]
    example = 222222222222222222  # config.example.toml's channel
    config = subscription_config(guild.id, example)
    async with running_bot(live_simulator, fake=fake, extra_config=config) as env:
        await fake.wait_request("GET", rf"^/channels/{example}$")
        await wait_for(lambda: env.bot.announcer.failed >= 1, within=30)
        (sub,) = await env.bot.storage.subscriptions()
    assert sub.paused_reason is not None
    assert sub.paused_reason.startswith(
        f"channel {example} is config.example.toml's example id: put your own in config.toml"
    )
    assert len(sub.paused_reason) <= 150  # /onair status shows 150 characters
    assert "no longer exists" not in caplog.text


def _prepare_events(fake: FakeDiscord) -> None:
    # The first guild invited OnAir before Discord's 2026 split: Manage Events makes no event.
    fake.guilds[0].bot_role_permissions = MANAGE_EVENTS
    fake.guilds[1].bot_role_permissions = CREATE_EVENTS  # the second guild may make events


events_fake = fake_discord_fixture("events_fake", prepare=_prepare_events, guild_count=2)


@pytest.mark.e2e
async def test_live_events_without_create_events_are_reported_at_start_up(
    events_fake, live_simulator, caplog
):
    caplog.set_level(logging.INFO, logger="onair.shows")
    without, allowed = events_fake.guilds
    config = "".join(
        f'\n[[guilds]]\nid = {g.id}\nlive_events = ["main"]\n' for g in (without, allowed)
    )
    async with running_bot(live_simulator, fake=events_fake, extra_config=config):
        await wait_for(lambda: "Create Events" in caplog.text)
    lines = [r.getMessage() for r in caplog.records if "Create Events" in r.getMessage()]
    assert lines == [
        f"guild {without.id} ({without.name}): live-show events are on for main (live_events or "
        "/onair events) but OnAir lacks the Create Events permission there (Manage Events alone "
        "is not enough); no event is made until a server admin grants it"
    ]
    assert all(
        r.levelno == logging.WARNING for r in caplog.records if "Create Events" in r.getMessage()
    )


@pytest.mark.e2e
async def test_the_start_up_permission_check_after_a_stop_is_quiet(
    events_fake, live_simulator, caplog
):
    """The check runs on READY, as a task discord.py does not wait for: a bot stopped right
    after READY may run it on a closed database. Found in CI: "Ignoring exception in on_ready"
    with sqlite3's "Cannot operate on a closed database"."""
    config = f'\n[[guilds]]\nid = {events_fake.guilds[0].id}\nlive_events = ["main"]\n'
    async with running_bot(live_simulator, fake=events_fake, extra_config=config) as env:
        bot = env.bot
    assert bot.is_closed()
    late = ShowsService(
        bot,
        bot.storage,  # closed with the bot
        bot.registry,
        bot.voice,
        refresh_watches=Hook("refresh watches"),
        handles_guild=lambda guild_id: True,
    )
    said = len(caplog.records)
    await late.report_missing_permissions()  # raised sqlite3.ProgrammingError before the fix
    assert [r.getMessage() for r in caplog.records[said:] if r.levelno >= logging.WARNING] == []
