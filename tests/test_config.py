"""Config loading: the example parses, and each startup problem gets one clear message."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import ConfigError, parse_settings

from .support.cli import SHAPED_TOKEN

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = (ROOT / "config.example.toml").read_text()


def refused(text: str, env: dict[str, str] | None = None) -> pytest.ExceptionInfo[ConfigError]:
    """What ``parse_settings`` raises for ``text`` (in the environment ``env``): a ConfigError."""
    with pytest.raises(ConfigError) as caught:
        parse_settings(text, env or {})
    return caught


def test_example_config_parses_and_documents_every_key():
    settings = parse_settings(EXAMPLE, {"ONAIR_KEY_MAIN": "k"})
    assert settings.stations[0].slug == "main"
    assert settings.stations[0].key == "k"
    assert settings.subscriptions[0].mode == "post"
    from bot.config import SCHEMA

    for section, keys in SCHEMA.items():
        for key in keys:
            assert f"\n{key} = " in EXAMPLE, (
                f"{section}.{key} is not documented in config.example.toml"
            )


def test_stations_play_in_voice_by_default_from_their_listen_link():
    base = "[[stations]]\nid='a'\nname='A'\nbase_url='https://c1.radioboss.fm'\nstation_id=1\n"
    (station,) = parse_settings(base, {}).stations
    assert (station.voice, station.stream_url) == (True, "")
    (station,) = parse_settings(
        base + "voice = false\nstream_url = 'https://c1.radioboss.fm:18001/stream'", {}
    ).stations
    assert (station.voice, station.stream_url) == (False, "https://c1.radioboss.fm:18001/stream")


def test_key_is_not_in_repr():
    settings = parse_settings(
        EXAMPLE, {"ONAIR_KEY_MAIN": "very-secret", "ONAIR_DISCORD_TOKEN": "tok-secret"}
    )
    assert "very-secret" not in repr(settings)
    assert "tok-secret" not in repr(settings)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[bot\nx=1", "not valid TOML"),
        ("[bot]\ndefault_statoin = 'main'", "did you mean 'default_station'"),
        ("[bots]\n", "did you mean 'bot'"),
        ("[announcer]\nmin_interval = 'fast'", "bad value for 'min_interval'"),
        ("[[stations]]\nid='a'\nname='A'\nbase_url='ftp://x'\nstation_id=1", "http(s) URL"),
        (
            "[[stations]]\nid='a'\nname='A'\nbase_url='https://x'\nstation_id=1\ntimezone='Mars/Base'",
            "time zone",
        ),
        (
            "[[stations]]\nid='a'\nname='A'\nbase_url='https://x'\nstation_id=1\nkey_env='NOPE_NOT_SET'",
            "not set",
        ),
        ("[[subscriptions]]\nguild=1\nchannel=2\nstation='zzz'", "not defined"),
        ("[[subscriptions]]\nguild=1\nchannel=2\nstation='x'\nmode='loud'", '"post" or "card"'),
        ("[bot]\nmax_guild_stations = -1", "'max_guild_stations': must be 0 or more"),
        (
            "[[stations]]\nid='a'\nname='A'\nbase_url='https://x'\nstation_id=1\n"
            "stream_url='https://user:pw@x.example/live'",
            "bad value for 'stream_url'",
        ),
        (
            "[[stations]]\nid='a'\nname='A'\nbase_url='https://x'\nstation_id=1\n"
            "stream_url='file:///etc/passwd'",
            "http(s) stream URL",
        ),
        (
            "[[stations]]\nid='a'\nname='A'\nbase_url='https://x'\nstation_id=1\nvoice='yes'",
            "bad value for 'voice'",
        ),
    ],
)
def test_bad_configs_get_one_clear_message(text, message):
    caught = refused(text)
    assert message in str(caught.value)


def test_toml_error_names_the_line():
    with pytest.raises(ConfigError, match="line 3"):
        parse_settings("[bot]\nlog_level = 'INFO'\nthis is not toml\n", {})


def _run(config: str, tmp_path, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "config.toml"
    path.write_text(config)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("ONAIR_") or k == "ONAIR_ENV_FILE"
    }
    env.update(env_extra)
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "run", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=env,
    )


@pytest.mark.e2e
def test_run_without_token_says_so(tmp_path):
    result = _run(EXAMPLE, tmp_path, {"ONAIR_KEY_MAIN": "k"})
    assert result.returncode == 78
    assert "ONAIR_DISCORD_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.e2e
def test_run_with_bad_config_says_what(tmp_path):
    result = _run("[bot]\nlog_levl = 'INFO'\n", tmp_path, {"ONAIR_DISCORD_TOKEN": "x"})
    assert result.returncode == 78
    assert "did you mean 'log_level'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        (b"abc\xff\xfe".decode("utf-8", "surrogateescape"), "is not valid text"),  # os.environ's
        ("abc\ud800", "is not valid text"),
        ("abc\x00def", "holds a control character"),
        ("abc\u200bdef", "holds an invisible character"),
    ],
)
def test_a_key_env_holding_what_no_key_can_be_is_one_clear_line(key, problem):
    text = "[[stations]]\nid='a'\nname='A'\nbase_url='https://x'\nstation_id=1\nkey_env='K'"
    caught = refused(text, {"K": key})
    message = str(caught.value)
    assert f"the key in $K {problem}" in message
    assert len(message.strip().splitlines()) == 1
    assert "abc" not in message  # the key itself is never printed


BROKEN_STATION = "[[stations]]\nid='main'\nname='Main'\nbase_url='ftp://x'\nstation_id=1\n"


def test_a_broken_station_is_one_problem_not_one_more_per_place_that_names_it():
    text = (
        "[bot]\ndefault_station = 'main'\n"
        + BROKEN_STATION
        + "[[guilds]]\nid = 1\ndefault_station = 'main'\n"
        + "[[subscriptions]]\nguild = 1\nchannel = 2\nstation = 'main'\n"
    )
    caught = refused(text)
    assert len(caught.value.problems) == 1, caught.value.problems
    assert "[[stations]] #1 bad value for 'base_url'" in caught.value.problems[0]


def test_a_station_name_that_is_nowhere_says_what_is_defined():
    caught = refused("[bot]\ndefault_station = 'main'\n")
    (problem,) = caught.value.problems
    assert problem.endswith(
        "names station 'main', which is not defined; no [[stations]] entry is defined"
    )
    text = "[bot]\ndefault_station = 'zzz'\n" + BROKEN_STATION.replace("ftp://x", "https://x")
    caught = refused(text)
    (problem,) = caught.value.problems
    assert problem.endswith("which is not defined; defined stations: main")


@pytest.mark.e2e
def test_run_with_one_bad_station_value_prints_one_line(tmp_path):
    config = EXAMPLE.replace('base_url = "https://c5.radioboss.fm"', 'base_url = "ftp:x"')
    assert config != EXAMPLE
    result = _run(config, tmp_path, {"ONAIR_KEY_MAIN": "k", "ONAIR_DISCORD_TOKEN": SHAPED_TOKEN})
    assert result.returncode == 78
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "[[stations]] #1 bad value for 'base_url'" in lines[0]


@pytest.mark.e2e
def test_run_with_a_bad_secret_key_prints_one_line_and_no_session_noise(tmp_path):
    env = {
        "ONAIR_KEY_MAIN": "k",
        "ONAIR_DISCORD_TOKEN": SHAPED_TOKEN,
        "ONAIR_SECRET_KEY": "not-fernet",
    }
    result = _run(EXAMPLE, tmp_path, env)
    assert result.returncode == 78
    lines = result.stderr.strip().splitlines()
    # (the example's [[guilds]], [[subscriptions]], [[alerts]] and [[recaps]] are named first)
    examples = [line for line in lines if "config.example.toml's example id" in line]
    assert len(examples) == 4, result.stderr
    lines = [line for line in lines if line not in examples]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("onair: ONAIR_SECRET_KEY is not a valid Fernet key")
    assert "not-fernet" not in result.stderr


def test_the_example_entries_with_made_up_ids_are_marked_as_examples():
    lines = EXAMPLE.splitlines()
    for index, line in enumerate(lines):
        if line in ("[[guilds]]", "[[subscriptions]]", "[[stations]]"):
            assert "EXAMPLE" in lines[index - 1], f"{line} is not marked as an example"
    assert "EXAMPLES TO DELETE OR REPLACE" in EXAMPLE


def test_guilds_choose_live_events_and_the_voice_status():
    base = "[[stations]]\nid='a'\nname='A'\nbase_url='https://c1.radioboss.fm'\nstation_id=1\n"
    (guild,) = parse_settings(base + "[[guilds]]\nid = 111111111111111111\n", {}).guilds
    assert (guild.live_events, guild.voice_status) == ((), None)  # the admins' choice stands
    text = base + "[[guilds]]\nid = 111111111111111111\nlive_events = ['a']\nvoice_status = false"
    (guild,) = parse_settings(text, {}).guilds
    assert (guild.live_events, guild.voice_status) == (("a",), False)
    with pytest.raises(ConfigError) as error:
        parse_settings(base + "[[guilds]]\nid = 111111111111111111\nlive_events = ['b']", {})
    assert "[[guilds]] #1 live_events names station 'b', which is not defined" in str(
        error.value.problems
    )


def test_alerts_and_recaps_in_the_config_file():
    base = "[[stations]]\nid='a'\nname='A'\nbase_url='https://c1.radioboss.fm'\nstation_id=1\n"
    text = (
        base
        + "[[alerts]]\nguild = 11\nstation = 'a'\nchannel = 22\nrole = 33\n"
        + "[[recaps]]\nguild = 11\nstation = 'a'\nchannel = 44\nday = 'sunday'\nhour = 9\n"
    )
    settings = parse_settings(text, {})
    (alert,) = settings.alerts
    assert (alert.guild_id, alert.station, alert.channel_id, alert.role_id) == (11, "a", 22, 33)
    (recap,) = settings.recaps
    assert (recap.guild_id, recap.channel_id, recap.station, recap.weekday, recap.hour) == (
        11,
        44,
        "a",
        6,
        9,
    )


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("[[recaps]]\nguild = 1\nstation = 'a'\nchannel = 2\nday = 'Funday'", "day of the week"),
        ("[[recaps]]\nguild = 1\nstation = 'a'\nchannel = 2\nhour = 24", "hour from 0 to 23"),
        ("[[alerts]]\nguild = 1\nstation = 'zzz'\nchannel = 2", "[[alerts]] #1 station names"),
    ],
)
def test_bad_alerts_and_recaps_are_one_line_each(entry, message):
    base = "[[stations]]\nid='a'\nname='A'\nbase_url='https://c1.radioboss.fm'\nstation_id=1\n"
    caught = refused(base + entry)
    assert len(caught.value.problems) == 1, caught.value.problems
    assert message in caught.value.problems[0]


def test_the_example_ids_are_those_of_config_example_toml_and_each_entry_is_named():
    import tomllib

    from bot.config.examples import EXAMPLE_IDS, example_ids_in

    raw = tomllib.loads(EXAMPLE)
    found = {raw_entry["id"] for raw_entry in raw["guilds"]}
    for table in ("subscriptions", "alerts", "recaps"):
        for entry in raw[table]:
            found |= {entry["guild"], entry["channel"]}
    assert found == EXAMPLE_IDS
    lines = example_ids_in(parse_settings(EXAMPLE, {"ONAIR_KEY_MAIN": "k"}))
    assert [line.split(":")[0] for line in lines] == [
        "[[guilds]] #1",
        "[[subscriptions]] #1",
        "[[alerts]] #1",
        "[[recaps]] #1",
    ]
    assert lines[1].startswith(
        "[[subscriptions]] #1: 111111111111111111 and 222222222222222222: config.example.toml's "
        "example ids; put your own in its place"
    )


def test_the_example_id_warning_points_at_a_section_that_exists():
    import re

    from bot.config.examples import example_ids_in

    line = example_ids_in(parse_settings(EXAMPLE, {"ONAIR_KEY_MAIN": "k"}))[0]
    where = re.search(r'\(([\w./-]+), "([^"]+)"\)', line)
    assert where, line
    page = ROOT / where.group(1)
    assert page.is_file(), where.group(1)
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert where.group(2) in headings, (where.group(1), headings)
