"""Song votes end to end: the real discord.py client against the fake Discord (which counts
the votes) and the simulator, on a clock the test moves. The poll of 3-5 requestable songs,
ended on time with End Poll, the winner requested once and credited on air with the
server's name; a tie, an empty vote and a refusal each said in one line; a restart mid-vote
ends the poll once."""

from __future__ import annotations

import asyncio
import contextlib
import os
from datetime import UTC, datetime
from typing import Any

import pytest

from bot.simulator import JINGLES, TRACKS, StationSimulator
from bot.simulator.library import LibraryItem
from bot.simulator.programme import Slot
from bot.station import Play
from bot.storage.votes import CLOSED, OPEN

from .support import discord_rules as rules
from .support.botenv import fake_discord_fixture, running_bot, subscription_config
from .support.delivery import Gate
from .support.discord_rules import EPHEMERAL
from .support.fakediscord import FakeDiscord, Recorded
from .support.stations import TRACK_EARLY, programme_sim_fixture
from .support.storage_backends import POSTGRES_ENV, reset_postgres
from .support.waiting import wait_for

pytestmark = pytest.mark.e2e

SLOTS = [
    Slot(TRACKS[0], 20.0, TRACK_EARLY),
    (JINGLES[0], 5.0),
    Slot(TRACKS[1], 20.0, TRACK_EARLY),
    (JINGLES[1], 5.0),
]
RATE = "[requests]\nsearches_per_second = 100\n"
LIBRARY = {t.cast_title for t in TRACKS}

programme_sim = programme_sim_fixture("programme_sim", SLOTS, key="station-key-SECRET-42")
fake = fake_discord_fixture(channels_per_guild=2)


def running(
    sim: StationSimulator, fake: FakeDiscord, *, polls: bool = True, more: str = "", **kw: Any
) -> Any:
    """OnAir with ``main`` announced in the first guild (``more``: config added)."""
    guild = fake.guilds[0]
    if polls:
        guild.bot_role_permissions |= rules.SEND_POLLS  # invited with Create Polls
    else:
        guild.bot_role_permissions &= ~rules.SEND_POLLS
    sim.station(1).library_durations = True
    sim.station(1).song_requests.recent = 0  # any song offered may be requested
    config = subscription_config(guild.id, guild.channels[0]) + RATE + more
    kw.setdefault("station_options", "requests = true")
    return running_bot(sim, fake=fake, extra_config=config, clock=sim.clock, **kw)


def vote_channel(fake: FakeDiscord) -> int:
    return fake.guilds[0].channels[1]


def polls(fake: FakeDiscord) -> list[Recorded]:
    channel = vote_channel(fake)
    return [
        r
        for r in fake.sent("POST", rf"^/channels/{channel}/messages$")
        if r.status == 200 and (r.json or {}).get("poll")
    ]


def lines(fake: FakeDiscord) -> list[str]:
    channel = vote_channel(fake)
    return [
        str(r.json.get("content"))
        for r in fake.sent("POST", rf"^/channels/{channel}/messages$")
        if r.status == 200 and not (r.json or {}).get("poll")
    ]


def expiries(fake: FakeDiscord) -> list[Recorded]:
    return fake.sent("POST", r"^/channels/\d+/polls/\d+/expire$")


async def turn_on(fake: FakeDiscord, every: int = 30, length: int = 10) -> str:
    channel = vote_channel(fake)
    options = {"channel": str(channel), "every": every, "length": length}
    iid = await fake.slash("onair", options, sub=["vote"], resolved=fake.resolved_channel(channel))
    reply = (await fake.response(iid)).json["data"]
    assert reply["flags"] & EPHEMERAL
    return str(reply["content"])


async def opened(env: Any) -> tuple[int, list[str]]:
    """Tick until the slot's poll is posted: its message id and answers."""
    await env.bot.votes.tick()
    await wait_for(lambda: bool(polls(env.fake)), within=10)
    posted = polls(env.fake)[-1]
    answers = [a["poll_media"]["text"] for a in posted.json["poll"]["answers"]]
    return int(posted.response["id"]), answers


async def closed(env: Any, *, after: float) -> str:
    """Move the clock ``after`` seconds and tick until the poll is closed: its outcome."""
    env.sim.clock.advance(after)
    guild = env.fake.guilds[0].id
    for _ in range(5):
        await env.bot.votes.tick()
        polls_now = await env.bot.storage.vote_polls(guild)
        if polls_now and polls_now[-1].state == CLOSED and polls_now[-1].outcome not in ("",):
            return polls_now[-1].outcome
        if expiries(env.fake):
            mid = int(expiries(env.fake)[-1].route.split("/")[4])
            await env.fake.wait_for(
                lambda mid=mid: env.fake.messages[mid]["poll"]["results"]["is_finalized"]
            )
    raise AssertionError("the poll was not closed")


