"""Operations: redacting logs, metrics and /healthz on loopback, and shard-aware polling."""

from __future__ import annotations

import io
import logging
import socket

import aiohttp
import pytest

from bot.config import Settings
from bot.runtime.logs import RedactingFilter, setup_logging

from .support.botenv import fake_discord_fixture, running_bot, subscription_config

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
