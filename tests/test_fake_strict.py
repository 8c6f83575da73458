"""The fake Discord is as strict as Discord: each documented limit rejects a payload that breaks it
(400, code 50035, the error at the field's path), the payload just inside the limit passes, and
discord.py turns a rejection into ``discord.HTTPException``. Also: empty messages (50006), a second
answer to one interaction (40060), unknown routes (404) and the JSONL recording."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any

import aiohttp
import discord
import pytest

from .support import discord_rules as rules
from .support.botenv import fake_discord_fixture
from .support.discord_http import call, fake_http_fixture
from .support.fakediscord import RECORD_ENV, FakeDiscord

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord

Body = dict[str, Any]
Mutation = Callable[[Any], None]
Case = tuple[str, Mutation, str, str]
JSON_TYPE = "application/json"


fake = fake_discord_fixture()


http = fake_http_fixture()


def at(errors: dict[str, Any], path: str) -> str:
    """The first error code at a dotted path of Discord's nested errors."""
    node = errors
    for part in path.split(".") if path else []:
        assert part in node, f"no error at {path!r}: {json.dumps(errors)}"
        node = node[part]
    assert "_errors" in node, f"no error at {path!r}: {json.dumps(errors)}"
    code: str = node["_errors"][0]["code"]
    return code


# Valid payloads, each just inside every limit it touches ---------------------------------------


def full_embed() -> Body:
    return {
        "title": "t" * 256,
        "description": "d" * 1000,
        "url": "https://example.com/x",
        "fields": [{"name": "n" * 100, "value": "v" * 50} for _ in range(25)],
        "footer": {"text": "f" * 200, "icon_url": "https://example.com/i.png"},
        "author": {"name": "a" * 256, "icon_url": "attachment://logo.png"},
        "image": {"url": "https://example.com/a.png"},
        "thumbnail": {"url": "attachment://logo.png"},
    }


def buttons_row(prefix: str) -> Body:
    return {
        "type": rules.ACTION_ROW,
        "components": [
            {"type": rules.BUTTON, "style": 1, "label": "b" * 80, "custom_id": f"{prefix}{i}"}
            for i in range(5)
        ],
    }


def message() -> Body:
    return {
        "content": "c" * 2000,
        "embeds": [full_embed()] + [{"description": "x"}] * 9,
        "attachments": [{"id": 0, "filename": "logo.png"}],
        "components": [
            buttons_row("a"),
            buttons_row("b"),
            {
                "type": rules.ACTION_ROW,
                "components": [
                    {
                        "type": rules.BUTTON,
                        "style": rules.LINK_STYLE,
                        "label": "Listen",
                        "url": "https://example.com",
                    }
                ],
            },
            {
                "type": rules.ACTION_ROW,
                "components": [
                    {
                        "type": rules.STRING_SELECT,
                        "custom_id": "s" * 100,
                        "placeholder": "p" * 150,
                        "options": [
                            {"label": "l" * 100, "value": f"{i:0>100}", "description": "d" * 100}
                            for i in range(25)
                        ],
                    }
                ],
            },
            buttons_row("c"),
        ],
        "allowed_mentions": {"parse": [], "roles": ["123"], "users": []},
    }


def modal() -> Body:
    row = {
        "type": rules.ACTION_ROW,
        "components": [
            {
                "type": rules.TEXT_INPUT,
                "style": 1,
                "custom_id": "k" * 100,
                "label": "l" * 45,
                "placeholder": "p" * 100,
                "value": "v" * 4000,
                "min_length": 0,
                "max_length": 4000,
            }
        ],
    }
    rows = [copy.deepcopy(row) for _ in range(5)]
    for index, item in enumerate(rows):
        item["components"][0]["custom_id"] = f"{index}" + "k" * 99
    return {
        "type": rules.MODAL,
        "data": {"custom_id": "m" * 100, "title": "t" * 45, "components": rows},
    }


def choices() -> Body:
    return {
        "type": rules.AUTOCOMPLETE_RESULT,
        "data": {
            "choices": [{"name": "n" * 100, "value": f"{i:02}" + "v" * 98} for i in range(25)]
        },
    }


