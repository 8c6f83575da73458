"""/request and /requests in a user's language (issue 24), end to end: the real discord.py
client against the fake Discord and the simulator on a manual clock (the setup of
test_requests_bot). The station's own words (titles, its refusal reason) stay as they are;
everything OnAir says is in the user's language, with no English left."""

from __future__ import annotations

import pytest

from bot.simulator import TRACKS

from .support.botenv import fake_discord_fixture
from .support.discord_rules import EPHEMERAL
from .support.stations import programme_sim_fixture
from .test_i18n_bot import english_left, visible_text
from .test_requests_bot import NEON, SLOTS, posts, private_text, running

pytestmark = pytest.mark.e2e

programme_sim = programme_sim_fixture(
    "programme_sim", SLOTS, key="station-key-SECRET-42", public_url="https://c9.radioboss.fm"
)
fake = fake_discord_fixture(channels_per_guild=2)


async def test_request_and_requests_in_the_users_language(programme_sim, fake):
    owner = fake.owner_id
    fake.user_locales[owner] = "pt-BR"
    fake.user_locales[2] = fake.user_locales[3] = "de"
    own = ("Main FM", NEON.cast_title, NEON.title, NEON.artist)
    async with running(programme_sim, fake):
        await fake.wait_for(lambda: len(posts(fake)) == 1)
        await fake.response(await fake.autocomplete("request", "song", "neon"))
        text = await private_text(fake, await fake.slash("request", {"song": "1004", "ping": True}))
        assert text == (
            f"✅ A **Main FM** aceitou seu pedido: **{NEON.cast_title}**. "
            "Você vai ser marcado quando tocar."
        )
        assert english_left(text, "pt_BR", own) == []

        message = await fake.final_message(await fake.slash("requests"))
        embed = message["embeds"][0]
        assert embed["title"] == "Pedidos · Main FM"
        queue, mine = embed["fields"]
        assert queue["name"] == "A fila da rádio (mais novos primeiro)"
        assert queue["value"] == f"⏳ esperando · {NEON.cast_title}"
        assert mine["value"] == f"**{NEON.cast_title}** · 1º na fila"
        shown = visible_text(message) + "".join(f["name"] + f["value"] for f in embed["fields"])
        assert english_left(shown, "pt_BR", own) == []

        # A German user: the station's reason (played recently) said in German, with what to do.
        await fake.response(await fake.autocomplete("request", "song", "harbour", user_id=2))
        text = await private_text(fake, await fake.slash("request", {"song": "1001"}, user_id=2))
        assert text == (
            "**Main FM** hat diesen Song gerade erst gespielt, deshalb geht er noch nicht als "
            "Wunsch. Wünsch dir einen anderen Song."
        )
        text = await private_text(fake, await fake.slash("request", {"song": "zzzz"}, user_id=3))
        assert text.startswith("Kein Song bei **Main FM** passt zu „zzzz“")
        assert english_left(text, "de", ("Main FM",)) == []
        # Typed in full, then again at once: the cooldown, in German.
        typed = TRACKS[2].cast_title.upper()
        text = await private_text(fake, await fake.slash("request", {"song": typed}, user_id=3))
        assert "Die Ansage nennt dich." in text  # one word for announcements: Ansage
        text = await private_text(fake, await fake.slash("request", {"song": "1004"}, user_id=3))
        assert text.startswith(
            "Du hast dir gerade erst etwas gewünscht. Der nächste Wunsch geht <t:"
        )
        assert english_left(text, "de") == []


async def test_request_descriptions_are_localised(programme_sim, fake):
    async with running(programme_sim, fake):
        for name in ("request", "requests"):
            command = fake._command(name)
            assert command["description_localizations"]["pt-BR"]
            for option in command["options"]:
                assert option["description_localizations"]["de"], (name, option["name"])


async def test_the_request_channel_line_is_in_the_guilds_language(programme_sim, fake):
    """The line is public: the guild's language (German here), not the requester's."""
    guild = fake.guilds[0]
    listing = guild.channels[1]
    fake.user_names[2] = "Ana"
    async with running(programme_sim, fake) as env:
        await fake.response(await fake.slash("onair", {"language": "de"}, sub=["settings"]))
        station = env.bot.registry.station("main")
        assert station is not None
        await env.bot.requests.configure(
            guild.id,
            station,
            enabled=None,
            role_id=None,
            cooldown=None,
            hourly_cap=None,
            channel_id=listing,
        )
        iid = await fake.slash("request", {"song": NEON.cast_title}, user_id=2)
        assert "accepted your request" in await private_text(fake, iid)
        [line] = [
            r.json for r in fake.sent("POST", rf"^/channels/{listing}/messages$") if r.status == 200
        ]
        assert line["content"] == f"🎵 **Ana** hat sich {NEON.cast_title} gewünscht"
        assert english_left(line["content"], "de", ("Ana", NEON.cast_title)) == []
        assert line["allowed_mentions"] == {"parse": []}


async def test_a_language_outside_the_choices_is_refused_politely(programme_sim, fake, caplog):
    """/onair settings language: is checked on the server: a value Discord's choices would
    not send is refused in the admin's language, nothing stored, nothing logged as an error."""
    owner = fake.owner_id
    fake.user_locales[owner] = "de"
    async with running(programme_sim, fake) as env:
        iid = await fake.slash("onair", {"language": "x" * 3000}, sub=["settings"])
        callback = await fake.response(iid)
        assert callback.status == 200
        reply = await fake.final_message(iid)
        assert reply["flags"] & EPHEMERAL
        assert reply["content"].startswith("Diese Sprache spricht OnAir nicht")
        assert "Deutsch" in reply["content"]
        assert "x" * 10 not in reply["content"]
        settings = await env.bot.storage.guild_settings(fake.guilds[0].id)
        assert settings.language == ""
        assert [r for r in caplog.records if r.levelname == "ERROR"] == []
