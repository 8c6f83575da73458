"""Templates, likes and /top through the real discord.py client and the fake Discord."""

from __future__ import annotations

import pytest

from bot.announcer import snapshot
from bot.simulator import JINGLES, LIVE_SHOW, TRACKS

from .support.botenv import fake_discord_fixture, running_bot, subscription_config
from .support.discord_rules import CHANNEL_MESSAGE, EPHEMERAL
from .support.fakediscord import FakeDiscord
from .support.stations import programme_sim_fixture
from .support.waiting import poll_watch

pytestmark = pytest.mark.e2e

# Tracks of 70 s: /top counts plays of a minute or more as tracks (shorter ones are jingles).
SLOTS = [(TRACKS[0], 70.0), (JINGLES[0], 5.0), (TRACKS[1], 70.0), (LIVE_SHOW, 60.0)]


programme_sim = programme_sim_fixture(
    "programme_sim", SLOTS, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm"
)


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
        title = TRACKS[0].title
        answer = await click(fake, first, user_id=1001)
        # Said privately, with how to undo it; the message is left as it is (no count that
        # other servers' posts of the play could not show alike).
        assert answer["type"] == CHANNEL_MESSAGE
        assert answer["data"]["flags"] & EPHEMERAL
        assert answer["data"]["content"] == (
            f"Liked *{title}*: click again to undo. You are the first to like it."
        )
        button = like_button(fake.messages[first])
        assert button["emoji"]["name"] == "❤️"
        assert button["label"] == "Like"  # no count
        answer = await click(fake, second, user_id=1002)
        assert answer["data"]["content"] == (  # counted across guilds
            f"Liked *{title}*: click again to undo. 2 listeners like it now."
        )
        answer = await click(fake, first, user_id=1001)  # a second click takes the like back
        assert answer["data"]["content"] == f"Like removed from *{title}*."
        # /nowplaying carries the same play's button, and no count either.
        message = await fake.final_message(await fake.slash("nowplaying"))
        assert like_button(message)["custom_id"] == custom_id
        assert like_button(message) == like_button(fake.messages[first])
    edits = len(fake.sent("PATCH"))
    async with running_bot(programme_sim, fake=fake, extra_config=config, db_path=db):
        answer = await click(fake, first, user_id=1003)  # a message posted before the restart
        assert "2 listeners like it now" in answer["data"]["content"]
        top = await fake.final_message(await fake.slash("top", {"period": "day"}))
        liked = top["embeds"][0]["fields"][0]
        assert liked["name"] == "Most liked"
        assert liked["value"] == f"🥇 **{title}** · {TRACKS[0].artist} · 2 likes"
        assert TRACKS[0].title in top["embeds"][0]["fields"][1]["value"]
    assert len(fake.sent("PATCH")) == edits  # no REST edit: the answers are private replies


async def test_a_listener_clicking_fast_is_told_privately(programme_sim, fake):
    config = subscription_config(fake.guilds[0].id, fake.guilds[0].channels[0])
    async with running_bot(programme_sim, fake=fake, extra_config=config):
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        post = int(posts(fake)[0].response["id"])
        answers = [await click(fake, post, user_id=7) for _ in range(7)]
        said = [a["data"]["content"].split(" ")[0] for a in answers[:6]]
        assert said == ["Liked", "Like", "Liked", "Like", "Liked", "Like"]  # toggled each time
        assert all(a["data"]["flags"] & EPHEMERAL for a in answers)
        assert "liking quickly" in answers[6]["data"]["content"]


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
        assert "format spec" not in refused["content"]  # said in plain words
        assert "has a `:` after the name" in refused["content"]
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
        # Which wording it shows; no character count far from every limit.
        heading = preview["content"].splitlines()
        assert heading[0].startswith("-# Preview of the AutoDJ wording with the station's last")
        assert "Near a limit" not in preview["content"]
        assert f"<@&{guild.roles[1]}> Now on" in heading[1]
        assert preview["embeds"][0]["title"] == f"♪ {TRACKS[0].title}"
        live_preview = await template("preview", variant="live")
        # No live show recorded yet: the last play, worded as a live show would be.
        assert live_preview["content"].startswith("-# Preview of the live show wording")
        assert live_preview["embeds"][0]["title"] == f"🔴 LIVE: {TRACKS[0].title}"
        programme_sim.clock.advance(71)  # the jingle: not announced
        await poll(env)
        programme_sim.clock.advance(5)  # the next track
        await poll(env)
        body = posts(fake)[-1].json
        assert body["content"] == f"<@&{guild.roles[1]}> Now on Main FM: {TRACKS[1].title}"
        assert body["allowed_mentions"] == {"parse": [], "roles": [guild.roles[1]]}
        embed = body["embeds"][0]
        assert embed["title"] == f"♪ {TRACKS[1].title}"
        assert embed["color"] == 0x1DB954
        assert embed["description"].endswith("· ❤ 0")
        programme_sim.clock.advance(70)  # the live show
        await poll(env)
        assert posts(fake)[-1].json["embeds"][0]["title"] == f"🔴 LIVE: {LIVE_SHOW.title}"
        # During the show, the AutoDJ wording can still be previewed (with a track).
        track_preview = await template("preview", variant="autodj")
        assert track_preview["content"].startswith("-# Preview of the AutoDJ wording")
        assert track_preview["embeds"][0]["title"].startswith("♪ ")
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
        assert (await click(fake, card, user_id=5))["type"] == CHANNEL_MESSAGE
        programme_sim.clock.advance(76)  # the next track: the card is edited in place
        await poll(env)
        edits = fake.sent("PATCH", rf"^/channels/{guild.channels[0]}/messages/{card}$")
        assert edits
        assert like_button(fake.messages[card])["custom_id"] != first  # the new play's


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