def command(name: str = "nowplaying") -> Body:
    return {
        "name": name,
        "type": rules.CHAT_INPUT,
        "description": "d" * 100,
        # every locale Discord knows, each value at its limit (issue 24)
        "description_localizations": {locale: "d" * 100 for locale in rules.LOCALES},
        "options": [
            {
                "type": rules.STRING_OPTION,
                "name": "station",
                "description": "x",
                "description_localizations": {"pt-BR": "e" * 100, "es-419": "y"},
                "required": True,
            },
            {
                "type": rules.STRING_OPTION,
                "name": "mode",
                "description": "x",
                "choices": [
                    {"name": f"c{i}", "value": f"v{i}", "name_localizations": {"de": "n" * 100}}
                    for i in range(25)
                ],
            },
        ],
    }


def group_command() -> Body:
    sub = {
        "type": rules.SUB_COMMAND,
        "name": "add",
        "description": "x",
        "options": [command()["options"][0]],
    }
    group = {
        "type": rules.SUB_COMMAND_GROUP,
        "name": "station",
        "description": "x",
        "options": [sub],
    }
    return {"name": "onair", "description": "x", "options": [group, {**sub, "name": "status"}]}


def commands() -> list[Body]:
    return [command(f"c{i}") for i in range(99)] + [
        group_command(),
        {"name": "Show Card", "type": rules.MESSAGE_COMMAND, "description": ""},
    ]


# Each rule: (what, where, valid payload, mutation, error path, error code) ----------------------


def setter(path: str, value: Any) -> Mutation:
    def mutate(body: Any) -> None:
        *parents, last = path.split(".")
        node = body
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def appending(path: str, factory: Callable[[], Any]) -> Mutation:
    def mutate(body: Any) -> None:
        node = body
        for part in path.split(".") if path else []:
            node = node[int(part)] if isinstance(node, list) else node[part]
        node.append(factory())

    return mutate


def refused_at(what: str, path: str, value: Any, code: str) -> Case:
    """A case that sets ``path`` to ``value`` and expects the error at that same path."""
    return (what, setter(path, value), path, code)


def localised(what: str, where: str, locale: str, text: str, code: str) -> Case:
    """A case that sets one localisation of ``where`` and expects the error at that locale."""
    return (what, setter(where, {locale: text}), f"{where}.{locale}", code)


# Where a localisation goes (see localised), and the code for a key that is no Discord locale.
DESC, NAME = "0.description_localizations", "0.name_localizations"
OPTION_DESC = "0.options.0.description_localizations"
CHOICE_NAME = "0.options.1.choices.0.name_localizations"
LOCALE = "BASE_TYPE_CHOICES"
MAX = "BASE_TYPE_MAX_LENGTH"
MIN = "BASE_TYPE_MIN_LENGTH"
E0 = "embeds.0"
ROW0 = "components.0.components.0"
SCHEME = "URL_TYPE_INVALID_SCHEME"

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
        "allowed_mentions ids",
        setter("allowed_mentions", {"users": ["not-an-id"]}),
        "allowed_mentions.users.0",
        "NUMBER_TYPE_COERCE",
    ),
]


def _mutated(base: Any, mutate: Mutation) -> Any:
    body = copy.deepcopy(base)
    mutate(body)
    return body


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
        http, "POST", f"/channels/{channel}/messages", _mutated(message(), mutate)
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


# Interaction callbacks --------------------------------------------------------------------------

