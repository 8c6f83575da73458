"""Templates, likes and /top through the real discord.py client and the fake Discord."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.announcer import snapshot
from bot.simulator import JINGLES, LIVE_SHOW, TRACKS, StationSimulator

from .support.botenv import fake_discord_fixture, running_bot, subscription_config
from .support.discord_rules import EPHEMERAL, UPDATE_MESSAGE
from .support.fakediscord import FakeDiscord
from .support.stations import programme_simulator
from .support.waiting import poll_watch

pytestmark = pytest.mark.e2e

# Tracks of 70 s: /top counts plays of a minute or more as tracks (shorter ones are jingles).
SLOTS = [(TRACKS[0], 70.0), (JINGLES[0], 5.0), (TRACKS[1], 70.0), (LIVE_SHOW, 60.0)]


@pytest.fixture
async def programme_sim() -> AsyncIterator[StationSimulator]:
    async with programme_simulator(
        SLOTS, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm"
    ) as simulator:
        yield simulator


fake = fake_discord_fixture(guild_count=2, channels_per_guild=2)


def posts(fake: FakeDiscord, guild: int = 0) -> list:
    channel = fake.guilds[guild].channels[0]
    return [r for r in fake.sent("POST", rf"^/channels/{channel}/messages$") if r.status == 200]


def both_guilds(fake: FakeDiscord, **options: object) -> str:
    return "".join(subscription_config(g.id, g.channels[0], **options) for g in fake.guilds[:2])


def like_button(message: dict) -> dict:
    buttons = [b for row in message["components"] for b in row["components"]]
    (button,) = [b for b in buttons if b.get("custom_id", "").startswith("onair:like:")]
    return button


async def click(fake: FakeDiscord, message_id: int, user_id: int) -> dict:
    """A listener clicks ❤ on a stored message; the interaction response it got."""
    message = fake.messages[message_id]
    guild = next(g for g in fake.guilds if int(message["channel_id"]) in g.channels)
    iid = await fake.click(message, like_button(message)["custom_id"], user_id=user_id, guild=guild)
    return (await fake.response(iid)).json


async def poll(env) -> None:
    announcer = env.bot.announcer
    await poll_watch(announcer)
    await announcer.idle()


async def test_likes_count_across_guilds_toggle_and_survive_a_restart(
    programme_sim, fake, tmp_path
):
    fake.callback_window = 3.0  # every click answered within Discord's 3 s
    db = str(tmp_path / "onair.sqlite3")
    config = both_guilds(fake)
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=db):
        await fake.wait_for(lambda: len(posts(fake, 0)) == 1 and len(posts(fake, 1)) == 1)
        first = int(posts(fake, 0)[0].response["id"])
        second = int(posts(fake, 1)[0].response["id"])
        custom_id = like_button(fake.messages[first])["custom_id"]
        assert like_button(fake.messages[second])["custom_id"] == custom_id  # one play
        assert len(custom_id) <= 100
        answer = await click(fake, first, user_id=1001)
        assert answer["type"] == UPDATE_MESSAGE
        assert "embeds" not in answer["data"]  # the embed is left as it is
        assert like_button(fake.messages[first])["label"] == "❤ 1"
        assert (await click(fake, second, user_id=1002))["type"] == UPDATE_MESSAGE
        assert like_button(fake.messages[second])["label"] == "❤ 2"  # counted across guilds
        await click(fake, first, user_id=1001)  # a second click takes the like back
        assert like_button(fake.messages[first])["label"] == "❤ 1"
        # /nowplaying carries the same play's button and count.
        message = await fake.final_message(await fake.slash("nowplaying"))
        assert like_button(message)["custom_id"] == custom_id
        assert like_button(message)["label"] == "❤ 1"
    edits = len(fake.sent("PATCH"))
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=db):
        await click(fake, first, user_id=1003)  # a message posted before the restart
        assert like_button(fake.messages[first])["label"] == "❤ 2"
        top = await fake.final_message(await fake.slash("top", {"period": "day"}))
        liked = top["embeds"][0]["fields"][0]
        assert liked["name"] == "❤ Most liked"
        assert TRACKS[0].title in liked["value"]
        assert "❤ 2" in liked["value"]
        assert TRACKS[0].title in top["embeds"][0]["fields"][1]["value"]
    assert len(fake.sent("PATCH")) == edits  # no REST edit: the responses carried the counts


async def test_a_listener_clicking_fast_is_told_privately(programme_sim, fake):
    config = subscription_config(fake.guilds[0].id, fake.guilds[0].channels[0])
    async with running_bot(programme_sim, fake=fake, extra_config=config):
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        post = int(posts(fake)[0].response["id"])
        answers = [await click(fake, post, user_id=7) for _ in range(7)]
        assert [a["type"] for a in answers[:6]] == [UPDATE_MESSAGE] * 6
        assert answers[6]["data"]["flags"] & EPHEMERAL
        assert "liking quickly" in answers[6]["data"]["content"]
        assert like_button(fake.messages[post])["label"] == "❤"  # six toggles: back to none


async def test_templates_set_refused_previewed_and_announced(programme_sim, fake):
    guild = fake.guilds[0]
    channel = guild.channels[0]
    config = subscription_config(guild.id, channel, mention_role=guild.roles[1])
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)

        async def template(sub: str, **options: object) -> dict:
            iid = await fake.slash(
                "onair",
                {"channel": str(channel), **options},
                sub=["template", sub],
                resolved=fake.resolved_channel(channel),
            )
            return await fake.final_message(iid)

        refused = await template("set", title="{title:>50000000}")
        assert refused["flags"] & EPHEMERAL
        assert "format spec" in refused["content"]
        refused = await template("set", description="{title.__class__}")
        assert "reaches into a value" in refused["content"]
        refused = await template("set", footer="{titel}")
        assert "`{titel}` is not a name OnAir knows" in refused["content"]
        saved = await template(
            "set",
            content="Now on {station}: {title}",
            title="♪ {title}",
            description="by **{artist}** · {album|no album} · ❤ {likes}",
            color="#1DB954",
        )
        assert saved["flags"] & EPHEMERAL
        assert "all · title: `♪ {title}`" in saved["content"]
        await template("set", variant="live", title="🔴 LIVE: {title}")
        preview = await template("preview")
        assert preview["flags"] & EPHEMERAL
        assert "Characters used: embed " in preview["content"]
        assert f"<@&{guild.roles[1]}> Now on" in preview["content"]
        assert preview["embeds"][0]["title"] == f"♪ {TRACKS[0].title}"
        live_preview = await template("preview", variant="live")
        assert live_preview["embeds"][0]["title"] == f"♪ {TRACKS[0].title}"  # none recorded yet
        programme_sim.clock.advance(71)  # the jingle
        await poll(env)
        body = posts(fake)[-1].json
        assert body["content"] == f"<@&{guild.roles[1]}> Now on Main FM: {JINGLES[0].title}"
        assert body["allowed_mentions"] == {"parse": [], "roles": [guild.roles[1]]}
        embed = body["embeds"][0]
        assert embed["title"] == f"♪ {JINGLES[0].title}"
        assert embed["color"] == 0x1DB954
        assert embed["description"].endswith("· ❤ 0")
        programme_sim.clock.advance(5)  # the next track, then the live show
        await poll(env)
        programme_sim.clock.advance(70)
        await poll(env)
        assert posts(fake)[-1].json["embeds"][0]["title"] == f"🔴 LIVE: {LIVE_SHOW.title}"
        cleared = await template("clear")
        assert "No templates" in cleared["content"]
        other = guild.channels[1]
        iid = await fake.slash(
            "onair",
            {"channel": str(other), "title": "{title}"},
            sub=["template", "set"],
            resolved=fake.resolved_channel(other),
        )
        missing = await fake.final_message(iid)
        assert "has no announcements" in missing["content"]


async def test_the_card_carries_the_button_of_the_play_it_shows(programme_sim, fake):
    guild = fake.guilds[0]
    config = subscription_config(guild.id, guild.channels[0], mode="card")
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        card = int(posts(fake)[0].response["id"])
        first = like_button(fake.messages[card])["custom_id"]
        assert (await click(fake, card, user_id=5))["type"] == UPDATE_MESSAGE
        assert like_button(fake.messages[card])["label"] == "❤ 1"
        programme_sim.clock.advance(71)  # the jingle: the card is edited in place
        await poll(env)
        edits = fake.sent("PATCH", rf"^/channels/{guild.channels[0]}/messages/{card}$")
        assert edits
        assert like_button(fake.messages[card])["custom_id"] != first  # the new play's
        assert like_button(fake.messages[card])["label"] == "❤"


async def test_a_resumed_post_whose_likes_changed_is_found_not_posted_again(programme_sim, fake):
    # A crash between the send and its mark, a restart past Discord's nonce window, and
    # listeners liking the post meanwhile: a template's {likes} makes the resumed rendering
    # differ from the post, and the play's ❤ button is what recognises it.
    guild = fake.guilds[0]
    channel = guild.channels[0]
    config = subscription_config(guild.id, channel) + "[subscriptions.template]\n"
    config += 'title = "{title} ❤{likes}"\n'
    async with running_bot(programme_sim, fake=fake, extra_config=config) as env:
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        post = int(posts(fake)[0].response["id"])
        await click(fake, post, user_id=1001)
        # /nowplaying in the same channel carries the same ❤: an interaction reply, not a post.
        await fake.final_message(await fake.slash("nowplaying", channel_id=channel))
        storage = env.bot.storage
        (sub,) = await storage.subscriptions()
        ((_, payload),) = await storage.recent_announcements("main", 1)
        announcement = snapshot.load(payload)
        station = env.bot.registry.station("main")
        assert station is not None
        deliverer = env.bot.announcer.deliverer
        found = await deliverer.deliver(
            sub, announcement, station, nonce="another-run", resumed=True
        )
        assert found == post
        assert len(posts(fake)) == 1
