"""What every station host shares in Discord: a command whose data the host lacks says so in
one private line naming the host's kind, and its station autocomplete leaves the station out.
Parametrized over the kinds present in ``bot.station.hosts.SOURCES`` at test time, asserting on
each class's own ``features`` (the real registry, the real client classes)."""

from __future__ import annotations

import pytest

from bot import errors
from bot.station.errors import NotOffered
from bot.station.hosts import SOURCES
from bot.station.source import KIND_NAMES, KINDS, Feature
from bot.util.i18n import ENGLISH, Translator

from .support.botenv import fake_discord_fixture, running_bot
from .support.discord_rules import AUTOCOMPLETE_RESULT, EPHEMERAL

# A station reference each kind accepts (``station_ref``).
EXAMPLE_REFS = {"radioboss": "2", "azuracast": '"my_radio"', "icecast": '"/live"', "shoutcast": "1"}
# The commands gated by a feature, with the options they need besides ``station``.
GATED = {
    "playlist": (Feature.PLAYLIST, {}),
    "stats": (Feature.STATS, {}),
    "requests": (Feature.REQUESTS, {}),
    "request": (Feature.REQUESTS, {"song": "1004"}),
}

fake = fake_discord_fixture()


def other_station(kind: str, base_url: str, guild_id: int) -> str:
    return "\n".join(
        [
            "[[stations]]",
            'id = "other"',
            'name = "Other FM"',
            f'kind = "{kind}"',
            f'base_url = "{base_url}"',
            f"station_id = {EXAMPLE_REFS[kind]}",
            "requests = true",
            'key_env = "ONAIR_TEST_STATION_KEY"' if kind == "radioboss" else "",
            f"guilds = [{guild_id}]",
            "",
        ]
    )


def test_every_kind_has_a_name_and_an_example_ref():
    assert set(KIND_NAMES) == set(KINDS) == set(EXAMPLE_REFS)


@pytest.mark.parametrize(
    ("what", "line"),
    [
        ("playlist", "Icecast servers do not publish a playlist, so there is none to show."),
        ("stats", "Icecast servers do not keep listener statistics, so there are none to show."),
        ("requests", "Icecast servers do not take song requests."),
    ],
)
def test_not_offered_is_one_line_naming_the_host(what, line):
    error = NotOffered(what=what, kind="icecast")
    assert errors.station_problem(error, lang=ENGLISH) == line
    german = errors.station_problem(error, lang=Translator.load().lang("de"))
    assert "Icecast" in german
    assert german != line  # said in German, one line
    assert "\n" not in german


def test_not_offered_without_a_known_kind_says_the_general_line():
    assert errors.station_problem(NotOffered(what="playlist"), lang=ENGLISH) == (
        "This station's host does not offer that."
    )


@pytest.mark.e2e
@pytest.mark.parametrize("kind", sorted(SOURCES))
async def test_commands_follow_the_features_of_each_kind(live_simulator, fake, kind):
    features = SOURCES[kind].features
    guild_id = fake.guilds[0].id
    extra = other_station(kind, live_simulator.base_url, guild_id)
    async with running_bot(live_simulator, fake=fake, extra_config=extra) as env:
        assert env.bot.registry.client(env.bot.registry.station("other")).kind == kind  # type: ignore[arg-type]
        for command, (feature, options) in GATED.items():
            focused = "station"
            iid = await fake.autocomplete(command, focused, "", options)
            answer = (await fake.response(iid)).json
            assert answer["type"] == AUTOCOMPLETE_RESULT
            offered = [c["value"] for c in answer["data"]["choices"]]
            assert ("other" in offered) is (feature in features), (command, offered)
            assert "main" in offered
            if feature in features:
                continue
            before = dict(live_simulator.counters)
            iid = await fake.slash(command, {**options, "station": "other"})
            message = await fake.final_message(iid)
            assert message["flags"] & EPHEMERAL
            expected = errors.NOT_OFFERED_LINES[feature.value].format(host=KIND_NAMES[kind])
            assert message["content"] == expected
            assert dict(live_simulator.counters) == before  # the host was not even asked
        # /recent of a host without history (the plays OnAir recorded, the one on air marked)
        # needs that host's own answer: test_icecast_bot covers it against the Icecast simulator.


@pytest.mark.e2e
async def test_radioboss_station_offers_every_gated_command(live_simulator, fake):
    """RadioBOSS Cloud stays first and unchanged: its stations are offered and answered."""
    guild_id = fake.guilds[0].id
    extra = other_station("radioboss", live_simulator.base_url, guild_id)
    async with running_bot(live_simulator, fake=fake, extra_config=extra) as env:
        registry = env.bot.registry
        offering = [s.slug for s in registry.offering(guild_id, Feature.PLAYLIST)]
        assert offering == ["main", "other"]
        message = await fake.final_message(await fake.slash("playlist", {"station": "other"}))
        assert message["embeds"], message