async def poll_station(env: Any) -> None:
    announcer = env.bot.announcer
    watch = announcer.watched()[0]
    await wait_for(lambda: not watch.busy, within=10)
    before = watch.status.polls
    announcer.poll_now(watch)
    await wait_for(lambda: watch.status.polls > before and not watch.busy, within=10)
    await announcer.idle()


async def test_a_vote_is_posted_ended_on_time_requested_and_credited(programme_sim, fake):
    async with running(programme_sim, fake) as env:
        reply = await turn_on(fake)
        assert "Song votes are on: every 30 min" in reply
        message_id, answers = await opened(env)
        assert 3 <= len(answers) <= 5
        assert set(answers) <= LIBRARY  # songs the station's request search offers
        posted = polls(fake)[-1].json
        assert posted["poll"]["duration"] == 1  # Discord's least: OnAir ends it itself
        assert "<t:" in posted["content"]
        await env.bot.votes.tick()
        assert len(polls(fake)) == 1  # one poll per slot

        await fake.vote(message_id, 11, 2)
        await fake.vote(message_id, 12, 2)
        await fake.vote(message_id, 13, 1)
        env.sim.clock.advance(9 * 60)
        await env.bot.votes.tick()
        assert expiries(fake) == []  # not before its end
        made = programme_sim.counters["songrequestmake"]
        assert await closed(env, after=61) == "won"
        assert len(expiries(fake)) == 1
        assert programme_sim.counters["songrequestmake"] == made + 1
        assert lines(fake) == [f"🗳️ The listeners chose **{answers[1]}**: requested on **Main FM**."]

        # The winner airs: its announcement credits the server's listeners.
        channel = fake.guilds[0].channels[0]
        for _ in range(24):
            env.sim.clock.advance(5)  # the shortest slot: none is stepped over
            await poll_station(env)
            described = [
                (r.json["embeds"][0].get("description") or "")
                for r in fake.sent("POST", rf"^/channels/{channel}/messages$")
                if r.status == 200 and r.json.get("embeds")
            ]
            if any("Voted by" in d for d in described):
                break
        assert any("🗳️ Voted by the listeners of *Guild 0*" in d for d in described)
        await env.bot.votes.tick()
        assert programme_sim.counters["songrequestmake"] == made + 1  # once


async def test_a_tie_and_an_empty_vote_say_so_and_request_nothing(programme_sim, fake):
    async with running(programme_sim, fake) as env:
        await turn_on(fake, every=30, length=10)
        message_id, answers = await opened(env)
        await fake.vote(message_id, 11, 1)
        await fake.vote(message_id, 12, 3)
        made = programme_sim.counters["songrequestmake"]
        assert await closed(env, after=10 * 60) == "tie"
        assert lines(fake) == [
            f"🗳️ A tie between **{answers[0]}** · **{answers[2]}**: no song is requested this time."
        ]
        env.sim.clock.advance(20 * 60)  # the next slot: nobody votes
        await opened(env)
        assert len(polls(fake)) == 2
        assert await closed(env, after=10 * 60) == "empty"
        assert lines(fake)[-1] == "🗳️ Nobody voted, so no song is requested this time."
        assert programme_sim.counters["songrequestmake"] == made


async def test_a_refused_winner_is_said_in_one_line(programme_sim, fake):
    async with running(programme_sim, fake) as env:
        await turn_on(fake)
        message_id, answers = await opened(env)
        await fake.vote(message_id, 11, 1)
        programme_sim.station(1).song_requests.refusal = "The DJ is on a break"
        assert await closed(env, after=10 * 60) == "refused"
        (line,) = lines(fake)
        assert line.startswith(f"🗳️ The listeners chose **{answers[0]}**, but it could not be")
        assert "The DJ is on a break" in line


async def test_a_restart_mid_vote_ends_the_poll_once(programme_sim, fake, tmp_path):
    db = str(tmp_path / "onair.sqlite3")
    async with running(programme_sim, fake, db_path=db) as env:
        await turn_on(fake)
        message_id, _ = await opened(env)
        await fake.vote(message_id, 11, 3)
    programme_sim.clock.advance(15 * 60)  # OnAir was down when the vote should have ended
    made = programme_sim.counters["songrequestmake"]
    async with running(programme_sim, fake, db_path=db) as env:
        assert await closed(env, after=0) == "won"  # ended late at start-up, once
        assert len(polls(fake)) == 1
        assert len(expiries(fake)) == 1
        assert programme_sim.counters["songrequestmake"] == made + 1


