"""The fake Discord is as strict as Discord about interactions: each callback rule and each
command sync rule rejects a payload that breaks it (400, 50035 at the field's path), the
callback type must fit the interaction, and an interaction is answered once (40060).
"""

from __future__ import annotations

import pytest

from .support import discord_rules as rules
from .support.discord_http import call
from .support.strict_payloads import (  # noqa: F401
    CHOICE_NAME,
    DESC,
    LOCALE,
    MAX,
    MIN,
    NAME,
    OPTION_DESC,
    ROW0,
    Body,
    appending,
    at,
    choices,
    command,
    commands,
    fake_fixture,
    http_fixture,
    localised,
    modal,
    mutated,
    refused_at,
    setter,
)

pytestmark = pytest.mark.e2e  # every test here runs the fake Discord


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
        http, "POST", f"/interactions/{iid}/itoken-{iid}/callback", mutated(make(), mutate)
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
        "command size 8000",
        setter(
            "0.options",
            [
                {
                    "type": rules.STRING_OPTION,
                    "name": f"o{i}",
                    "description": "d" * 100,
                    "choices": [{"name": "n" * 100, "value": "v" * 100} for _ in range(2)],
                }
                for i in range(20)
            ],
        ),
        "0",
        "APPLICATION_COMMAND_TOO_LARGE",
    ),
    (
        "command size counts each field's longest localization",
        setter(
            "0.options",
            [
                {
                    "type": rules.STRING_OPTION,
                    "name": f"o{i}",
                    "description": "d" * 10,
                    "description_localizations": {"de": "d" * 100},
                    "choices": [
                        {"name": "n" * 10, "name_localizations": {"de": "n" * 100}, "value": "v"}
                        for _ in range(2)
                    ]
                    + [{"name": "n", "value": "v" * 100} for _ in range(2)],
                }
                for i in range(16)
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
        http, "PUT", f"/applications/{fake.app_id}/commands", mutated(commands(), mutate)
    )
    assert status == 400
    assert body["code"] == 50035
    assert at(body["errors"], path) == code
