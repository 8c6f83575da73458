"""Song requests end to end: the real discord.py client against the fake Discord and the
simulator on a manual clock. Autocomplete, the request, the station's refusal, text that
matches nothing, the cooldown, the guild's switch, the credit in the announcement (and the
ping only for who opted in), /requests."""

from __future__ import annotations

import asyncio
import re

import pytest

from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, StationSimulator
from bot.simulator.programme import Slot
from bot.ui.choices import LANES

from .support.botenv import fake_discord_fixture, running_bot, subscription_config
from .support.discord_rules import AUTOCOMPLETE_RESULT, EPHEMERAL
from .support.fakediscord import FakeDiscord, Recorded
from .support.stations import TRACK_EARLY, programme_sim_fixture
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e

# Harbour Lights 0-20 s (on air at the start), jingle 20-25 (a request takes this slot), ...
# (tracks reported 40 s long, cut at 20: tracks, not jingles)
SLOTS = [
    Slot(TRACKS[0], 20.0, TRACK_EARLY),
    (JINGLES[0], 5.0),
    Slot(TRACKS[1], 20.0, TRACK_EARLY),
    (LIVE_SHOW, 60.0),
]
NEON = TRACKS[3]  # Kaito & The Wires - Neon Umbrella: id 1004 at the simulator
REQUESTS_ON = "requests = true"
RATE = "[requests]\nsearches_per_second = 100\n"


programme_sim = programme_sim_fixture(
    "programme_sim", SLOTS, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm"
)


fake = fake_discord_fixture(channels_per_guild=2)


def posts(fake: FakeDiscord) -> list:
    channel = fake.guilds[0].channels[0]
    return [r for r in fake.sent("POST", rf"^/channels/{channel}/messages$") if r.status == 200]


async def poll(env) -> None:  # type: ignore[no-untyped-def]
    announcer = env.bot.announcer
    watch = announcer.watched()[0]
    await wait_for(lambda: not watch.busy, within=10)
    before = watch.status.polls
    announcer.poll_now(watch)
    await wait_for(lambda: watch.status.polls > before and not watch.busy, within=10)
    await announcer.idle()


def running(sim: StationSimulator, fake: FakeDiscord, **kw):  # type: ignore[no-untyped-def]
    guild = fake.guilds[0]
    # Searches are rate limited (the tests of the limit are in test_requests_service): here
    # every autocomplete is to reach the station.
    config = subscription_config(guild.id, guild.channels[0]) + RATE
    kw.setdefault("station_options", REQUESTS_ON)
    return running_bot(sim, fake=fake, extra_config=config, **kw)


async def private_text(fake: FakeDiscord, iid: str) -> str:
    message = await fake.final_message(iid)
    assert message["flags"] & EPHEMERAL
    return str(message["content"])


async def test_autocomplete_request_credit_and_queue(programme_sim, fake):
    programme_sim.station(1).library_durations = True  # a requested song is a song, not a jingle
    owner = fake.owner_id
    fake.user_names[owner] = "DJ *Ana* @everyone"
    async with running(programme_sim, fake) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        iid = await fake.autocomplete("request", "song", "neon")
        callback = await fake.response(iid)
        assert callback.status == 200
        assert callback.json["type"] == AUTOCOMPLETE_RESULT
        assert callback.json["data"]["choices"] == [{"name": NEON.cast_title, "value": "1004"}]
        # Under 3 characters: nothing is searched.
        searches = programme_sim.counters["songrequestsearch"]
        iid = await fake.autocomplete("request", "song", "ne")
        assert (await fake.response(iid)).json["data"]["choices"] == []
        assert programme_sim.counters["songrequestsearch"] == searches

        text = await private_text(fake, await fake.slash("request", {"song": "1004", "ping": True}))
        assert text.startswith("✅ **Main FM** accepted your request: **Kaito & The Wires - Neon")
        assert "pinged when it airs" in text

        message = await fake.final_message(await fake.slash("requests"))
        assert message["flags"] & EPHEMERAL
        queue, mine = message["embeds"][0]["fields"]
        assert queue["value"] == f"⏳ waiting · {NEON.cast_title}"
        assert mine["value"] == f"**{NEON.cast_title}** · #1 in line"

        programme_sim.clock.advance(21)  # the jingle's slot: the request plays
        await poll(env)
        post = posts(fake)[-1].json
        embed = post["embeds"][0]
        assert embed["title"] == NEON.title
        # The display name is listener text: markdown escaped, @everyone defused.
        assert "🙋 Requested by **DJ \\*Ana\\* @\u200beveryone**" in embed["description"]
        # Opted in: pinged, and only that user can be.
        assert post["content"] == f"<@{owner}>"
        assert post["allowed_mentions"] == {"parse": [], "users": [owner]}
        message = await fake.final_message(await fake.slash("requests"))
        assert message["embeds"][0]["fields"][0]["value"] == f"✔️ played · {NEON.cast_title}"


