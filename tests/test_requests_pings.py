"""The requesters an announcement pings: within Discord's 2,000 characters of content and 100
user mentions whatever the count, the template's content and the role ping; the rest named
without a ping, or counted, in the guild's language."""

from __future__ import annotations

import re

import pytest

from bot.render import pings, station_embeds
from bot.render.templated import CONTENT, PINGS_ROOM, announcement
from bot.station import Play
from bot.templates.model import TemplateSet, Wording
from bot.util.i18n import ENGLISH, Translator

from .test_templates import _info

ROLE = 123456789012345678


def requesters(count: int, first: int = 10**17 * 7) -> tuple[tuple[int, str], ...]:
    return tuple((first + n, f"Listener {n}") for n in range(count))


def mentioned(content: str) -> list[int]:
    return [int(u) for u in re.findall(r"<@(\d+)>", content)]


def test_short_ids_are_pinged_at_most_100():
    fitted = pings.fit(requesters(150, first=1), CONTENT)
    assert len(fitted.users) == 100
    assert mentioned(fitted.text) == list(fitted.users)
    assert len(fitted.text) <= CONTENT
    assert "also requested by **Listener 100**" in fitted.text


def test_a_name_cannot_ping_or_break_the_markdown():
    fitted = pings.fit(((10**18, "@everyone <@2> **x**"),), 20)  # no room for the ping: named
    assert fitted.users == ()
    assert "<@2>" not in fitted.text
    assert "@everyone" not in fitted.text.replace("@\u200beveryone", "")


@pytest.mark.parametrize("room", [0, 5, 30, 200, 1999, 2000])
def test_whatever_the_room_the_text_fits_and_pings_only_whom_it_mentions(room):
    fitted = pings.fit(requesters(95), room)
    assert len(fitted.text) <= room
    assert mentioned(fitted.text) == list(fitted.users)


@pytest.mark.parametrize("card", [False, True])
def test_role_ping_template_content_and_95_opt_ins_fit_one_post(card):
    wording = Wording(content="📻 {title} " + "On air now. " * 75)
    shown = announcement(
        TemplateSet(all=wording),
        _info(),
        Play(artist="Band", title="Song"),
        "Main FM",
        style=station_embeds.effective_style("full"),
        mention_role=ROLE,
        card=card,
        ping_users=requesters(95),
    )
    content = shown.content or ""
    assert len(content) <= CONTENT
    assert content.startswith(f"<@&{ROLE}> <@{10**17 * 7}>")
    assert mentioned(content) == list(shown.pinged)
    assert 0 < len(shown.pinged) <= 100
    # Neither starves the other: the pings keep their room, the template its own.
    assert len(" ".join(f"<@{u}>" for u in shown.pinged)) >= PINGS_ROOM - 60
    assert "📻 Song On air now." in content


def test_the_rest_are_named_and_counted_in_the_guilds_language():
    german = Translator.load().lang("de")
    assert pings.fit(requesters(95), CONTENT, ENGLISH).text.endswith(" and 5 more")
    assert re.search(
        r"<@\d+> und \d+ weitere Personen$", pings.fit(requesters(95), 2000, german).text
    )
    # 100 pinged (Discord's most), then names as far as they fit, else the count.
    fitted = pings.fit(requesters(102, first=1), 700, german)
    assert fitted.users == tuple(range(1, 101))
    assert fitted.text.endswith("<@100> auch gewünscht von **Listener 100**, **Listener 101**")
    fitted = pings.fit(requesters(102, first=1), 620, german)
    assert fitted.text.endswith("<@100> und 2 weitere Personen")
