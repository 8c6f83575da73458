"""The fake Discord checks every URL a bot sends as Discord's API description says
(``format: uri``, RFC 3986, with a length and the schemes each place allows), on every route
that carries a message, and answers a violation as Discord does: 400, code 50035, the error at
the field's path."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from .support import discord_rules as rules
from .support.botenv import fake_discord_fixture
from .support.discord_http import call, fake_http_fixture
from .support.discord_uri import uri_scheme

fake = fake_discord_fixture()

Body = dict[str, Any]
INVALID = {"code": "URL_TYPE_INVALID_URL", "message": "Not a well formed URL."}
ISSUE_27 = "https://r.example/m>[Free](https://phish.example/y)"


# The grammar alone (no server) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "scheme"),
    [
        ("https://example.com", "https"),
        ("HTTP://EXAMPLE.COM", "http"),  # schemes are case-insensitive
        ("http://example.com:8080/a/b;c=d?e=f&g=h/i?j#k/l?m", "http"),
        ("https://example.com:/x", "https"),  # an empty port is RFC 3986
        ("https://user:pw@example.com/", "https"),  # so is a user part
        ("https://[::1]/x", "https"),
        ("https://[2001:db8::7]:443/x", "https"),
        ("https://[v7.fe80::1]/", "https"),  # IPvFuture
        ("https://127.0.0.1/x", "https"),
        ("https://example.com/%41%e2%82%ac", "https"),
        ("https://example.com/a(b)!$&'*+,;=:@-._~", "https"),
        ("discord://-/channels/1/2", "discord"),
        ("discord:/channels/1", "discord"),  # no authority: fine for a scheme that needs no host
        ("javascript:alert(1)", "javascript"),
        ("data:image/png;base64,AA==", "data"),
        ("mailto:a@example.com", "mailto"),
    ],
)
def test_well_formed_absolute_uris(value, scheme):
    assert uri_scheme(value) == scheme


@pytest.mark.parametrize(
    "value",
    [
        ISSUE_27,
        "https://r.example/z>[F](https://phish.example)",
        "https://example.com/a b",
        "https://example.com/ ",
        " https://example.com/",
        'https://example.com/"x"',
        "https://example.com/<x>",
        "https://example.com/{x}",
        "https://example.com/a|b",
        "https://example.com/a\\b",
        "https://example.com/a^b",
        "https://example.com/a`b",
        "https://example.com/[x]",
        "https://example.com/?q=[x]",
        "https://example.com/#a#b",
        "https://example.com/%zz",
        "https://example.com/%4",
        "https://example.com/é",
        "https://exämple.com/",
        "https://example.com/\x00",
        "https://example.com/\n",
        "https://example.com/\u200b",
        "https:///x",
        "https://:8443/x",
        "https://",
        "https:",
        "https://[::1/x",
        "https://[::1]x/",
        "https://[fe80::1%25eth0]/",  # a zone id is not RFC 3986
        "https://[not-an-ip]/",
        "https://example.com:80a/",
        "https://a@b@example.com/",
        "//example.com/x",
        "/relative/path",
        "example.com",
        "1http://example.com",
        "",
    ],
)
def test_malformed_or_relative_uris(value):
    assert uri_scheme(value) is None


# Every route, every URL field ------------------------------------------------------------------


http = fake_http_fixture()


def link_button(url: str) -> Body:
    row = {"type": rules.ACTION_ROW, "components": [{"type": 2, "style": 5, "label": "Listen"}]}
    row["components"][0]["url"] = url
    return {"components": [row]}


def embed(**parts: Any) -> Body:
    return {"embeds": [{"title": "Song", **parts}]}


# Each field: (name, the message with it set to a URL, the path of its error, its length limit).
FIELDS: list[tuple[str, Callable[[str], Body], tuple[str | int, ...], int]] = [
    ("button url", link_button, ("components", 0, "components", 0, "url"), 512),
    ("embed url", lambda u: embed(url=u), ("embeds", 0, "url"), 2048),
    (
        "author url",
        lambda u: embed(author={"name": "a", "url": u}),
        ("embeds", 0, "author", "url"),
        2048,
    ),
    (
        "author icon_url",
        lambda u: embed(author={"name": "a", "icon_url": u}),
        ("embeds", 0, "author", "icon_url"),
        2048,
    ),
    (
        "footer icon_url",
        lambda u: embed(footer={"text": "f", "icon_url": u}),
        ("embeds", 0, "footer", "icon_url"),
        2048,
    ),
    ("image url", lambda u: embed(image={"url": u}), ("embeds", 0, "image", "url"), 2048),
    (
        "thumbnail url",
        lambda u: embed(thumbnail={"url": u}),
        ("embeds", 0, "thumbnail", "url"),
        2048,
    ),
]
FIELD_IDS = [f[0] for f in FIELDS]


def errors_at(path: tuple[str | int, ...], code: str, message: str) -> Body:
    tree: Body = {"_errors": [{"code": code, "message": message}]}
    for part in reversed(path):
        tree = {str(part): tree}
    return tree


def refusal(path: tuple[str | int, ...], code: str, message: str) -> Body:
    return {"code": 50035, "errors": errors_at(path, code, message), "message": "Invalid Form Body"}


def sized(length: int) -> str:
    """A well-formed https URL of exactly ``length`` characters."""
    base = "https://example.com/"
    return base + "a" * (length - len(base))


@pytest.mark.e2e
@pytest.mark.parametrize(("name", "make", "path", "limit"), FIELDS, ids=FIELD_IDS)
async def test_a_url_at_its_limit_passes_one_more_is_refused(fake, http, name, make, path, limit):
    channel = fake.guilds[0].channels[0]
    status, body = await call(http, "POST", f"/channels/{channel}/messages", make(sized(limit)))
    assert status == 200, body
    status, body = await call(http, "POST", f"/channels/{channel}/messages", make(sized(limit + 1)))
    assert (status, body) == (
        400,
        refusal(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length."),
    )


@pytest.mark.e2e
@pytest.mark.parametrize(("name", "make", "path", "limit"), FIELDS, ids=FIELD_IDS)
@pytest.mark.parametrize(
    "bad", [ISSUE_27, "https://example.com/a b", "https://example.com/é", "https:///x"]
)
async def test_a_malformed_url_is_refused_in_every_field(fake, http, name, make, path, limit, bad):
    channel = fake.guilds[0].channels[0]
    status, body = await call(http, "POST", f"/channels/{channel}/messages", make(bad))
    assert (status, body) == (400, refusal(path, INVALID["code"], INVALID["message"]))
    assert fake.channel_messages[channel] == []  # nothing was posted


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("name", "make", "scheme_ok"),
    [
        ("button url", link_button, {"http", "https", "discord"}),
        ("embed url", FIELDS[1][1], {"http", "https"}),
        ("author url", FIELDS[2][1], {"http", "https"}),
        ("image url", FIELDS[5][1], {"http", "https", "attachment"}),
        ("thumbnail url", FIELDS[6][1], {"http", "https", "attachment"}),
    ],
)
async def test_each_place_takes_only_its_schemes(fake, http, name, make, scheme_ok):
    channel = fake.guilds[0].channels[0]
    urls = {
        "http": "http://example.com/x",
        "https": "https://example.com/x",
        "discord": "discord://-/channels/1/2",
        "ftp": "ftp://example.com/x",
        "javascript": "javascript:alert(1)",
        "data": "data:image/png;base64,AA==",
    }
    for scheme, url in urls.items():
        status, body = await call(http, "POST", f"/channels/{channel}/messages", make(url))
        if scheme in scheme_ok:
            assert status == 200, (scheme, body)
        else:
            assert status == 400, (scheme, body)
            assert "URL_TYPE_INVALID_SCHEME" in str(body["errors"]), (scheme, body)


@pytest.mark.e2e
async def test_the_issue_27_button_is_refused_on_every_route_that_takes_a_message(fake, http):
    """Create, edit, interaction reply, component update, follow-up, and the webhook edits:
    each answers the same 400 for the same button, with the same errors tree (under ``data``
    for a callback)."""
    channel = fake.guilds[0].channels[0]
    bad = link_button(ISSUE_27)
    path = ("components", 0, "components", 0, "url")
    expected = refusal(path, INVALID["code"], INVALID["message"])
    under_data = refusal(("data", *path), INVALID["code"], INVALID["message"])

    assert await call(http, "POST", f"/channels/{channel}/messages", bad) == (400, expected)
    _, posted = await call(http, "POST", f"/channels/{channel}/messages", {"content": "x"})
    assert await call(http, "PATCH", f"/channels/{channel}/messages/{posted['id']}", bad) == (
        400,
        expected,
    )
    iid = fake.pending_interaction(2)
    callback = f"/interactions/{iid}/itoken-{iid}/callback"
    reply = {"type": rules.CHANNEL_MESSAGE, "data": {"content": "x", **bad}}
    assert await call(http, "POST", callback, reply) == (400, under_data)
    status, _ = await call(http, "POST", callback, {"type": rules.CHANNEL_MESSAGE, "data": {}})
    assert status == 400  # (an empty reply; the interaction is still unanswered)
    good = {"type": rules.CHANNEL_MESSAGE, "data": {"content": "x"}}
    assert (await call(http, "POST", callback, good))[0] == 200  # a refusal is not an answer
    webhook = f"/webhooks/{fake.app_id}/itoken-{iid}"
    assert await call(http, "POST", webhook, {"content": "y", **bad}) == (400, expected)
    assert await call(http, "PATCH", f"{webhook}/messages/@original", bad) == (400, expected)
    _, follow_up = await call(http, "POST", webhook, {"content": "y"})
    assert await call(http, "PATCH", f"{webhook}/messages/{follow_up['id']}", bad) == (
        400,
        expected,
    )
    row = {"type": 1, "components": [{"type": 2, "style": 2, "label": "❤", "custom_id": "x"}]}
    message = fake.message(channel, {"content": "song", "components": [row]})
    click = await fake.click(message, "x")
    update = {"type": rules.UPDATE_MESSAGE, "data": bad}
    assert await call(http, "POST", f"/interactions/{click}/itoken-{click}/callback", update) == (
        400,
        under_data,
    )


@pytest.mark.e2e
async def test_a_well_formed_button_passes_on_every_route(fake, http):
    channel = fake.guilds[0].channels[0]
    good = link_button("https://r.example/m%3E?a=(b)#c")
    status, posted = await call(http, "POST", f"/channels/{channel}/messages", good)
    assert status == 200, posted
    assert (await call(http, "PATCH", f"/channels/{channel}/messages/{posted['id']}", good))[
        0
    ] == 200
    iid = fake.pending_interaction(2)
    reply = {"type": rules.CHANNEL_MESSAGE, "data": copy.deepcopy(good)}
    assert (await call(http, "POST", f"/interactions/{iid}/itoken-{iid}/callback", reply))[0] == 200
    webhook = f"/webhooks/{fake.app_id}/itoken-{iid}"
    assert (await call(http, "POST", webhook, good))[0] == 200
    assert (await call(http, "PATCH", f"{webhook}/messages/@original", good))[0] == 200