CALLBACK_RULES = [
    ("modal title 45", modal, setter("data.title", "t" * 46), "data.title", MAX),
    ("modal title empty", modal, setter("data.title", ""), "data.title", MIN),
    ("modal custom_id 100", modal, setter("data.custom_id", "m" * 101), "data.custom_id", MAX),
    ("modal custom_id empty", modal, setter("data.custom_id", ""), "data.custom_id", MIN),
    (
        "modal 5 rows",
        modal,
        appending("data.components", lambda: modal()["data"]["components"][0]),
        "data.components",
        MAX,
    ),
    ("modal 1 row", modal, setter("data.components", []), "data.components", MIN),
    (
        "text input label 45",
        modal,
        setter(f"data.{ROW0}.label", "l" * 46),
        f"data.{ROW0}.label",
        MAX,
    ),
    ("text input label empty", modal, setter(f"data.{ROW0}.label", ""), f"data.{ROW0}.label", MIN),
    (
        "text input placeholder 100",
        modal,
        setter(f"data.{ROW0}.placeholder", "p" * 101),
        f"data.{ROW0}.placeholder",
        MAX,
    ),
    (
        "text input value 4000",
        modal,
        setter(f"data.{ROW0}.value", "v" * 4001),
        f"data.{ROW0}.value",
        MAX,
    ),
    (
        "text input max_length 4000",
        modal,
        setter(f"data.{ROW0}.max_length", 4001),
        f"data.{ROW0}.max_length",
        "NUMBER_TYPE_MAX",
    ),
    (
        "text input min_length 0",
        modal,
        setter(f"data.{ROW0}.min_length", -1),
        f"data.{ROW0}.min_length",
        "NUMBER_TYPE_MIN",
    ),
    (
        "text input custom_id 100",
        modal,
        setter(f"data.{ROW0}.custom_id", "k" * 101),
        f"data.{ROW0}.custom_id",
        MAX,
    ),
    (
        "autocomplete 25 choices",
        choices,
        appending("data.choices", lambda: {"name": "x", "value": "y"}),
        "data.choices",
        MAX,
    ),
    (
        "choice name 100",
        choices,
        setter("data.choices.0.name", "n" * 101),
        "data.choices.0.name",
        MAX,
    ),
    ("choice name empty", choices, setter("data.choices.0.name", ""), "data.choices.0.name", MIN),
    (
        "choice value 100",
        choices,
        setter("data.choices.0.value", "v" * 101),
        "data.choices.0.value",
        MAX,
    ),
]


@pytest.mark.parametrize("make", [modal, choices], ids=["modal", "autocomplete"])
async def test_valid_callbacks_at_every_limit_pass(fake, http, make):
    iid = fake.pending_interaction(2 if make is modal else 4)
    status, body = await call(http, "POST", f"/interactions/{iid}/itoken-{iid}/callback", make())
    assert status == 200, body


@pytest.mark.parametrize(
    ("what", "make", "mutate", "path", "code"), CALLBACK_RULES, ids=[r[0] for r in CALLBACK_RULES]
)
async def test_callback_rule_rejects(fake, http, what, make, mutate, path, code):
    iid = fake.pending_interaction(2 if make is modal else 4)
    status, body = await call(
        http, "POST", f"/interactions/{iid}/itoken-{iid}/callback", _mutated(make(), mutate)
    )
    assert status == 400
    assert body["code"] == 50035
    assert at(body["errors"], path) == code


@pytest.mark.parametrize(
    ("kind", "callback"),
    [(2, 8), (2, 7), (4, 4), (4, 9), (5, 9), (3, 8)],
    ids=[
        "command-autocomplete",
        "command-update",
        "autocomplete-message",
        "autocomplete-modal",
        "modal-modal",
        "button-autocomplete",
    ],
)
async def test_callback_type_must_fit_the_interaction(fake, http, kind, callback):
    iid = fake.pending_interaction(kind)
    body: Body = {"type": callback, "data": {"content": "x"}}
    if callback == 8:
        body["data"] = {"choices": []}
    if callback == 9:
        body = modal()
    status, answer = await call(http, "POST", f"/interactions/{iid}/itoken-{iid}/callback", body)
    assert status == 400
    assert at(answer["errors"], "type") == "INTERACTION_CALLBACK_TYPE_INVALID"


async def test_an_interaction_is_answered_once(fake, http):
    iid = fake.pending_interaction(2)
    path = f"/interactions/{iid}/itoken-{iid}/callback"
    status, _ = await call(
        http, "POST", path, {"type": rules.CHANNEL_MESSAGE, "data": {"content": "one"}}
    )
    assert status == 200
    status, body = await call(
        http, "POST", path, {"type": rules.CHANNEL_MESSAGE, "data": {"content": "two"}}
    )
    assert (status, body) == (
        400,
        {"code": 40060, "message": "Interaction has already been acknowledged."},
    )
    status, body = await call(
        http, "POST", "/interactions/1/itoken-1/callback", {"type": rules.DEFERRED_CHANNEL_MESSAGE}
    )
    assert status == 404
    assert body["code"] == 10062


# Command sync -------------------------------------------------------------------------------------

