"""Every branch of the command layer's one error reply (``bot.runtime.core.report_error``) in
German, end to end: the real discord.py client against the fake Discord and the simulator. The
reply is chosen as a message and its values, and said once in the reader's language: a failed
station call of each kind, a value discord.py cannot convert, a refused check, a known error.
No English is left, and English readers still read the English, byte for byte."""

from __future__ import annotations

from typing import Any

import pytest
from discord import app_commands

from bot import errors
from bot.runtime.core import user_message
from bot.util.i18n import Translator

from .support.botenv import fake_discord_fixture
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import FakeDiscord, snowflake
from .support.stations import programme_sim_fixture
from .test_i18n_bot import english_left
from .test_requests_bot import SLOTS, private_text, running

pytestmark = pytest.mark.e2e

GERMAN = Translator.load().lang("de")

requests_sim = programme_sim_fixture("requests_sim", SLOTS, key="station-key-SECRET-42")
requests_fake = fake_discord_fixture("requests_fake", channels_per_guild=2)


async def _private_reply(env: Any, command: str, options: dict[str, Any] | None = None) -> str:
    """The private reply to ``command``, asked by the owner."""
    message = await env.fake.final_message(await env.fake.slash(command, options), within=30)
    assert message["flags"] & EPHEMERAL
    return str(message["content"])


def _asked_fresh(env: Any) -> None:
    """The next command asks the station (no answer cached, none remembered)."""
    client = env.bot.registry.clients["main"]
    client.last_info = None
    client.forget_cached()


# (the fault on the station's info endpoint, the sentence the reply starts with, whether the
# client's detail follows it: a kind of failure that says more than its summary)
FAULTS = [
    pytest.param({"kind": "html"}, errors.STATION_UNREADABLE, True, id="not-json"),
    pytest.param({"kind": "empty"}, errors.STATION_UNREADABLE, True, id="empty"),
    pytest.param({"kind": "json_array"}, errors.STATION_UNREADABLE, True, id="not-an-object"),
    pytest.param({"kind": "error_json"}, errors.STATION_KEY_REFUSED, False, id="error-body"),
    pytest.param({"kind": "status", "status": 418}, errors.STATION_UNREADABLE, True, id="http-418"),
    pytest.param({"kind": "status", "status": 403}, errors.STATION_KEY_REFUSED, False, id="key"),
    pytest.param({"kind": "status", "status": 404}, errors.STATION_NOT_FOUND, False, id="unknown"),
    pytest.param(
        {"kind": "status", "status": 429}, errors.STATION_UNAVAILABLE, False, id="rate-limited"
    ),
]


@pytest.mark.parametrize(("fault", "summary", "detailed"), FAULTS)
async def test_a_failed_station_call_is_told_in_the_readers_language(
    onair, fault: dict[str, Any], summary: str, detailed: bool
) -> None:
    onair.fake.user_locales[onair.fake.owner_id] = "de"
    _asked_fresh(onair)
    onair.sim.inject(endpoint="info", **fault)
    german = await _private_reply(onair, "station")
    assert german.startswith(GERMAN.t(summary))
    assert (german != GERMAN.t(summary)) is detailed
    assert english_left(german, "de") == []

    onair.fake.user_locales[onair.fake.owner_id] = "en-US"
    _asked_fresh(onair)
    english = await _private_reply(onair, "station")
    assert english.startswith(summary)
    assert english != german
    onair.sim.faults.clear()


async def test_a_station_onair_does_not_contact_is_told_in_the_readers_language(onair) -> None:
    onair.fake.user_locales[onair.fake.owner_id] = "de"
    _asked_fresh(onair)
    onair.sim.inject("redirect", endpoint="info", body="http://10.0.0.1/api/info/1")
    german = await _private_reply(onair, "station")
    assert english_left(german, "de") == []
    assert "10.0.0.1" not in german  # the refused address goes to the log, not to listeners
    onair.sim.faults.clear()


async def test_a_channel_discord_py_cannot_resolve_is_told_in_the_readers_language(onair) -> None:
    fake: FakeDiscord = onair.fake
    fake.user_locales[fake.owner_id] = "de"
    guild = fake.guilds[0]
    hidden = snowflake()  # a private thread OnAir was never told of: not in its cache
    guild.threads.append(hidden)
    iid = await fake.slash(
        "onair", {"channel": str(hidden)}, sub=["announce"], resolved=fake.resolved_channel(hidden)
    )
    reply = (await fake.response(iid)).json["data"]
    assert reply["flags"] & EPHEMERAL
    assert "now-playing-thread" in reply["content"]
    assert english_left(reply["content"], "de", ("now-playing-thread",)) == []


async def test_a_refused_check_and_a_known_error_are_told_in_the_readers_language(onair):
    fake: FakeDiscord = onair.fake
    member = snowflake()
    fake.user_locales[member] = "de"
    iid = await fake.slash(
        "onair", {"language": "fr"}, sub=["settings"], user_id=member, permissions=0
    )
    reply = (await fake.response(iid)).json["data"]
    assert reply["content"] == GERMAN.t(errors.NEED_MANAGE)
    fake.user_locales[fake.owner_id] = "de"
    german = await _private_reply(onair, "nowplaying", {"station": "no-such-station"})
    assert english_left(german, "de") == []


async def test_song_requests_that_are_unavailable_are_told_in_the_readers_language(
    requests_sim: Any, requests_fake: FakeDiscord
) -> None:
    fake = requests_fake
    fake.user_locales[fake.owner_id] = "de"
    async with running(requests_sim, fake):
        requests_sim.inject("html", endpoint="songrequestsearch")
        text = await private_text(fake, await fake.slash("request", {"song": "umbrella"}))
        assert english_left(text, "de") == []
        fake.user_locales[fake.owner_id] = "en-US"
        english = await private_text(fake, await fake.slash("request", {"song": "umbrella"}))
        assert english == "Song requests are unavailable right now; try again in a little while."
        assert text != english


@pytest.mark.parametrize(
    "refused",
    [app_commands.NoPrivateMessage(), app_commands.MissingPermissions(["manage_guild"])],
)
def test_discord_pys_own_refusals_are_said_in_the_readers_language(
    refused: app_commands.CheckFailure,
) -> None:
    assert user_message(refused, GERMAN) == GERMAN.t(errors.NOT_HERE)
    assert user_message(refused) == errors.NOT_HERE