async def test_refusal_unknown_text_cooldown_and_the_switch(programme_sim, fake):
    async with running(programme_sim, fake):
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        # Harbour Lights is on air: the station refuses (a reason the field notes list).
        await fake.response(await fake.autocomplete("request", "song", "harbour", user_id=2))
        text = await private_text(fake, await fake.slash("request", {"song": "1001"}, user_id=2))
        assert text == (
            "**Main FM** played this song recently, so it can't be requested yet. Try another song."
        )
        made = programme_sim.counters["songrequestmake"]
        text = await private_text(fake, await fake.slash("request", {"song": "zzzz"}, user_id=3))
        assert text.startswith("No song on **Main FM** matches “zzzz”, so nothing was requested")
        assert programme_sim.counters["songrequestmake"] == made  # no request made
        # Typed in full by hand: that song.
        typed = NEON.cast_title.upper()
        text = await private_text(fake, await fake.slash("request", {"song": typed}, user_id=4))
        assert "accepted your request" in text
        assert "Its announcement will name you" in text
        await fake.response(await fake.autocomplete("request", "song", "signal", user_id=4))
        text = await private_text(fake, await fake.slash("request", {"song": "1003"}, user_id=4))
        assert text.startswith("You've requested a song recently. You can ask again <t:")
        assert programme_sim.counters["songrequestmake"] == made + 1

        text = await private_text(
            fake, await fake.slash("onair", {"enabled": False}, sub=["requests", "set"])
        )
        assert text.startswith("Song requests for **Main FM** are **off** here.")
        text = await private_text(fake, await fake.slash("request", {"song": "1003"}, user_id=5))
        assert text == "Song requests for **Main FM** are off in this server."
        iid = await fake.autocomplete("request", "song", "neon", user_id=5)
        assert (await fake.response(iid)).json["data"]["choices"] == []


async def test_a_station_without_requests_and_one_that_is_down(programme_sim, fake):
    async with running(programme_sim, fake, station_options=""):
        text = await private_text(fake, await fake.slash("request", {"song": "neon"}))
        assert text.startswith("**Main FM** doesn't take song requests through OnAir.")
    async with running(programme_sim, fake):
        programme_sim.inject("html", endpoint="songrequestsearch")
        iid = await fake.autocomplete("request", "song", "neon")
        assert (await fake.response(iid)).json["data"]["choices"] == []
        text = await private_text(fake, await fake.slash("request", {"song": "umbrella"}))
        assert text == "Song requests are unavailable right now; try again in a little while."
        programme_sim.faults.clear()
        programme_sim.station(1).song_requests.off = True
        text = await private_text(fake, await fake.slash("request", {"song": "neon umbrella"}))
        assert text == "**Main FM** is not taking song requests right now."


async def test_hostile_titles_are_harmless_choices(programme_sim, fake):
    song_requests = programme_sim.station(1).song_requests
    hostile = TRACKS[3].__class__("@everyone <@&1> **x**", "\u202e" + "y" * 300, 100.0)
    song_requests.library = (hostile, *TRACKS)
    async with running(programme_sim, fake):
        iid = await fake.autocomplete("request", "song", "everyone")
        callback = await fake.response(iid)
        assert callback.status == 200  # Discord's rules (name 1-100) hold
        [choice] = callback.json["data"]["choices"]
        assert len(choice["name"]) == 100
        assert "\u202e" not in choice["name"]