COMMAND_RULES = [
    ("name pattern", setter("0.name", "now playing"), "0.name", "APPLICATION_COMMAND_INVALID_NAME"),
    refused_at("name lowercase", "0.name", "NowPlaying", "APPLICATION_COMMAND_INVALID_NAME"),
    ("name 32", setter("0.name", "n" * 33), "0.name", "APPLICATION_COMMAND_INVALID_NAME"),
    ("name empty", setter("0.name", ""), "0.name", "APPLICATION_COMMAND_INVALID_NAME"),
    ("description 100", setter("0.description", "d" * 101), "0.description", MAX),
    ("description empty", setter("0.description", ""), "0.description", MIN),
    (
        "25 options",
        setter(
            "0.options",
            [{"type": rules.STRING_OPTION, "name": f"o{i}", "description": "x"} for i in range(26)],
        ),
        "0.options",
        MAX,
    ),
    (
        "required before optional",
        lambda body: (
            body[0]["options"][0].pop("required") and body[0]["options"][1].update(required=True)
        ),
        "0.options.1.required",
        "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
    ),
    refused_at(
        "option name lowercase", "0.options.0.name", "Station", "APPLICATION_COMMAND_INVALID_NAME"
    ),
    refused_at("option description 100", "0.options.0.description", "d" * 101, MAX),
    refused_at("option description empty", "0.options.0.description", "", MIN),
    (
        "25 choices",
        appending("0.options.1.choices", lambda: {"name": "x", "value": "y"}),
        "0.options.1.choices",
        MAX,
    ),
    refused_at("choice value 100", "0.options.1.choices.0.value", "v" * 101, MAX),
    ("100 chat-input commands", appending("", lambda: command("extra")), "", MAX),
    ("names unique", setter("1.name", "c0"), "1.name", "APPLICATION_COMMANDS_DUPLICATE_NAME"),
    (
        "subcommands exclusive with values",
        appending(
            "99.options", lambda: {"type": rules.STRING_OPTION, "name": "loose", "description": "x"}
        ),
        "99.options",
        "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
    ),
    (
        "groups hold subcommands only",
        appending(
            "99.options.0.options",
            lambda: {"type": rules.STRING_OPTION, "name": "loose", "description": "x"},
        ),
        "99.options.0.options",
        "APPLICATION_COMMAND_OPTION_NESTING",
    ),
    (
        "no groups in groups",
        appending(
            "99.options.0.options",
            lambda: {"type": rules.SUB_COMMAND_GROUP, "name": "deep", "description": "x"},
        ),
        "99.options.0.options.1.type",
        "APPLICATION_COMMAND_OPTION_NESTING",
    ),
    localised("localised description 100", DESC, "de", "d" * 101, MAX),
    localised("localised description not empty", DESC, "fr", "", MIN),
    localised("localisation keys are Discord's locales", DESC, "pt", "Tocando agora", LOCALE),
    localised("localised option description 100", OPTION_DESC, "es-ES", "d" * 101, MAX),
    localised("localised option description locale", OPTION_DESC, "es", "d", LOCALE),
    localised("localised choice name 100", CHOICE_NAME, "pt-BR", "n" * 101, MAX),
    localised("localised choice name locale", CHOICE_NAME, "en", "n", LOCALE),
    localised(
        "localised command name is a valid name",
        NAME,
        "de",
        "Jetzt Läuft",
        "APPLICATION_COMMAND_INVALID_NAME",
    ),
    refused_at(
        "context menu command has no description",
        "100.description",
        "d",
        "APPLICATION_COMMAND_DESCRIPTION_NOT_ALLOWED",
    ),
    (
        "command size 4000",
        setter(
            "0.options",
            [
                {
                    "type": rules.STRING_OPTION,
                    "name": f"o{i}",
                    "description": "d" * 100,
                    "choices": [{"name": "n" * 100, "value": "v" * 100} for _ in range(2)],
                }
                for i in range(10)
            ],
        ),
        "0",
        "APPLICATION_COMMAND_TOO_LARGE",
    ),
]


async def test_valid_command_sync_passes(fake, http):
    status, body = await call(http, "PUT", f"/applications/{fake.app_id}/commands", commands())
    assert status == 200, body
    names = ["नमस्ते", "สวัสดี", "ĉu-ne", "o'clock", "日本語", "_x-1"]
    assert all(rules.valid_command_name(n, lowercase=True) for n in names)


@pytest.mark.parametrize(
    ("what", "mutate", "path", "code"), COMMAND_RULES, ids=[r[0] for r in COMMAND_RULES]
)
async def test_command_rule_rejects(fake, http, what, mutate, path, code):
    status, body = await call(
        http, "PUT", f"/applications/{fake.app_id}/commands", _mutated(commands(), mutate)
    )
    assert status == 400
    assert body["code"] == 50035
    assert at(body["errors"], path) == code


