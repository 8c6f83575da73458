"""The fake Discord is as strict as Discord: each documented limit rejects a payload that breaks it
(400, code 50035, the error at the field's path), the payload just inside the limit passes, and
discord.py turns a rejection into ``discord.HTTPException``. Also: empty messages (50006), a second
answer to one interaction (40060), unknown routes (404) and the JSONL recording.

Here: messages. Interaction callbacks and command sync are in
test_fake_strict_interactions.py; discord.py, unknown routes, the opt-out, the recording and
component interactions in test_fake_strict_wire.py.
"""

from __future__ import annotations

import pytest

from .support import discord_rules as rules
from .support.discord_http import call
from .support.strict_payloads import (  # noqa: F401
    E0,
    MAX,
    MIN,
    ROW0,
    SCHEME,
    appending,
    at,
    buttons_row,
    fake_fixture,
    http_fixture,
    message,
    mutated,
    refused_at,
    setter,
)

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


MESSAGE_RULES = [
    ("content 2000", setter("content", "c" * 2001), "content", MAX),
    ("10 embeds", appending("embeds", lambda: {"description": "x"}), "embeds", MAX),
    ("title 256", setter(f"{E0}.title", "t" * 257), f"{E0}.title", MAX),
    ("description 4096", setter(f"{E0}.description", "d" * 4097), f"{E0}.description", MAX),
    (
        "25 fields",
        appending(f"{E0}.fields", lambda: {"name": "n", "value": "v"}),
        f"{E0}.fields",
        MAX,
    ),
    ("field name 256", setter(f"{E0}.fields.0.name", "n" * 257), f"{E0}.fields.0.name", MAX),
    ("field name empty", setter(f"{E0}.fields.0.name", ""), f"{E0}.fields.0.name", MIN),
    ("field value 1024", setter(f"{E0}.fields.0.value", "v" * 1025), f"{E0}.fields.0.value", MAX),
    ("field value empty", setter(f"{E0}.fields.0.value", ""), f"{E0}.fields.0.value", MIN),
    ("footer 2048", setter(f"{E0}.footer.text", "f" * 2049), f"{E0}.footer.text", MAX),
    ("author 256", setter(f"{E0}.author.name", "a" * 257), f"{E0}.author.name", MAX),
    ("embed total 6000", setter(f"{E0}.description", "d" * 4000), E0, "EMBED_SIZE_EXCEEDED"),
    ("embed url scheme", setter(f"{E0}.url", "javascript:x"), f"{E0}.url", SCHEME),
    ("embed url host", setter(f"{E0}.url", "https:///x"), f"{E0}.url", "URL_TYPE_INVALID_URL"),
    (
        "image scheme",
        setter(f"{E0}.image", {"url": "ftp://x/a.png"}),
        f"{E0}.image.url",
        SCHEME,
    ),
    (
        "thumbnail attachment not uploaded",
        setter(f"{E0}.thumbnail", {"url": "attachment://other.png"}),
        f"{E0}.thumbnail.url",
        "URL_TYPE_INVALID_ATTACHMENT",
    ),
    (
        "footer icon scheme",
        setter(f"{E0}.footer.icon_url", "data:image/png;base64,AA"),
        f"{E0}.footer.icon_url",
        SCHEME,
    ),
    (
        "author icon scheme",
        setter(f"{E0}.author.icon_url", "//example.com/i.png"),
        f"{E0}.author.icon_url",
        "URL_TYPE_INVALID_URL",
    ),
    ("5 action rows", appending("components", lambda: buttons_row("z")), "components", MAX),
    (
        "5 buttons a row",
        appending(
            "components.0.components",
            lambda: {"type": rules.BUTTON, "style": 1, "label": "x", "custom_id": "q"},
        ),
        "components.0.components",
        MAX,
    ),
    ("button label 80", setter(f"{ROW0}.label", "b" * 81), f"{ROW0}.label", MAX),
    ("custom_id 100", setter(f"{ROW0}.custom_id", "i" * 101), f"{ROW0}.custom_id", MAX),
    ("custom_id empty", setter(f"{ROW0}.custom_id", ""), f"{ROW0}.custom_id", MIN),
    refused_at(
        "custom_id unique",
        "components.1.components.0.custom_id",
        "a0",
        "COMPONENT_CUSTOM_ID_DUPLICATED",
    ),
    (
        "link button needs url",
        setter("components.2.components.0", {"type": rules.BUTTON, "style": 5, "label": "x"}),
        "components.2.components.0.url",
        "BUTTON_COMPONENT_URL_REQUIRED",
    ),
    refused_at(
        "link button has no custom_id",
        "components.2.components.0.custom_id",
        "x",
        "BUTTON_COMPONENT_CUSTOM_ID_NOT_ALLOWED",
    ),
    (
        "other button needs custom_id",
        setter(ROW0, {"type": rules.BUTTON, "style": 1, "label": "x"}),
        f"{ROW0}.custom_id",
        "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED",
    ),
    (
        "other button has no url",
        setter(f"{ROW0}.url", "https://example.com"),
        f"{ROW0}.url",
        "BUTTON_COMPONENT_URL_NOT_ALLOWED",
    ),
    (
        "select fills a row",
        appending(
            "components.3.components",
            lambda: {"type": rules.BUTTON, "style": 1, "label": "x", "custom_id": "q"},
        ),
        "components.3.components",
        "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
    ),
    (
        "select options 25",
        appending("components.3.components.0.options", lambda: {"label": "x", "value": "y"}),
        "components.3.components.0.options",
        MAX,
    ),
    refused_at("select options 1", "components.3.components.0.options", [], MIN),
    refused_at(
        "select option label 100", "components.3.components.0.options.0.label", "l" * 101, MAX
    ),
    refused_at(
        "select option value 100", "components.3.components.0.options.0.value", "v" * 101, MAX
    ),
    refused_at(
        "select option description 100",
        "components.3.components.0.options.0.description",
        "d" * 101,
        MAX,
    ),
    (
        "select option values unique",
        setter("components.3.components.0.options.1.value", "0" * 100),
        "components.3.components.0.options.1",
        "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED",
    ),
    refused_at("select placeholder 150", "components.3.components.0.placeholder", "p" * 151, MAX),
    refused_at("select custom_id 100", "components.3.components.0.custom_id", "s" * 101, MAX),
    (
        "allowed_mentions parse values",
        setter("allowed_mentions", {"parse": ["here"]}),
        "allowed_mentions.parse.0",
        "BASE_TYPE_CHOICES",
    ),
    refused_at(
        "allowed_mentions roles exclusive with parse roles",
        "allowed_mentions",
        {"parse": ["roles"], "roles": ["1"]},
        "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
    ),
    (
        "allowed_mentions users 100",
        setter("allowed_mentions", {"users": [str(10**17 + n) for n in range(101)]}),
        "allowed_mentions.users",
        MAX,
    ),
    (
        "allowed_mentions roles 100",
        setter("allowed_mentions", {"roles": [str(10**17 + n) for n in range(101)]}),
        "allowed_mentions.roles",
        MAX,
    ),
    (
        "allowed_mentions ids",
        setter("allowed_mentions", {"users": ["not-an-id"]}),
        "allowed_mentions.users.0",
        "NUMBER_TYPE_COERCE",
    ),
]


