"""`onair check` as a subprocess against `onair simulate` as a subprocess."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request

import pytest

from .support.cli import KEY, ONAIR, ROOT, admin, check

pytestmark = pytest.mark.e2e  # every test here runs `onair` as a child process


def test_check_success_summary(sim_url):
    result = check(sim_url)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for label in (
        "Station:",
        "Now playing:",
        "Listeners:",
        "Next:",
        "Recent (5 of 10)",
        "Playlist:",
        "Stats ",
        "Requests:    taken (0 waiting in its queue)",
    ):
        assert label in out
    assert KEY not in out + result.stderr


def test_check_says_when_a_station_refuses_requests(sim_url):
    admin(sim_url, "POST", "/_admin/requests", {"station": 1, "off": True})
    try:
        result = check(sim_url)
    finally:
        admin(sim_url, "POST", "/_admin/requests", {"station": 1, "off": False})
    assert result.returncode == 0, result.stderr
    assert "Requests:    off (the station refuses them)" in result.stdout


def test_check_key_from_environment_and_json(sim_url):
    result = check(sim_url, "--json", key=None, env={"ONAIR_STATION_KEY": KEY})
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["current_play"]["title"]
    assert len(body["info"]["recent"]) == 10
    assert body["playlist"]["items"]


def test_check_says_whether_song_links_work(sim_url):
    """One line: the simulator's song search answers (found or not, it is "on"), "off" when
    turned off, "failing" with the reason when nothing answers there."""
    on = check(sim_url, "--lookup-url", f"{sim_url}/search")
    assert on.returncode == 0, on.stderr
    assert "Song links:  on (" in on.stdout
    off = check(sim_url, "--lookup-url", "off")
    assert "Song links:  off" in off.stdout
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    failing = check(sim_url, "--lookup-url", f"http://127.0.0.1:{port}/search")
    assert failing.returncode == 0, failing.stderr
    assert "Song links:  failing (the song search did not answer usably: 127.0.0.1:" in (
        failing.stdout
    )


def _assert_one_line_failure(result: subprocess.CompletedProcess[str], words: str) -> None:
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert words in lines[0]
    assert KEY not in result.stderr
    assert "wrong-key" not in result.stderr
    assert result.stdout == ""


def test_check_wrong_key(sim_url):
    _assert_one_line_failure(check(sim_url, key="wrong-key"), "refused the API key")


def test_a_refused_key_names_where_it_came_from_not_an_admin(sim_url):
    """Who runs `onair check` gave the key: the line says where it came from, to fix it there."""
    given = check(sim_url, key="wrong-key")
    _assert_one_line_failure(given, "refused the API key given with --key")
    from_env = check(sim_url, key=None, env={"ONAIR_STATION_KEY": "wrong-key"})
    _assert_one_line_failure(from_env, "refused the API key in ONAIR_STATION_KEY")
    for result in (given, from_env):
        assert "admin" not in result.stderr


def test_check_unknown_station(sim_url):
    result = subprocess.run(
        [*ONAIR, "check", "--base-url", sim_url, "--station", "4242", "--key", KEY],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    _assert_one_line_failure(result, "does not know this station")


def test_check_html_body(sim_url):
    admin(sim_url, "POST", "/_admin/fault", {"kind": "html", "times": 1})
    _assert_one_line_failure(check(sim_url), "not valid JSON")


def test_check_timeout(sim_url):
    admin(sim_url, "POST", "/_admin/fault", {"kind": "delay", "seconds": 3, "times": 3})
    try:
        _assert_one_line_failure(check(sim_url, "--timeout", "0.5"), "did not answer in time")
    finally:
        admin(sim_url, "DELETE", "/_admin/fault")


@pytest.mark.parametrize(
    "args",
    [
        ["check"],
        ["check", "--base-url", "ftp://x", "--station", "1"],
        ["check", "--base-url", "http://x", "--station", "abc"],
        ["nonsense"],
    ],
)
def test_bad_arguments_exit_64_with_usage(args):
    result = subprocess.run([*ONAIR, *args], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert result.returncode == 64
    assert "usage:" in result.stderr


def test_check_without_any_key_says_none_was_given(sim_url):
    result = check(sim_url, key=None, env={"ONAIR_STATION_KEY": ""})
    _assert_one_line_failure(result, "none was given")
    assert "--key -" in result.stderr
    assert "ONAIR_STATION_KEY" in result.stderr
    assert "refused" not in result.stderr


def test_simulate_port_out_of_range_is_one_line_and_help_shows_defaults():
    result = subprocess.run(
        [*ONAIR, "simulate", "--port", "99999"],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=ROOT,
    )
    assert result.returncode == 64
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "onair simulate: error: argument --port: expected a TCP port from 0 to 65535, not '99999'"
    )
    usage = subprocess.run(
        [*ONAIR, "simulate", "--help"], capture_output=True, text=True, timeout=30, cwd=ROOT
    ).stdout
    for option in ("--host", "--port", "--speed", "--key", "--seed", "--station"):
        line = next(line for line in usage.splitlines() if line.strip().startswith(option))
        assert len(line.split()) > 2, f"{option} has no help"
    assert "(default 8765)" in usage
    assert "(default demo-key)" in usage


def test_simulate_on_a_busy_port_suggests_port_0():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [*ONAIR, "simulate", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=30,
            cwd=ROOT,
        )
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"onair: cannot listen on 127.0.0.1:{port}: Address already in use (another program "
        "listens there: --port 0 takes any free port)"
    ]


def test_watch_without_any_key_says_none_was_given(sim_url):
    result = subprocess.run(
        [*ONAIR, "watch", "--base-url", sim_url, "--station", "1"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "ONAIR_STATION_KEY": ""},
    )
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("onair watch: the station wants an API key and none was given")


def test_simulate_prints_a_check_command_that_works_as_typed():
    """After the Quick start `onair` is `.venv/bin/onair`, not on the PATH; the key goes through
    the environment, as docs/running.md advises, not `--key` on the command line."""
    typed = os.path.relpath(os.path.join(os.path.dirname(sys.executable), "onair"), ROOT)
    if not os.path.exists(os.path.join(ROOT, typed)):
        pytest.skip("no onair console script beside this Python")
    bare = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/tmp")}
    proc = subprocess.Popen(
        [typed, "simulate", "--port", "0"], stdout=subprocess.PIPE, text=True, cwd=ROOT, env=bare
    )
    try:
        assert proc.stdout is not None
        proc.stdout.readline()
        advice = proc.stdout.readline()
        command = advice.split(": ", 1)[1].strip()
        assert "--key" not in command
        result = subprocess.run(
            ["bash", "-c", command], capture_output=True, text=True, timeout=60, cwd=ROOT, env=bare
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert result.returncode == 0, (command, result.stderr)
    assert "Now playing:" in result.stdout


def test_simulate_sped_up_reports_songs_at_their_library_length():
    """`onair simulate --speed 10` airs a 3-minute song in 18 s, yet reports its length as a
    station would: an item under 30 s is a jingle, which OnAir never announces, so a sped-up
    station whose songs reported their aired length would announce nothing."""
    proc = subprocess.Popen(
        [*ONAIR, "simulate", "--port", "0", "--speed", "10"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        base = proc.stdout.readline().split(" on ", 1)[1].split(" ", 1)[0]
        url = f"{base}/api/info/1?key=demo-key"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    durations = [int(d) for d in re.findall(r'DURATION="(\d+)"', body)]
    durations += [int(d) for d in re.findall(r'"DURATION":\s*"?(\d+)', body)]
    assert durations, body[:500]
    assert max(durations) >= 30, durations


def test_simulate_and_check_an_azuracast_station():
    proc = subprocess.Popen(
        [*ONAIR, "simulate", "--kind", "azuracast", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        first, second = proc.stdout.readline(), proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+)", first)
        assert match, f"simulate printed {first!r}"
        assert "check --kind azuracast --base-url" in second
        assert "--station onair_radio" in second
        result = subprocess.run(
            [
                *ONAIR,
                "check",
                "--kind",
                "azuracast",
                "--base-url",
                match.group(1),
                "--station",
                "onair_radio",
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    checked = json.loads(result.stdout)
    assert checked["kind"] == "azuracast"
    assert checked["features"] == ["artwork", "push", "recent", "requests", "schedule"]
    assert checked["current_play"]["started_exact"] is True
    assert checked["playlist"] is None
    assert checked["requests"] == {"state": "on", "waiting": None}