# Through discord.py, unknown routes, the opt-out, and the recording -----------------------------


async def test_discord_py_raises_http_exception(fake):
    client = discord.Client(intents=discord.Intents.none(), connector=fake.connector())
    await client.login(fake.expected_token)
    try:
        channel = client.get_partial_messageable(fake.guilds[0].channels[0])
        with pytest.raises(discord.HTTPException) as raised:
            await channel.send(embed=discord.Embed(title="t" * 257))
        assert raised.value.status == 400
        assert raised.value.code == 50035
        assert "embeds.0.title" in str(raised.value)
        with pytest.raises(discord.HTTPException) as raised:
            await channel.send(content="")
        assert raised.value.code == 50006
        sent = await channel.send(embed=discord.Embed(title="t" * 256))
        assert sent.embeds[0].title == "t" * 256
    finally:
        await client.close()


async def test_unknown_routes_answer_404_and_are_recorded(fake, http):
    status, body = await call(http, "POST", "/no/such/route", {"x": 1})
    assert (status, body) == (404, {"code": 0, "message": "404: Not Found"})
    assert fake.sent("POST", r"^/no/such/route$")[0].status == 404


async def test_strict_off_lets_a_violation_through(http):
    async with (
        FakeDiscord(strict=False) as lax,
        aiohttp.ClientSession(connector=lax.connector()) as session,
    ):
        channel = lax.guilds[0].channels[0]
        status, _ = await call(
            session, "POST", f"/channels/{channel}/messages", {"content": "c" * 2001}
        )
        assert status == 200


async def test_requests_are_recorded_as_json_lines(fake, http, tmp_path, monkeypatch):
    target = tmp_path / "requests.jsonl"
    monkeypatch.setenv(RECORD_ENV, str(target))
    channel = fake.guilds[0].channels[0]
    _, posted = await call(http, "POST", f"/channels/{channel}/messages", {"content": "hi"})
    iid = fake.pending_interaction(2)
    fake.interactions[iid].command = "/nowplaying station:main"
    await call(
        http,
        "POST",
        f"/interactions/{iid}/itoken-{iid}/callback",
        {"type": rules.CHANNEL_MESSAGE, "data": {"content": "np"}},
    )
    form = aiohttp.FormData()
    form.add_field(
        "payload_json",
        json.dumps(
            {
                "embeds": [{"image": {"url": "attachment://c.png"}}],
                "attachments": [{"id": 0, "filename": "c.png"}],
            }
        ),
        content_type="application/json",
    )
    form.add_field("files[0]", b"\x89PNG", filename="c.png", content_type="image/png")
    async with http.post(
        f"https://discord.com/api/v10/webhooks/{fake.app_id}/itoken-{iid}", data=form
    ) as response:
        assert response.status == 200
    await call(http, "POST", "/no/such/route", {})
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert [line["method"] for line in lines] == ["POST"] * 4
    first, reply, upload, unknown = lines
    assert first["path"] == f"/api/v10/channels/{channel}/messages"
    assert first["json"] == {"content": "hi"}
    assert first["response_id"] == posted["id"]
    assert isinstance(first["at"], float)
    assert first["at"] > 1.7e9
    assert reply["command"] == "/nowplaying station:main"
    assert reply["user"] == "listener"
    assert reply["response_id"] == fake.original(iid)["id"]
    assert upload["json"]["attachments"][0]["filename"] == "c.png"
    assert upload["files"] == [
        {"filename": "c.png", "base64": base64.b64encode(b"\x89PNG").decode()}
    ]
    assert upload["command"] == "/nowplaying station:main"
    assert unknown["status"] == 404
    assert "response_id" not in unknown


async def test_follow_up_needs_an_answered_interaction(fake, http):
    iid = fake.pending_interaction(2)
    follow_up = f"/webhooks/{fake.app_id}/itoken-{iid}"
    status, body = await call(http, "POST", follow_up, {"content": "too early"})
    assert (status, body) == (404, {"code": 10015, "message": "Unknown Webhook"})
    await call(
        http,
        "POST",
        f"/interactions/{iid}/itoken-{iid}/callback",
        {"type": rules.DEFERRED_CHANNEL_MESSAGE},
    )
    status, _ = await call(http, "POST", follow_up, {"content": "now"})
    assert status == 200