async def test_valid_message_at_every_limit_passes(fake, http):
    channel = fake.guilds[0].channels[0]
    status, body = await call(http, "POST", f"/channels/{channel}/messages", message())
    assert status == 200, body


@pytest.mark.parametrize(
    ("what", "mutate", "path", "code"), MESSAGE_RULES, ids=[r[0] for r in MESSAGE_RULES]
)
async def test_message_rule_rejects(fake, http, what, mutate, path, code):
    channel = fake.guilds[0].channels[0]
    status, body = await call(
        http, "POST", f"/channels/{channel}/messages", mutated(message(), mutate)
    )
    assert status == 400
    assert body["code"] == 50035
    assert body["message"] == "Invalid Form Body"
    assert at(body["errors"], path) == code
    assert fake.channel_messages[channel] == []  # nothing was posted


async def test_rules_apply_to_edits_follow_ups_and_replies_too(fake, http):
    channel = fake.guilds[0].channels[0]
    status, posted = await call(http, "POST", f"/channels/{channel}/messages", {"content": "x"})
    assert status == 200
    too_long = {"content": "c" * 2001}
    status, body = await call(
        http, "PATCH", f"/channels/{channel}/messages/{posted['id']}", too_long
    )
    assert status == 400
    assert at(body["errors"], "content") == MAX
    iid = fake.pending_interaction(2)
    status, body = await call(
        http,
        "POST",
        f"/interactions/{iid}/itoken-{iid}/callback",
        {"type": rules.CHANNEL_MESSAGE, "data": too_long},
    )
    assert status == 400
    assert at(body["errors"], "data.content") == MAX
    status, body = await call(
        http,
        "POST",
        f"/interactions/{iid}/itoken-{iid}/callback",
        {"type": rules.DEFERRED_CHANNEL_MESSAGE, "data": {}},
    )
    assert status == 200  # a rejected answer does not count as the answer
    status, body = await call(http, "POST", f"/webhooks/{fake.app_id}/itoken-{iid}", too_long)
    assert status == 400
    assert at(body["errors"], "content") == MAX
    status, body = await call(
        http, "PATCH", f"/webhooks/{fake.app_id}/itoken-{iid}/messages/@original", too_long
    )
    assert status == 400
    assert at(body["errors"], "content") == MAX


async def test_empty_messages_are_refused(fake, http):
    channel = fake.guilds[0].channels[0]
    for empty in ({}, {"content": ""}, {"content": "  ", "embeds": []}):
        status, body = await call(http, "POST", f"/channels/{channel}/messages", empty)
        assert (status, body) == (400, {"code": 50006, "message": "Cannot send an empty message"})
    status, posted = await call(http, "POST", f"/channels/{channel}/messages", {"content": "x"})
    status, body = await call(
        http, "PATCH", f"/channels/{channel}/messages/{posted['id']}", {"content": ""}
    )
    assert status == 400
    assert body["code"] == 50006
    iid = fake.pending_interaction(2)
    status, body = await call(
        http,
        "POST",
        f"/interactions/{iid}/itoken-{iid}/callback",
        {"type": rules.CHANNEL_MESSAGE, "data": {}},
    )
    assert status == 400
    assert body["code"] == 50006
