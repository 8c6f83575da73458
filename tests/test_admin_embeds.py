"""The setup commands' replies: said once, with what to do next, states at a glance."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.announcer import StationStatus
from bot.config import StationConfig
from bot.render import admin_embeds
from bot.render.problems import staff_reason
from bot.station import (
    RetryPolicy,
    StationAuthError,
    StationNotFound,
    StationRefused,
    StationResponseError,
    StationUnavailable,
)
from bot.station.errors import Failure
from bot.storage import Subscription

from .support.stations import KEY, make_client

MAIN = StationConfig("main", "Main FM", "https://c9.radioboss.fm", 1, key="k")
LATE = StationConfig("late", "Late Night", "https://c9.radioboss.fm", 3, owner_guild=7)


def test_status_with_nothing_set_up_says_so_once_and_names_the_command():
    embed = admin_embeds.status([MAIN, LATE], lambda _: None, [], {})
    assert not embed.fields
    assert (embed.description or "").count("watched") == 1
    assert "`/onair announce`" in (embed.description or "")


def test_status_marks_states_and_channels():
    states = {"main": StationStatus(state="ok"), "late": StationStatus(state="unreachable")}
    subs = [
        Subscription(1, 7, 10, "main", mode="post"),
        Subscription(2, 7, 11, "late", mode="card", paused_reason="Missing access"),
    ]
    embed = admin_embeds.status([MAIN, LATE], lambda s: states[s.slug], subs, {"sent": 3})
    values = {field.name: field.value for field in embed.fields}
    assert (values["Main FM"] or "").startswith("🟢 answering")
    assert (values["Late Night"] or "").startswith("🔴 unreachable")
    assert values["Announcing in"] == "🟢 <#10> (post)"
    paused = values["Paused (fix the cause, then /onair resume)"] or ""
    assert "🔴 <#11>: Missing access" in paused


def test_station_list_has_one_field_per_station():
    embed = admin_embeds.station_list([MAIN, LATE])
    assert [field.name for field in embed.fields] == ["Main FM (main)", "Late Night (late)"]
    assert "🔑 key set" in (embed.fields[0].value or "")
    assert "from the bot's config file" in (embed.fields[0].value or "")
    assert "⚠️ no key" in (embed.fields[1].value or "")
    assert "added in this server" in (embed.fields[1].value or "")
    empty = admin_embeds.station_list([])
    assert "`/onair station add`" in (empty.description or "")


AT = datetime(2026, 11, 25, 22, 45, tzinfo=UTC)
TIMEOUT = Failure(StationUnavailable, "c9.radioboss.fm", "timeout", StationUnavailable().message)


def test_a_green_station_shows_its_last_error_with_the_cause_the_server_and_when():
    ok = StationStatus(state="ok", failure=TIMEOUT, failed_at=AT)
    embed = admin_embeds.status([MAIN], lambda _: ok, [Subscription(1, 7, 10, "main")], {})
    lines = (embed.fields[0].value or "").splitlines()
    assert lines[0] == "🟢 answering"
    stamp = int(AT.timestamp())
    assert lines[-1] == (
        f"last error: no answer from c9.radioboss.fm (timeout), <t:{stamp}:t>, <t:{stamp}:R>"
    )
    assert "try again" not in repr(embed.to_dict())  # the listener's words are not staff's


def test_nowhere_says_why_and_how_to_go_on():
    watched = {"main": StationStatus(state="ok")}
    paused = [Subscription(1, 7, 10, "main", paused_reason="Missing access")]
    embed = admin_embeds.status([MAIN], lambda s: watched[s.slug], paused, {})
    values = {field.name: field.value or "" for field in embed.fields}
    assert values["Announcing in"].startswith("Nowhere: every channel is paused.")
    assert "`/onair resume channel:`" in values["Announcing in"]
    assert "🔴 <#10>: Missing access" in values["Paused"]  # said once: not again in its name
    # Watched for alerts alone: nothing is paused, so nothing says it is.
    embed = admin_embeds.status([MAIN], lambda s: watched[s.slug], [], {})
    values = {field.name: field.value or "" for field in embed.fields}
    assert "paused" not in values["Announcing in"]
    assert "`/onair announce`" in values["Announcing in"]


@pytest.mark.parametrize(
    ("kind", "cause", "said"),
    [
        (StationUnavailable, "timeout", "no answer from {server} (timeout)"),
        (StationUnavailable, "HTTP 503", "no answer from {server} (HTTP 503)"),
        (StationUnavailable, "ClientConnectorError", "no answer from {server} (could not connect)"),
        (StationUnavailable, "", "no answer from {server}"),
        (StationAuthError, "HTTP 401", "{server} refused the API key (HTTP 401)"),
        (StationNotFound, "HTTP 404", "{server} does not know this station id (HTTP 404)"),
        (StationRefused, "", "{server} is at an address OnAir does not contact"),
        (StationResponseError, "", "an answer from {server} that OnAir cannot read"),
    ],
)
def test_staff_reasons_name_the_cause_and_the_server(kind, cause, said):
    failure = Failure(kind, "c9.radioboss.fm:8443", cause, kind().message)
    assert staff_reason(failure) == said.format(server="c9.radioboss.fm:8443")


async def test_a_failed_call_names_its_server_and_cause_never_the_key(simulator, session):
    simulator.inject("status", status=503, times=1)
    client = make_client(simulator, session, retry=RetryPolicy(tries=1))
    with pytest.raises(StationUnavailable) as caught:
        await client.info(max_age=0)
    server = simulator.base_url.split("://")[1]
    assert staff_reason(caught.value) == f"no answer from {server} (HTTP 503)"
    simulator.inject("status", status=403, times=1)
    with pytest.raises(StationAuthError) as refused:
        await client.info(max_age=0)
    assert staff_reason(refused.value) == f"{server} refused the API key (HTTP 403)"
    assert KEY not in staff_reason(refused.value)


def test_a_down_alert_shows_no_server_or_code_and_reads_as_english():
    """An alert channel may be public: the host, port and HTTP code are staff's (/onair
    status, the log), and the sentence is English ("has not answered since")."""
    from bot.render.alert_embeds import alert_message
    from bot.scheduled.alerts import NOT_PLAYING

    payload = {"kind": "down", "station_name": "Main FM", "at": AT.timestamp(), "since": 0.0}
    failure = Failure(StationUnavailable, "127.0.0.1:43607", "HTTP 503", "x")
    for stored in (failure.dumps(), Failure.of(StationAuthError()).dumps(), "an older text"):
        text = alert_message({**payload, "reason": stored}).embed.description or ""
        assert text == (
            "**Main FM** has not answered since <t:0:t> (<t:0:R>).\n"
            "OnAir posts here again when it is back.\n"
            "-# Admins find the cause in `/onair status`."
        )
    silent = alert_message({**payload, "reason": NOT_PLAYING}).embed.description or ""
    assert silent.startswith("**Main FM** has played nothing since <t:0:t> (<t:0:R>).\n")


def test_unreachable_since_is_a_moment_not_a_relative_time():
    """ "since {since}" with Discord's relative time read "since 5 minutes ago" in every
    language ("seit vor 5 Minuten"): the moment is written as a date and time instead."""
    down = StationStatus(state="unreachable", unreachable_since=AT)
    embed = admin_embeds.status([MAIN], lambda _: down, [Subscription(1, 7, 10, "main")], {})
    text = str(embed.fields[0].value)
    assert f"unreachable since <t:{int(AT.timestamp())}:f>" in text
    assert f"<t:{int(AT.timestamp())}:R>" not in text