async def test_votes_need_requests_and_the_poll_permission(programme_sim, fake):
    async with running(programme_sim, fake, station_options="") as env:
        assert "need song requests" in await turn_on(fake)
        assert await env.bot.storage.song_votes() == []
    async with running(programme_sim, fake, polls=False) as env:
        assert "Create Polls" in await turn_on(fake)
        assert await env.bot.storage.song_votes() == []


async def test_two_processes_post_one_poll_and_make_one_request(programme_sim, fake):
    """A fleet on one PostgreSQL, both ticking at once each step: one poll per slot, ended
    once, one request."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"the fleet needs {POSTGRES_ENV}")
    await reset_postgres(url)
    database = f'url = "{url}"'
    guild = fake.guilds[0]
    async with (
        running(programme_sim, fake, database_extra=database, bot_extra=shards(0)) as one,
        running(programme_sim, fake, database_extra=database, bot_extra=shards(1)) as two,
    ):
        station = one.bot.registry.station("main")
        assert station is not None
        await one.bot.votes.configure(guild.id, vote_channel(fake), station, 30, 10)

        async def both_tick() -> None:
            await asyncio.gather(one.bot.votes.tick(), two.bot.votes.tick())

        await both_tick()
        await both_tick()
        await wait_for(lambda: bool(polls(fake)), within=10)
        assert len(polls(fake)) == 1
        message_id = int(polls(fake)[0].response["id"])
        await fake.vote(message_id, 11, 2)
        made = programme_sim.counters["songrequestmake"]
        programme_sim.clock.advance(10 * 60)
        for _ in range(4):
            await both_tick()
            if expiries(fake):
                await fake.wait_for(
                    lambda: fake.messages[message_id]["poll"]["results"]["is_finalized"]
                )
        (poll,) = await one.bot.storage.vote_polls(guild.id)
        assert (poll.state, poll.outcome) == (CLOSED, "won")
        assert len(polls(fake)) == 1
        assert len([r for r in expiries(fake) if r.status == 200]) == 1
        assert programme_sim.counters["songrequestmake"] == made + 1
        assert len(lines(fake)) == 1


def shards(shard: int) -> str:
    return f"shard_count = 2\nshard_ids = [{shard}]"


@pytest.mark.parametrize("back_after", [5 * 60, 29 * 60 + 30], ids=["mid-vote", "near-end"])
async def test_a_poll_posted_before_a_crash_is_found_not_posted_again(
    programme_sim, fake, tmp_path, back_after
):
    """kill -9 after Discord created the poll but before its message id was stored (state
    ``opening``), back after Discord's nonce window: the poll is found in the channel and
    recorded open (mid-vote: not posted again; near the end: not given up as missed with the
    poll left running), then ended at its end once."""
    db = str(tmp_path / "onair.sqlite3")
    gate = Gate(allow=0)  # Discord holds the poll's post: the process dies meanwhile
    async with running(programme_sim, fake, db_path=db) as env:
        await turn_on(fake, every=60, length=30)
        fake.hold = gate
        ticking = asyncio.ensure_future(env.bot.votes.tick())
        await fake.wait_for(lambda: gate.arrived >= 1)
    ticking.cancel()
    with contextlib.suppress(BaseException):
        await ticking
    # Discord goes on with the post it held: created now, its answer lost with the process.
    gate.open()
    await fake.wait_for(lambda: bool(polls(fake)))
    fake.hold = None
    assert len(polls(fake)) == 1
    message_id = int(polls(fake)[0].response["id"])
    fake.nonce_window = 0.0  # OnAir came back after Discord's "few minutes"
    programme_sim.clock.advance(back_after)  # the lease lapsed
    async with running(programme_sim, fake, db_path=db) as env:
        await env.bot.votes.tick()
        assert len(polls(fake)) == 1, "a second poll was posted for the same slot"
        (poll,) = await env.bot.storage.vote_polls(fake.guilds[0].id)
        assert (poll.state, poll.message_id) == (OPEN, message_id)
        await fake.vote(message_id, 11, 1)
        assert await closed(env, after=30 * 60 - back_after) == "won"
        assert [int(r.route.split("/")[4]) for r in expiries(fake)] == [message_id]


async def test_a_fleet_posts_the_poll_in_the_guilds_language(programme_sim, fake):
    """Only the process serving the guild's shard runs its votes: the other, ticking first,
    leaves the slot alone (its cache lacks the guild, so it would fall back to English), and
    the guild's own process posts the poll in German (no /onair settings language, the
    server's preferred locale de) and says the result in German."""
    url = os.environ.get(POSTGRES_ENV)
    if not url:
        pytest.skip(f"the fleet needs {POSTGRES_ENV}")
    await reset_postgres(url)
    database = f'url = "{url}"'
    guild = fake.guilds[0]
    guild.preferred_locale = "de"
    own = (guild.id >> 22) % 2
    async with (
        running(programme_sim, fake, database_extra=database, bot_extra=shards(1 - own)) as other,
        running(programme_sim, fake, database_extra=database, bot_extra=shards(own)) as holder,
    ):
        station = other.bot.registry.station("main")
        assert station is not None
        await other.bot.votes.configure(guild.id, vote_channel(fake), station, 30, 10)
        await other.bot.votes.tick()
        assert polls(fake) == [], "a process not serving the guild's shard posted its poll"
        await holder.bot.votes.tick()
        (posted,) = polls(fake)
        assert posted.json["poll"]["question"]["text"] == "Was soll Main FM als Nächstes spielen?"
        programme_sim.clock.advance(10 * 60)
        await other.bot.votes.tick()
        assert expiries(fake) == []
        assert await closed(holder, after=0) == "empty"
        assert lines(fake) == ["🗳️ Niemand hat abgestimmt, also wird diesmal kein Song gewünscht."]


