"""The setup commands' replies: said once, with what to do next, states at a glance."""

from __future__ import annotations

from bot.announcer import StationStatus
from bot.config import StationConfig
from bot.render import admin_embeds
from bot.storage import Subscription

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
