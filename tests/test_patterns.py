"""Guild- and owner-supplied skip patterns run on a linear-time engine (RE2), bounded in size."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bot.announcer.filters import skip_reason
from bot.config import ConfigError, parse_settings
from bot.station import Play
from bot.storage import Subscription

from .support.cli import ROOT
from .support.discord_rules import EPHEMERAL

UNSAFE_WORDS = "can't run safely"

# Catastrophic backtracking for a backtracking engine: 2^n paths for an n-character title.
EVIL = "(.+)+Q"


def test_catastrophic_pattern_on_a_long_title_completes():
    # In a subprocess: a backtracking engine would hold the GIL here for longer than the universe
    # lasts, so the only safe way to see it fail is from outside (killed at the timeout).
    script = (
        "from bot.announcer.filters import skip_reason\n"
        "from bot.station import Play\n"
        "from bot.storage import Subscription\n"
        f"sub = Subscription(0, 1, 2, 's', skip_pattern={EVIL!r})\n"
        "title = 'a' * 5000\n"
        "print(skip_reason(sub, Play(title, 'b' * 60, file='c' * 70)))\n"
        "print(skip_reason(sub, Play('a' * 40 + 'Q', 'x')))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=30, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{EVIL} against a long title did not finish")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["None", "matches the skip pattern"]


def test_matching_is_case_insensitive_and_clipped():
    sub = Subscription(0, 1, 2, "s", skip_pattern="jingle")
    assert skip_reason(sub, Play("Station JINGLE 3")) == "matches the skip pattern"
    # Only the first kilobyte of a title is looked at: matching stays bounded.
    tail = Subscription(0, 1, 2, "s", skip_pattern="NEEDLE")
    assert skip_reason(tail, Play("x" * 5000 + "NEEDLE")) is None
    assert skip_reason(tail, Play("NEEDLE" + "x" * 5000)) == "matches the skip pattern"


def test_unsafe_patterns_are_refused_at_config_load():
    base = (
        "[[stations]]\nid='main'\nname='Main'\nbase_url='https://c5.radioboss.fm'\n"
        "station_id=1\n[[subscriptions]]\nguild=1\nchannel=2\nstation='main'\n"
    )
    assert parse_settings(base + "skip_pattern='^Jingle'\n", {}).subscriptions[0].skip_pattern
    for bad in (r"(a)\1", "(?=x)y", "(?<!x)y", "a" * 201):
        with pytest.raises(ConfigError) as caught:
            parse_settings(base + f"skip_pattern='{bad}'\n", {})
        message = str(caught.value)
        assert "skip_pattern" in message
        assert "\n" not in message
        if len(bad) <= 200:
            assert UNSAFE_WORDS in message


@pytest.mark.e2e
async def test_backreference_pattern_refused_by_the_announce_command(dev_bot):
    async with dev_bot() as env:
        fake = env.fake
        channel = env.guild.channels[1]
        iid = await fake.slash(
            "onair",
            {"channel": str(channel), "skip_pattern": r"(a)\1"},
            sub=["announce"],
            resolved=fake.resolved_channel(channel),
        )
        reply = (await fake.response(iid)).json["data"]
        assert reply["flags"] & EPHEMERAL
        assert UNSAFE_WORDS in reply["content"]
        assert "backreferences" in reply["content"]
        assert await env.bot.storage.subscriptions(guild_id=env.guild.id) == []
        iid = await fake.slash(
            "onair",
            {"channel": str(channel), "skip_pattern": "^(Jingle|Ad) "},
            sub=["announce"],
            resolved=fake.resolved_channel(channel),
        )
        assert "will be announced" in (await fake.response(iid)).json["data"]["content"]


def test_a_stored_pattern_re2_refuses_is_ignored_with_one_warning(caplog):
    sub = Subscription(0, 1, 2, "main", skip_pattern=r"(\w)\1 stored long ago")
    play = Play(title="aa stored long ago")
    with caplog.at_level("WARNING", logger="onair.patterns"):
        assert skip_reason(sub, play) is None  # ignored, not crashing and not skipping all
        assert skip_reason(sub, play) is None
    warnings = [r for r in caplog.records if "is ignored" in r.getMessage()]
    assert len(warnings) == 1
    assert "/onair announce" in warnings[0].getMessage()