async def test_the_shortest_vote_the_command_takes_is_posted(programme_sim, fake):
    """A vote the command accepts runs: 1 minute (shorter than MIN_LEFT plus a tick) is
    refused up front, and a 2-minute one opens though the first tick comes 15 s (TICK) into
    its slot, slot after slot."""
    async with running(programme_sim, fake) as env:
        reply = await turn_on(fake, every=10, length=1)
        assert "lasts 2 to 720 minutes" in reply
        assert await env.bot.storage.song_votes() == []
        assert "Song votes are on" in await turn_on(fake, every=10, length=2)
        for slot in range(1, 3):
            programme_sim.clock.advance(15)
            await env.bot.votes.tick()
            assert len(polls(fake)) == slot
            assert await closed(env, after=2 * 60 - 15) == "empty"
            programme_sim.clock.advance(8 * 60)


async def test_running_the_command_again_never_opens_a_second_poll(programme_sim, fake):
    """An admin runs /onair vote again while a vote runs: the same settings keep the running
    slot (no new poll); new settings start once the running poll has ended, never beside
    it."""
    async with running(programme_sim, fake) as env:
        await turn_on(fake, every=30, length=10)
        await opened(env)
        programme_sim.clock.advance(60)
        await turn_on(fake, every=30, length=10)  # e.g. to see that it is on
        await env.bot.votes.tick()
        assert len(polls(fake)) == 1, "a second poll opened while the first still runs"
        await turn_on(fake, every=20, length=5)  # changed: a new schedule
        await env.bot.votes.tick()
        assert len(polls(fake)) == 1, "a second poll opened while the first still runs"
        programme_sim.clock.advance(9 * 60)  # the first poll's end
        first_id = int(polls(fake)[0].response["id"])
        await env.bot.votes.tick()  # ended; Discord finalises its count a moment later
        await fake.wait_for(lambda: fake.messages[first_id]["poll"]["results"]["is_finalized"])
        await env.bot.votes.tick()  # the first is closed, then the new schedule's slot opens
        assert len(expiries(fake)) == 1
        assert len(polls(fake)) == 2
        first, second = await env.bot.storage.vote_polls(fake.guilds[0].id)
        assert (first.state, second.state) == (CLOSED, OPEN)
        assert second.opens_at == first.ends_at
        assert second.ends_at - second.opens_at == 5 * 60


@pytest.mark.parametrize(
    ("on_air", "offered"),
    [
        (("Sam Ode", "Love"), {"Glove", "Love Dove", "Above Love"}),
        (("", ""), {"Love", "Glove", "Love Dove", "Above Love"}),
    ],
    ids=["a-title-inside-another", "an-empty-title"],
)
async def test_only_the_whole_song_on_air_is_left_out_of_a_vote(
    programme_sim, fake, on_air, offered
):
    """The song on air is compared whole, normalised: "Love" on air leaves out "Sam Ode -
    Love" only, not "Sam Ode - Glove" (a suffix), and a play with no title leaves out
    nothing (every title ends with the empty one). Four songs in the library: a wrong filter
    leaves fewer than three and the vote is skipped."""
    titles = ("Love", "Glove", "Love Dove", "Above Love")  # each found by the seed "love"
    library = tuple(LibraryItem("Sam Ode", t, 200.0) for t in titles)
    programme_sim.station(1).song_requests.library = library
    async with running(programme_sim, fake) as env:
        await turn_on(fake)
        artist, title = on_air
        now = datetime.fromtimestamp(programme_sim.clock() - 1, UTC)  # the latest play
        play = Play(title=title, artist=artist or None, started=now, started_exact=True)
        await env.bot.storage.record_play("main", play, None, now)
        await env.bot.votes.tick()
        (posted,) = polls(fake)
        answers = {a["poll_media"]["text"] for a in posted.json["poll"]["answers"]}
        assert answers == {f"Sam Ode - {t}" for t in offered}
