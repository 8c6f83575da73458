""" "Find this song" in the bot, through real discord.py and the fake Discord, against the
simulator's song search (a real local server strict like Apple's). The post never waits for the
search: the link arrives by an edit; jingles, live shows, failing searches and guilds that hide
it get no button, never a wrong one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.simulator import LIVE_SHOW, TRACKS
from bot.storage import GuildSettings

from .support.botenv import channel_subscription, fake_discord_fixture, running_bot
from .support.fakediscord import FakeDiscord
from .support.stations import ONE_OF_EACH, programme_sim_fixture
from .support.waiting import poll_watch

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord

programme_sim = programme_sim_fixture(
    "programme_sim", ONE_OF_EACH, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm"
)
fake = fake_discord_fixture(channels_per_guild=3)
FIND = "Find this song"


def links_on(sim: Any) -> str:
    return f'lookup_url = "{sim.base_url}/search"'


def posts(fake: FakeDiscord, channel_index: int = 0) -> list:
    channel = fake.guilds[0].channels[channel_index]
    return [r for r in fake.sent("POST", rf"^/channels/{channel}/messages$") if r.status == 200]


def edits(fake: FakeDiscord, channel_index: int = 0) -> list:
    channel = fake.guilds[0].channels[channel_index]
    return [
        r for r in fake.sent("PATCH", rf"^/channels/{channel}/messages/\d+$") if r.status == 200
    ]


def buttons(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for row in body.get("components", []) for b in row["components"]]


def link_buttons(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in buttons(body) if b.get("label") == FIND]


async def settled(env: Any) -> None:
    """Every watch polled, fanned out and every link edit done."""
    await poll_watch(env.bot.announcer)
    await env.bot.announcer.idle()
    deliverer = env.bot.announcer.deliverer
    await env.fake.wait_for(lambda: len(deliverer._link_edits) == 0)


async def test_the_post_goes_out_at_once_and_gets_the_link_by_an_edit(programme_sim, fake):
    """The search is held (a slow server): the post is out without waiting for it; once the
    search answers, the same message is edited to carry the link button, the studio recording's
    (the fake lists the live one first)."""
    search = programme_sim.song_search
    search.delay = asyncio.Event()
    config = channel_subscription(fake) + channel_subscription(fake, 1)
    async with running_bot(
        programme_sim, fake=fake, extra_config=config, links_extra=links_on(programme_sim)
    ) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1 and len(posts(fake, 1)) == 1)
        assert search.searches == 1  # asked, not answered yet: the posts did not wait
        for index in (0, 1):
            assert link_buttons(posts(fake, index)[0].json) == []
            assert edits(fake, index) == []
        search.delay.set()
        await fake.wait_for(lambda: edits(fake) and edits(fake, 1))
        for index in (0, 1):
            edit = edits(fake, index)[0]
            message_id = posts(fake, index)[0].response["id"]
            assert edit.route.endswith(f"/messages/{message_id}")
            [button] = link_buttons(edit.json)
            studio = search.result(TRACKS[0])
            assert button["url"] == f"https://song.link/i/{studio['trackId']}"
            assert button["style"] == 5  # a link button
            labels = [b["label"] for b in buttons(edit.json)]
            assert labels == ["Listen", "Web player", "Like", FIND]
        assert search.searches == 1  # one search for both channels
        await settled(env)
        assert len(edits(fake)) == 1


async def test_jingles_and_live_shows_get_no_button_and_no_search(programme_sim, fake):
    search = programme_sim.song_search
    async with running_bot(
        programme_sim,
        fake=fake,
        extra_config=channel_subscription(fake),
        links_extra=links_on(programme_sim),
    ) as env:
        await fake.wait_for(lambda: edits(fake))
        programme_sim.clock.advance(50)  # the live show (the jingle at 20-25 s is not posted)
        await settled(env)
        await fake.wait_for(lambda: len(posts(fake)) == 2)
        await settled(env)
        live = posts(fake)[-1].json
        assert live["embeds"][0]["title"] == LIVE_SHOW.title
        assert link_buttons(live) == []
        assert len(edits(fake)) == 1  # the first track's only
        assert search.terms == [f"{TRACKS[0].artist} {TRACKS[0].title}"]


@pytest.mark.parametrize("fault", ["status", "garbage", "huge", "hostile"])
async def test_a_failing_or_hostile_search_changes_nothing_but_the_button(
    programme_sim, fake, fault
):
    search = programme_sim.song_search
    search.fault = fault
    async with running_bot(
        programme_sim,
        fake=fake,
        extra_config=channel_subscription(fake),
        links_extra=links_on(programme_sim),
    ) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        await fake.wait_for(lambda: search.searches == 1)
        await settled(env)
        body = posts(fake)[0].json
        assert body["embeds"][0]["title"] == TRACKS[0].title
        assert [b["label"] for b in buttons(body)] == ["Listen", "Web player", "Like"]
        assert edits(fake) == []


async def test_a_guild_that_hides_the_button_gets_none_and_asks_nothing(programme_sim, fake):
    search = programme_sim.song_search
    guild = fake.guilds[0].id
    async with running_bot(
        programme_sim,
        fake=fake,
        extra_config=channel_subscription(fake),
        links_extra=links_on(programme_sim),
    ) as env:
        await env.bot.storage.save_guild_settings(GuildSettings(guild, song_links=False))
        env.bot.languages.forget(guild)
        await env.bot.announcer.idle()
        programme_sim.clock.advance(26)  # the second track
        await settled(env)
        await fake.wait_for(lambda: len(posts(fake)) == 2)
        await settled(env)
        assert link_buttons(posts(fake)[-1].json) == []
        assert search.terms.count(f"{TRACKS[1].artist} {TRACKS[1].title}") == 0


async def test_nowplaying_shows_the_link_unless_the_guild_hides_it(programme_sim, fake):
    async with running_bot(
        programme_sim,
        fake=fake,
        extra_config=channel_subscription(fake),
        links_extra=links_on(programme_sim),
    ) as env:
        reply = await fake.final_message(await fake.slash("nowplaying"))
        [button] = link_buttons(reply)
        assert (
            button["url"]
            == f"https://song.link/i/{programme_sim.song_search.result(TRACKS[0])['trackId']}"
        )
        guild = fake.guilds[0].id
        await env.bot.storage.save_guild_settings(GuildSettings(guild, song_links=False))
        env.bot.languages.forget(guild)
        hidden = await fake.final_message(await fake.slash("nowplaying"))
        assert link_buttons(hidden) == []
        assert [b["label"] for b in buttons(hidden)][:2] == ["Listen", "Web player"]


async def test_a_card_gets_only_the_link_of_the_song_it_still_shows(programme_sim, fake):
    """The first song's search answers after the card moved on to the next song: the card is
    not given the first song's link; the next song's link comes by its own edit."""
    search = programme_sim.song_search
    search.delay = asyncio.Event()
    async with running_bot(
        programme_sim,
        fake=fake,
        extra_config=channel_subscription(fake, mode="card"),
        links_extra=links_on(programme_sim),
    ) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        await search.arrived.wait()
        programme_sim.clock.advance(26)  # the second track: the card is edited to show it
        await poll_watch(env.bot.announcer)
        await env.bot.announcer.idle()
        await fake.wait_for(lambda: len(edits(fake)) == 1)
        assert edits(fake)[0].json["embeds"][0]["title"] == TRACKS[1].title
        search.delay.set()  # both searches answer now
        await settled(env)
        await fake.wait_for(lambda: len(search.terms) == 2)
        await settled(env)
        card_edits = edits(fake)
        linked = [e for e in card_edits if link_buttons(e.json)]
        assert [e.json["embeds"][0]["title"] for e in linked] == [TRACKS[1].title]
        second = search.result(TRACKS[1])
        assert link_buttons(linked[0].json)[0]["url"] == f"https://song.link/i/{second['trackId']}"


async def test_where_the_station_gives_no_artwork_the_songs_cover_fills_in(programme_sim, fake):
    """Like an Icecast or Shoutcast station: no artwork in the answer. The post shows the
    station's logo; the edit that adds the link shows the song's cover, at 600x600."""
    programme_sim.station(1).typed_links = {"artwork": "", "artwork_recent": ""}
    async with running_bot(
        programme_sim,
        fake=fake,
        extra_config=channel_subscription(fake),
        links_extra=links_on(programme_sim),
    ):
        await fake.wait_for(lambda: edits(fake))
        posted = posts(fake)[0].json["embeds"][0]["thumbnail"]["url"]
        assert posted.startswith("https://c9.radioboss.fm/logo/")
        cover = edits(fake)[0].json["embeds"][0]["thumbnail"]["url"]
        studio = programme_sim.song_search.result(TRACKS[0])
        assert cover.startswith(
            f"https://is1-ssl.mzstatic.com/image/thumb/Music/sim/{studio['trackId']}/600x600bb.jpg"
        )