async def test_a_burst_of_keystrokes_answers_through_a_few_warm_connections(programme_sim, fake):
    """100 listeners at once: the callbacks go through LANES connections kept alive, not one
    new TLS connection each (held by the fake until every choice is ready: without the lanes
    all 100 would be in flight, each on a connection of its own)."""
    async with running(programme_sim, fake) as env:
        await fake.response(await fake.autocomplete("request", "song", "harb"))  # cached now
        answered = sum(env.bot.requests.searches.answered.values())
        connections = len(fake.connections)
        release = asyncio.Event()
        held: list[str] = []
        most = 0

        async def hold(record: Recorded) -> None:
            nonlocal most
            if record.route.endswith("/callback"):
                held.append(record.route)
                most = max(most, len(held))
                await release.wait()
                held.remove(record.route)

        fake.hold = hold
        ids = [await fake.autocomplete("request", "song", "harb", user_id=u) for u in range(100)]
        searches = env.bot.requests.searches
        every_choice_ready = lambda: sum(searches.answered.values()) == answered + 100  # noqa: E731
        await wait_for(lambda: every_choice_ready() and len(held) >= LANES, within=20)
        release.set()
        callbacks = [await fake.response(iid, within=20) for iid in ids]
        assert all(c.json["data"]["choices"][0]["value"] == "1001" for c in callbacks)
        assert most == LANES
        assert len(fake.connections) - connections <= LANES


async def test_many_ping_opt_ins_ping_as_many_as_fit_and_name_the_rest(programme_sim, fake):
    """95 listeners ask for one song with ping: the post is not refused for its length (2,000
    characters of content, 100 user mentions): the first are pinged, the rest named, and
    nobody is pinged who is not in the content."""
    programme_sim.station(1).song_requests.duplicates = True
    programme_sim.station(1).library_durations = True  # a requested song is a song, not a jingle
    listeners = [10**17 * 7 + n for n in range(95)]  # 18-digit ids, as Discord's are now
    for n, user in enumerate(listeners):
        fake.user_names[user] = f"Listener {n}"
    async with running(programme_sim, fake) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        await private_text(
            fake, await fake.slash("onair", {"hourly_cap": 0}, sub=["requests", "set"])
        )
        for user in listeners:
            iid = await fake.slash("request", {"song": NEON.cast_title, "ping": True}, user_id=user)
            assert "accepted your request" in await private_text(fake, iid)
        programme_sim.clock.advance(21)  # the jingle's slot: the request plays
        await poll(env)
        refused = [r for r in fake.sent("POST", r"/messages$") if r.status != 200]
        assert refused == []
        post = posts(fake)[-1].json
        assert post["embeds"][0]["title"] == NEON.title
        content = post["content"]
        assert len(content) <= 2000
        pinged = post["allowed_mentions"]["users"]
        assert 0 < len(pinged) <= 100
        # Every id allowed to ping is mentioned, in the order they asked; the rest are named
        # (without a ping) or counted: all 95 are accounted for.
        head = " ".join(f"<@{u}>" for u in pinged)
        assert content.startswith(head)
        assert [int(u) for u in pinged] == listeners[: len(pinged)]
        rest = re.fullmatch(
            r"(?: also requested by ((?:\*\*Listener \d+\*\*(?:, )?)+))?"
            r"(?: and (\d+) more)?",
            content[len(head) :],
        )
        assert rest is not None
        named = re.findall(r"Listener (\d+)", rest[1] or "")
        assert [int(n) for n in named] == list(range(len(pinged), len(pinged) + len(named)))
        assert len(pinged) + len(named) + int(rest[2] or 0) == len(listeners)


async def test_members_without_the_request_role_spend_no_search(programme_sim, fake):
    role = fake.guilds[0].roles[1]  # Listeners
    fake.member_roles[8] = [role]
    async with running(programme_sim, fake) as env:
        guild = fake.guilds[0].id
        station = env.bot.registry.station("main")
        assert station is not None
        await env.bot.requests.configure(
            guild,
            station,
            enabled=None,
            role_id=role,
            cooldown=None,
            hourly_cap=None,
            channel_id=None,
        )
        searches = programme_sim.counters["songrequestsearch"]
        for typed in ("neo", "neon", "neon umb"):
            iid = await fake.autocomplete("request", "song", typed, user_id=7)
            assert (await fake.response(iid)).json["data"]["choices"] == []
        assert programme_sim.counters["songrequestsearch"] == searches
        iid = await fake.autocomplete("request", "song", "neon", user_id=8)
        assert (await fake.response(iid)).json["data"]["choices"] == [
            {"name": NEON.cast_title, "value": "1004"}
        ]