async def test_only_the_bots_own_messages_can_be_edited(fake, http):
    channel = fake.guilds[0].channels[0]
    theirs = fake.user_message(channel)
    status, body = await call(
        http, "PATCH", f"/channels/{channel}/messages/{theirs['id']}", {"content": "mine now"}
    )
    assert (status, body["code"]) == (403, 50005)
    assert fake.messages[int(theirs["id"])]["content"] == "chatter"


async def test_uploads_above_10_mib_are_refused(fake, http):
    channel = fake.guilds[0].channels[0]
    for size, expected in ((rules.UPLOAD_MAX, 200), (rules.UPLOAD_MAX + 1, 413)):
        form = aiohttp.FormData()
        form.add_field("payload_json", json.dumps({"content": "file"}), content_type=JSON_TYPE)
        form.add_field("files[0]", b"\0" * size, filename="big.bin")
        url = f"https://discord.com/api/v10/channels/{channel}/messages"
        async with http.post(url, data=form) as response:
            assert response.status == expected
            if expected == 413:
                assert (await response.json())["code"] == 40005


# Component interactions: UPDATE_MESSAGE, the 3-s window, no global limit ----------------------


def _button_message(fake: FakeDiscord) -> dict[str, Any]:
    channel = fake.guilds[0].channels[0]
    row = {"type": 1, "components": [{"type": 2, "style": 2, "label": "❤", "custom_id": "x"}]}
    return fake.message(channel, {"embeds": [{"title": "Song"}], "components": [row]})


async def test_update_message_edits_the_message_the_component_is_on(fake, http):
    message = _button_message(fake)
    iid = await fake.click(message, "x", user_id=5)
    row = {"type": 1, "components": [{"type": 2, "style": 2, "label": "❤ 1", "custom_id": "x"}]}
    path = f"/interactions/{iid}/itoken-{iid}/callback"
    status, _ = await call(
        http, "POST", path, {"type": rules.UPDATE_MESSAGE, "data": {"components": [row]}}
    )
    assert status == 200
    stored = fake.messages[int(message["id"])]
    assert stored["components"][0]["components"][0]["label"] == "❤ 1"
    assert stored["embeds"][0]["title"] == "Song"  # the parts the response does not name stay
    assert len(fake.channel_messages[int(message["channel_id"])]) == 1  # no new message


async def test_ephemeral_replies_are_not_in_the_channels_history(fake, http):
    message = _button_message(fake)
    iid = await fake.click(message, "x", user_id=5)
    path = f"/interactions/{iid}/itoken-{iid}/callback"
    reply = {"type": rules.CHANNEL_MESSAGE, "data": {"content": "Liked", "flags": 64}}
    assert (await call(http, "POST", path, reply))[0] == 200
    status, history = await call(http, "GET", f"/channels/{message['channel_id']}/messages")
    assert status == 200
    assert [m["id"] for m in history] == [message["id"]]  # only the message clicked on


async def test_a_first_response_after_3_seconds_is_an_unknown_interaction(fake, http):
    fake.callback_window = 3.0
    message = _button_message(fake)
    late = await fake.click(message, "x")
    fake.interactions[late].created -= 3.5  # as if it had arrived 3.5 s ago
    body = {"type": rules.DEFERRED_UPDATE_MESSAGE}
    status, answer = await call(http, "POST", f"/interactions/{late}/itoken-{late}/callback", body)
    assert (status, answer["code"]) == (404, 10062)
    prompt = await fake.click(message, "x")
    status, _ = await call(http, "POST", f"/interactions/{prompt}/itoken-{prompt}/callback", body)
    assert status == 200


async def test_interaction_responses_are_not_bound_to_the_global_rate_limit(fake, http):
    fake.rate_limits = True
    fake.global_limit = 2
    message = _button_message(fake)
    body = {"type": rules.DEFERRED_UPDATE_MESSAGE}
    for _ in range(5):
        iid = await fake.click(message, "x")
        status, _ = await call(http, "POST", f"/interactions/{iid}/itoken-{iid}/callback", body)
        assert status == 200
    statuses = [
        (await call(http, "GET", f"/channels/{message['channel_id']}"))[0] for _ in range(3)
    ]
    assert statuses == [200, 200, 429]
